import type { Command } from 'commander';
import { getIntegration, secretExpiryWarning } from '../../integration/index.ts';
import { collectAndEvaluate, type CollectAndEvaluateOptions } from '../../sync/run.ts';
import type { CommandHost } from '../host.ts';
import { killAfterPages } from '../killhook.ts';
import { shortIds } from '../../core/ids.ts';
import { allPages, listOptions, parseLimit, type ListOptions } from '../input.ts';
import { operatorScope, ORGANIZATION_OBJECT_HELP } from '../scope.ts';
import { EXIT, print, printJson, table, terminalWidth } from '../output.ts';
import { actionOf } from '../flags.ts';
import { createProgress, silentProgress } from '../progress.ts';
import { groupRunErrors, renderErrorGroups } from '../run-errors.ts';

// Reporting (with the check loader's schemas and the CSV exporter) and onboarding (with the API contract's schemas and
// the OIDC client) are loaded when used: after the collection, or for an environment grant. Loaded at start-up they
// stayed in the heap through the whole collection, and V8 lets the old generation grow to a multiple of what stays
// (issue 18: peak memory of `vigil collect` at 50,000 users).
const reporting = () => import('../../reporting/index.ts');
const onboarding = () => import('../../onboarding/integrations.ts');

/**
 * The automatic environment grant of `collect` (VIGIL_AUTO_GRANT_ACCESS), its module loaded only when a run found
 * an environment to grant.
 */
function lazyGrantAccess(rt: Parameters<typeof collectAndEvaluate>[0], enabled: boolean): CollectAndEvaluateOptions['grantAccess'] {
  if (!enabled) return undefined;
  return async (integrationId, errors, signal) => (await import('../../onboarding/environments.ts')).autoGrantAccess(rt, true)!(integrationId, errors, signal);
}

/** `vigil collect <integration>` and `vigil runs <integration>`. */
export function registerCollect(program: Command, host: CommandHost): void {
  program
    .command('collect <integration>')
    .description('Collect an integration (resuming an interrupted run), then evaluate the checks')
    .option('--no-checks', 'collect only')
    .option(
      '--full',
      'read everything from the start: every stream, also those whose last complete read is within their refresh interval, and users, groups, memberships and Power BI workspaces in full instead of from their delta links',
    )
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { checks: boolean; full?: boolean; organization?: string; json?: boolean }) => {
        const integration = (await operatorScope(rt.db, { integration: named, organization: opts.organization })).integrationId!;
        const progress = opts.json ? silentProgress : createProgress();
        const {
          run: result,
          grants,
          evaluation,
        } = await collectAndEvaluate(rt, integration, {
          onProgress: (p) => progress.collect(p),
          onCheck: (done, total) => progress.evaluate(done, total),
          grantAccess: lazyGrantAccess(rt, rt.config.autoGrantAccess),
          evaluate: opts.checks,
          full: opts.full === true,
          afterPage: killAfterPages(rt.config.testKillAfterPages),
        }).finally(() => progress.done());
        const row = await getIntegration(rt.db, integration);
        if (opts.json) {
          // The run as the API shows it (GET /api/v1/runs/{id}), and what only this collection knows.
          const run = await (await reporting()).runDetail(rt.db, (await operatorScope(rt.db, {})).caller, result.runId);
          return printJson({ run, resumed: result.resumed, markedDeleted: result.markedDeleted, evaluation, grants });
        }
        print(
          `Run ${result.runId}: ${result.status}${result.resumed ? ' (resumed)' : ''} in ${(result.durationMs / 1000).toFixed(1)} s`,
          table([
            ['STREAM', 'RECORDS', 'SLICES', 'ERRORED'],
            ...Object.entries(result.streams).map(([s, o]) => [
              s,
              o.reusedFrom ? `reused (read ${o.reusedFrom})` : String(o.records),
              String(o.slices),
              String(o.erroredSlices),
            ]),
          ]),
        );
        if (result.errors.length) {
          const { caller } = await operatorScope(rt.db, {});
          const { listInventory } = await reporting();
          const listed = await allPages((page) => listInventory(rt.db, caller, 'environments', { integrationId: row.id, ...page }));
          const environments = new Map(listed.map((e) => [e.id, e.name]));
          print(
            ...renderErrorGroups(groupRunErrors(result.errors, environments), {
              verbose: Boolean(program.opts<{ verbose?: boolean }>().verbose),
              width: terminalWidth(),
            }),
          );
          print(`  (each errored slice with its upstream request: vigil runs ${row.name} --json)`);
        }
        if (evaluation)
          print(
            `Checks: ${evaluation.byStatus.fail} failed, ${evaluation.byStatus.pass} passed, ${evaluation.byStatus.not_evaluated} not evaluated; ${evaluation.findingsOpen} open findings.`,
          );
        for (const g of grants)
          print(`  access ${g.result} in environment ${g.name ?? g.environmentId}${g.reason ? `: ${g.reason}` : ' (collected from the next run)'}`);
        const warning = secretExpiryWarning((await onboarding()).toView(row), actionOf);
        if (warning) print(`warning: ${warning}`);
        if (result.status === 'failed') process.exitCode = EXIT.upstream;
      }),
    );

  listOptions(program.command('runs <integration>').description('List the collection runs of an integration, newest first'), 20)
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, integration: string, opts: ListOptions & { organization?: string }) => {
        const limit = parseLimit(opts.limit, 20);
        const { caller, integrationId } = await operatorScope(rt.db, { integration, organization: opts.organization });
        const runs = await (await reporting()).listIntegrationRuns(rt.db, caller, integrationId!, limit);
        if (opts.json) return printJson(runs);
        const short = opts.wide ? undefined : shortIds(runs.map((r) => r.id));
        print(
          table(
            [
              ['RUN', 'STATUS', 'STARTED', 'SECONDS', 'ERRORS'],
              ...runs.map((r) => [
                short?.get(r.id) ?? r.id,
                r.status,
                r.startedAt,
                r.durationMs === null ? '-' : (r.durationMs / 1000).toFixed(1),
                String(r.errors?.length ?? 0),
              ]),
            ],
            { wide: opts.wide },
          ),
        );
      }),
    );
}
