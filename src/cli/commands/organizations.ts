import type { Command } from 'commander';
import { createOrganization, listOrganizations } from '../../access/index.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson, table } from '../output.ts';

/**
 * `vigil organizations list|create`: the customers of a service provider. Each organization's users and API keys see
 * only its integrations. Organizations are created here only (never implicitly by a mistyped `--organization`);
 * `Default` always exists and holds what is added without `--organization`.
 */
export function registerOrganizations(program: Command, host: CommandHost): void {
  const orgs = program.command('organizations').description('Organizations (customers): list them, create one; integrations, users and API keys belong to one');
  orgs
    .command('list')
    .description('List organizations with how many integrations, portal users and active API keys each holds')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { json?: boolean }) => {
        const list = await listOrganizations(rt.db);
        if (opts.json) return printJson(list);
        print(
          table([
            ['NAME', 'INTEGRATIONS', 'USERS', 'API KEYS', 'CREATED', 'ID'],
            ...list.map((o) => [o.name, String(o.integrations), String(o.users), String(o.apiKeys), o.createdAt.slice(0, 10), o.id]),
          ]),
        );
      }),
    );
  orgs
    .command('create <name>')
    .description('Create an organization; then give it integrations (`integrations add --organization`), users and API keys')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample:\n  vigil organizations create Contoso\n  vigil users add --email ann@contoso.com --role admin --organization Contoso --password-stdin\n  vigil integrations add --mode customer-app --organization Contoso --tenant-id <guid> --client-id <guid> --client-secret-env VIGIL_CLIENT_SECRET',
    )
    .action(
      host.action(async (rt, name: string, opts: { json?: boolean }) => {
        const org = await createOrganization(rt.db, name);
        if (opts.json) return printJson({ id: org.id, name: org.name, createdAt: org.created_at });
        print(
          `Created organization ${org.name} (${org.id}).`,
          `Next: vigil users add --organization ${JSON.stringify(org.name)} …, vigil integrations add --organization ${JSON.stringify(org.name)} …`,
        );
      }),
    );
}
