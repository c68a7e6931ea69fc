import type { Command } from 'commander';
import { environmentAccess, grantEnvironmentAccess } from '../../onboarding/environments.ts';
import { normalizeGuid } from '../../core/ids.ts';
import type { CommandHost } from '../host.ts';
import { limitRows, listOptions, type ListOptions } from '../input.ts';
import { print, printJson, table, terminalWidth, wrap } from '../output.ts';
import { operatorScope, ORGANIZATION_OBJECT_HELP } from '../scope.ts';

/** `vigil environments list --integration <id>` and `vigil environments grant-access --integration <id>`. */
export function registerEnvironments(program: Command, host: CommandHost): void {
  const cmd = program.command('environments').description('Power Platform environments of an integration');
  listOptions(
    cmd
      .command('list')
      .description("The application's System Administrator access per environment, as last verified (`vigil integrations verify` checks again)"),
    100,
  )
    .requiredOption('--integration <integration>', 'integration id or name')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON (the items of GET /api/v1/integrations/{id}/environments)')
    .action(
      host.action(async (rt, opts: ListOptions & { integration: string; organization?: string }) => {
        const { caller, integrationId } = await operatorScope(rt.db, opts);
        const { rows, more } = limitRows(await environmentAccess(rt.db, caller, integrationId!), opts, 100);
        if (opts.json) return printJson(rows);
        if (rows.length === 0) return print(`No environments verified yet: run \`vigil integrations verify ${opts.integration}\`.`);
        const access = (e: (typeof rows)[number]) => (!e.dataverse ? 'no Dataverse' : e.agentsReadable ? 'agents readable' : 'NOT READABLE');
        print(table([['ENVIRONMENT', 'ID', 'ACCESS'], ...rows.map((e) => [e.name ?? '-', e.id, access(e)])], { wide: opts.wide, shrink: [0] }));
        if (more) print(more);
        // Reasons whole, wrapped, below the table: a cut reason is no reason.
        for (const e of rows.filter((x) => x.reason)) print(`  ${wrap(`${e.name ?? e.id}: ${e.reason}`, terminalWidth() - 2, '    ')}`);
      }),
    );
  cmd
    .command('grant-access')
    .description('Make the application a System Administrator application user in every environment with Dataverse')
    .requiredOption('--integration <integration>', 'integration id or name')
    .option('--environment <id...>', 'only these environments')
    .option('--as-admin', 'where addAppUser is refused, sign a platform administrator in (device code) for the Dataverse role assignment')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON (the items of POST /api/v1/integrations/{id}/environments/grant)')
    .action(
      host.action(async (rt, opts: { integration: string; organization?: string; environment?: string[]; asAdmin?: boolean; json?: boolean }) => {
        const { integrationId } = await operatorScope(rt.db, opts);
        const results = await grantEnvironmentAccess(rt, integrationId!, {
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
