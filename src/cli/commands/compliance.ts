import type { Command } from 'commander';
import { FRAMEWORK_IDS } from '../../reporting/catalogue.ts';
import { complianceView } from '../../reporting/compliance.ts';
import type { CommandHost } from '../host.ts';
import { operatorScope, ORGANIZATION_FILTER_HELP } from '../scope.ts';
import { print, printJson, table } from '../output.ts';

/**
 * `vigil compliance [integration]`: per framework and peer baseline, each item, what covers it and its status. The
 * same view as `GET /api/v1/compliance` (`--json` prints it whole).
 */
export function registerCompliance(program: Command, host: CommandHost): void {
  program
    .command('compliance [integration]')
    .description(
      'Compliance view: per framework (OWASP LLM 2025, MITRE ATLAS, MITRE ATT&CK) and peer baseline (ScubaGear, Maester, Sentinel), each item with the checks and detections that cover it and its status (latest results, open alerts), and what is not covered and why',
    )
    .option('--framework <id>', `only this framework or baseline: ${FRAMEWORK_IDS.join(', ')}`)
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, integration: string | undefined, opts: { framework?: string; organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration, organization: opts.organization });
        const view = await complianceView(rt.db, caller, { integrationId, framework: opts.framework });
        if (opts.json) return printJson(view);
        for (const fw of view.frameworks) {
          print(`${fw.name}: ${fw.covered} of ${fw.items.length} items covered`);
          print(
            table(
              [
                ['  ITEM', 'STATE', 'PASS', 'FAIL', 'N/E', 'ALERTS', 'COVERED BY / WHY NOT'],
                ...fw.items.map((i) => [
                  `  ${i.id}`,
                  i.state,
                  String(i.pass),
                  String(i.fail),
                  String(i.notEvaluated),
                  String(i.openAlerts),
                  i.covers.length > 0 ? i.covers.map((c) => c.id).join(', ') : (i.notCoveredReason ?? 'not covered'),
                ]),
              ],
              { shrink: [6] },
            ),
          );
          print('');
        }
        print(`${view.integrationIds.length} integration(s) counted. N/E: not evaluated.`);
      }),
    );
}
