import type { Command } from 'commander';
import { grantEnvironmentAccess } from '../../onboarding/environments.ts';
import { getIntegration } from '../../onboarding/integrations.ts';
import { acquireAdminToken } from '../../platform/identity/admin.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil environments grant-access --integration <id>`. */
export function registerEnvironments(program: Command, host: CommandHost): void {
  const cmd = program.command('environments').description('Power Platform environments of an integration');
  cmd
    .command('grant-access')
    .description('Make the application a System Administrator application user in every environment with Dataverse')
    .requiredOption('--integration <integration>', 'integration id or name')
    .option('--environment <id...>', 'only these environments')
    .option('--as-admin', 'where addAppUser is refused, sign a platform administrator in (device code) for the Dataverse role assignment')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { integration: string; environment?: string[]; asAdmin?: boolean; json?: boolean }) => {
        let adminToken: ((resource: string) => Promise<string>) | undefined;
        if (opts.asAdmin) {
          const row = await getIntegration(rt.db, opts.integration);
          // One sign-in per environment (each Dataverse is its own resource), reused for every call to it.
          const cache = new Map<string, Promise<string>>();
          const signIn = async (resource: string) =>
            (await acquireAdminToken({ cloud: rt.cloud, http: rt.http, tenantId: row.tenant_id, clientId: rt.config.adminSignIn.clientId, scope: `${resource}/.default`, signIn: { kind: 'device-code', prompt: (m) => process.stderr.write(`${m}\n`) } })).accessToken;
          adminToken = (resource) => {
            if (!cache.has(resource)) cache.set(resource, signIn(resource));
            return cache.get(resource)!;
          };
        }
        const results = await grantEnvironmentAccess(rt, opts.integration, { environmentIds: opts.environment, adminToken });
        if (opts.json) return printJson(results);
        print(table([['ENVIRONMENT', 'RESULT', 'DETAIL'], ...results.map((r) => [r.name ?? r.environmentId, r.result + (r.via ? ` (${r.via})` : ''), r.reason ? `${r.reason} — fix: ${r.fix}` : ''])]));
      }),
    );
}
