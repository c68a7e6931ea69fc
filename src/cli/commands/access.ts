import type { Command } from 'commander';
import {
  addPortalUser,
  createApiKey,
  findPortalUser,
  getOrganizationByName,
  listApiKeys,
  listPortalUsers,
  revokeApiKey,
  updatePortalUser,
} from '../../access/index.ts';
import { invalidInput } from '../../core/errors.ts';
import type { CommandHost } from '../host.ts';
import { limitRows, listOptions, readStdin, type ListOptions } from '../input.ts';
import { print, printJson, table } from '../output.ts';

/**
 * `vigil users` and `vigil api-keys`: bootstrap access to `vigil serve` from the operator's shell (the first admin of
 * an organization, keys for SIEM and automation). Passwords come from standard input; a key is printed once.
 */
export function registerAccess(program: Command, host: CommandHost): void {
  const users = program
    .command('users')
    .description('Portal users: add one (the first admin of an organization), list them, change a role, disable or enable one');
  users
    .command('add')
    .description('Add a portal user; the password is read from standard input (12 to 256 characters)')
    .requiredOption('--email <address>', 'the address the person signs in with')
    .option('--role <role>', 'admin (manage integrations, users, API keys) or viewer (read)', 'viewer')
    .option('--organization <name>', 'the customer organization (must exist: `vigil organizations create <name>`)', 'Default')
    .option('--name <display name>', 'shown in the portal')
    .option('--password-stdin', 'read the password from standard input (required: never pass it as an argument)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExample (after `vigil organizations create Contoso`): printf %s "$PW" | vigil users add --email ann@contoso.com --role admin --organization Contoso --password-stdin',
    )
    .action(
      host.action(async (rt, opts: { email: string; role: string; organization: string; name?: string; passwordStdin?: boolean; json?: boolean }) => {
        if (!opts.passwordStdin)
          throw invalidInput(
            '--password-stdin',
            'The password is read from standard input.',
            'Pipe it: printf %s "$PW" | vigil users add --email … --password-stdin',
          );
        const password = await readStdin();
        const org = await getOrganizationByName(rt.db, opts.organization);
        const user = await addPortalUser(rt.db, { organizationId: org.id, email: opts.email, password, role: opts.role, displayName: opts.name });
        if (opts.json) return printJson({ ...user, organization: org.name });
        print(`Added ${user.role} ${user.email} to organization ${org.name} (${user.id}). They sign in at the portal of \`vigil serve\`.`);
      }),
    );
  listOptions(users.command('list').description('List the portal users of an organization'), 100)
    .option('--organization <name>', 'the customer organization (must exist)', 'Default')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions & { organization: string }) => {
        const org = await getOrganizationByName(rt.db, opts.organization);
        const { rows: list, more } = limitRows(await listPortalUsers(rt.db, org.id), opts, 100);
        if (opts.json) return printJson(list);
        print(
          table(
            [
              ['EMAIL', 'ROLE', 'STATE', 'LAST SIGN-IN', 'LOCKED UNTIL', 'ID'],
              ...list.map((u) => [u.email, u.role, u.disabled ? 'disabled' : 'active', u.lastLoginAt ?? 'never', u.lockedUntil ?? '', u.id]),
            ],
            { wide: opts.wide },
          ),
        );
        if (more) print(more);
      }),
    );

  users
    .command('set <user>')
    .description("Change a portal user's role, or disable or enable the account (by address or id); a disabled user's sessions end at once")
    .option('--role <role>', 'admin (manage integrations, users, API keys) or viewer (read)')
    .option('--disable', 'disable the account: it cannot sign in, its sessions end, its history stays')
    .option('--enable', 'enable a disabled account again')
    .option('--organization <name>', 'the customer organization (must exist)', 'Default')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nThe organization always keeps one enabled admin: make another user admin before demoting or disabling the last one.\nExample: vigil users set ann@contoso.com --role viewer --organization Contoso',
    )
    .action(
      host.action(async (rt, who: string, opts: { role?: string; disable?: boolean; enable?: boolean; organization: string; json?: boolean }) => {
        if (opts.disable && opts.enable)
          throw invalidInput('--disable', 'Give --disable or --enable, not both.', 'Run the command once for the state you want.');
        const org = await getOrganizationByName(rt.db, opts.organization);
        const user = await findPortalUser(rt.db, org.id, who);
        const disabled = opts.disable ? true : opts.enable ? false : undefined;
        const updated = await updatePortalUser(rt.db, org.id, user.id, { role: opts.role, disabled });
        if (opts.json) return printJson({ ...updated, organization: org.name });
        print(`${updated.email} in organization ${org.name}: ${updated.role}, ${updated.disabled ? 'disabled (sessions ended)' : 'active'}.`);
      }),
    );

  const keys = program.command('api-keys').description('API keys for automation and SIEMs: create (shown once), list, revoke');
  keys
    .command('create')
    .description('Create an API key; it is printed once and stored only as a hash. Send it as `Authorization: Bearer <key>`')
    .requiredOption('--name <name>', 'what uses the key, e.g. sentinel-connector')
    .option('--role <role>', 'viewer (read) or admin (manage)', 'viewer')
    .option('--organization <name>', 'the customer organization (must exist: `vigil organizations create <name>`)', 'Default')
    .option('--expires <date>', 'ISO 8601 date after which the key stops working (default: until revoked)')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { name: string; role: string; organization: string; expires?: string; json?: boolean }) => {
        const org = await getOrganizationByName(rt.db, opts.organization);
        const { key, apiKey } = await createApiKey(rt.db, {
          organizationId: org.id,
          name: opts.name,
          role: opts.role,
          expiresAt: opts.expires ?? null,
          createdBy: 'cli',
        });
        if (opts.json) return printJson({ key, ...apiKey });
        print(
          `API key ${apiKey.id} (${apiKey.role}, organization ${org.name}):`,
          '',
          `  ${key}`,
          '',
          'Store it now: it is not shown again. Revoke with `vigil api-keys revoke ' + apiKey.id + '`.',
        );
      }),
    );
  listOptions(keys.command('list').description('List the API keys of an organization (never the keys themselves)'), 100)
    .option('--organization <name>', 'the customer organization (must exist)', 'Default')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions & { organization: string }) => {
        const org = await getOrganizationByName(rt.db, opts.organization);
        const { rows: list, more } = limitRows(await listApiKeys(rt.db, org.id), opts, 100);
        if (opts.json) return printJson(list);
        print(
          table(
            [
              ['ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED'],
              ...list.map((k) => [k.id, k.name, k.role, k.createdAt, k.lastUsedAt ?? 'never', k.expiresAt ?? '', k.revokedAt ?? '']),
            ],
            { wide: opts.wide },
          ),
        );
        if (more) print(more);
      }),
    );
  keys
    .command('revoke <id>')
    .description('Revoke an API key: it stops working at once')
    .option('--organization <name>', 'the customer organization (must exist)', 'Default')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, id: string, opts: { organization: string; json?: boolean }) => {
        const org = await getOrganizationByName(rt.db, opts.organization);
        await revokeApiKey(rt.db, org.id, id);
        if (opts.json) return printJson({ id, revoked: true });
        print(`API key ${id} revoked.`);
      }),
    );
}
