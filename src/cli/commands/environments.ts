import type { Command } from 'commander';
import { grantEnvironmentAccess } from '../../onboarding/environments.ts';
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
        const results = await grantEnvironmentAccess(rt, opts.integration, {
          environmentIds: opts.environment,
          adminSignIn: opts.asAdmin ? { prompt: (m) => process.stderr.write(`${m}\n`) } : undefined,
        });
        if (opts.json) return printJson(results);
        print(table([['ENVIRONMENT', 'RESULT', 'DETAIL'], ...results.map((r) => [r.name ?? r.environmentId, r.result + (r.via ? ` (${r.via})` : ''), r.reason ? `${r.reason} — fix: ${r.fix}` : ''])]));
      }),
    );
}
