import type { Command } from 'commander';
import { grantEnvironmentAccess } from '../../onboarding/environments.ts';
import { normalizeGuid } from '../../core/ids.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson, table, terminalWidth, wrap } from '../output.ts';

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
          // Environment names are GUIDs (the default one `Default-<tenant GUID>`): pasted forms are normalised.
          environmentIds: opts.environment?.map((e) => (/^default-/i.test(e) ? `Default-${normalizeGuid(e.slice(8))}` : normalizeGuid(e))),
          adminSignIn: opts.asAdmin ? { prompt: (m) => process.stderr.write(`${m}\n`) } : undefined,
        });
        if (opts.json) return printJson(results);
        print(table([['ENVIRONMENT', 'RESULT'], ...results.map((r) => [r.name ?? r.environmentId, r.result + (r.via ? ` (${r.via})` : '')])]));
        // Reasons and fixes whole, wrapped, below the table: a cut fix is no fix.
        for (const r of results.filter((x) => x.reason)) {
          print(`  ${wrap(`${r.name ?? r.environmentId}: ${r.reason}`, terminalWidth() - 2, '    ')}`);
          if (r.fix) print(`    fix: ${wrap(r.fix, terminalWidth() - 9, '         ')}`);
        }
      }),
    );
}
