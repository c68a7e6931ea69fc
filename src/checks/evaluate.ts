import type { Kysely } from 'kysely';
import { describeAction } from '../core/actions.ts';
import { DATAVERSE_ACCESS_REASONS } from '../core/remediation.ts';
import { nowIso } from '../store/db.ts';
import { addCounts, applyCheckResults, beginEvaluation, finishEvaluation, recordPostureDay, type FindingCounts } from '../store/repositories/findings.ts';
import { latestFinishedRun, listCheckpoints } from '../store/repositories/runs.ts';
import type { Database, IntegrationsTable } from '../store/schema.ts';
import { deliverAfterCommit, enqueueFindingEvents, type Sinks } from '../sinks/index.ts';
import type { Logger } from '../platform/log/index.ts';
import { loadChecks } from './loader.ts';
import { guardResults } from './gaps.ts';
import { InventoryCache, inventoryView, type InventorySource } from './inventory.ts';
import type { CheckContext, CheckResult, Coverage, CoverageGap, LoadedCheck } from './types.ts';

/**
 * Evaluates every check for one integration against the store and moves findings along their lifecycle.
 */

/** The integration fields evaluation needs. */
export type IntegrationRef = Pick<IntegrationsTable, 'id' | 'tenant_id' | 'mode' | 'secret_expires_at' | 'credential_state' | 'credential_error'>;

/** Plain-language reasons for upstream codes that make a slice unreadable. */
const GAP_REASONS: Record<string, string> = {
  ...DATAVERSE_ACCESS_REASONS,
  Forbidden: `The application is not registered as a Power Platform admin management application (for the steps, ${describeAction({ do: 'verifyIntegration' })}).`,
  Authorization_RequestDenied: 'Microsoft Graph refused the read: an application permission is missing.',
  FOREIGN_LINK: 'The upstream gave a link off the hosts of the cloud profile; Vigil refused it and sent no token there.',
};

/** Builds the coverage view of a run from its checkpoints. */
export function coverageFromCheckpoints(
  runId: string | null,
  checkpoints: { stream: string; slice_key: string; status: string; error_code: string | null; error_message: string | null }[],
): Coverage {
  const gaps = new Map<string, CoverageGap>();
  for (const c of checkpoints) {
    if (c.status === 'error') {
      const code = c.error_code ?? 'ERROR';
      gaps.set(`${c.stream}\u0000${c.slice_key}`, {
        code,
        message: GAP_REASONS[code] ? `${GAP_REASONS[code]} (${c.error_message ?? code})` : (c.error_message ?? code),
      });
    } else if (c.status !== 'done') {
      gaps.set(`${c.stream}\u0000${c.slice_key}`, { code: 'INCOMPLETE', message: 'The collection of this part did not finish.' });
    }
  }
  // Each stream's errored slices, in checkpoint order, indexed once: checks ask for them per stream they read.
  const byStream = new Map<string, (CoverageGap & { sliceKey: string })[]>();
  for (const [k, g] of gaps) {
    const sep = k.indexOf('\u0000');
    const stream = k.slice(0, sep);
    const sliceKey = k.slice(sep + 1);
    if (sliceKey === '*') continue;
    const list = byStream.get(stream);
    if (list) list.push({ ...g, sliceKey });
    else byStream.set(stream, [{ ...g, sliceKey }]);
  }
  const never: CoverageGap = { code: 'NOT_COLLECTED', message: 'The integration has not been collected yet.' };
  return {
    runId,
    streamGap: (stream) => (runId === null ? never : (gaps.get(`${stream}\u0000*`) ?? null)),
    sliceGap: (stream, key) => (runId === null ? never : (gaps.get(`${stream}\u0000*`) ?? gaps.get(`${stream}\u0000${key}`) ?? null)),
    sliceGaps: (stream) => (byStream.get(stream) ?? []).map((g) => ({ ...g })),
  };
}

/** The context every check of an evaluation shares (all but the inventory). */
export function integrationContext(integration: IntegrationRef, now: Date, coverage: Coverage): Omit<CheckContext, 'inventory'> {
  return {
    integrationId: integration.id,
    tenantId: integration.tenant_id,
    integration: {
      mode: integration.mode,
      secretExpiresAt: integration.secret_expires_at,
      credentialState: integration.credential_state,
      credentialError: integration.credential_error,
    },
    now,
    coverage,
  };
}

/**
 * Runs one check on the inventory loaded for it and holds its results to the engine's gap rule
 * ({@link guardResults}). A check that throws yields one tenant-wide `not_evaluated` result naming the error.
 *
 * @param source the inventory source with the check's `reads` loaded.
 */
export async function runCheck(check: LoadedCheck, base: Omit<CheckContext, 'inventory'>, source: InventorySource, logger?: Logger): Promise<CheckResult[]> {
  try {
    return guardResults(check.metadata, base, source, await check.run({ ...base, inventory: inventoryView(source, check.metadata) }));
  } catch (e) {
    logger?.warn({ integrationId: base.integrationId, checkId: check.metadata.id, err: (e as Error).message }, 'check failed; its result is not_evaluated');
    return [
      { resourceType: 'tenant', resourceId: base.tenantId, resourceName: null, status: 'not_evaluated', reason: `Check failed: ${(e as Error).message}` },
    ];
  }
}

/** Result of {@link evaluateIntegration}. */
export interface EvaluationSummary {
  results: number;
  byStatus: Record<'pass' | 'fail' | 'not_evaluated', number>;
  findingsOpened: number;
  findingsOpen: number;
  findingsResolved: number;
  /** Wall time of the evaluation (every check, its results and findings written), milliseconds. */
  durationMs: number;
}

/**
 * Runs every check (or the given ones) for an integration, stores the results and updates findings, in one
 * transaction: a crash leaves the previous evaluation whole. Checks run one at a time; each gets the inventory its
 * metadata declares (loaded before it runs, dropped when no later check reads it; large streams paged) and its
 * results are written before the next one runs, so memory holds one check's results and the inventory still needed —
 * not the tenant. A check that throws yields one `not_evaluated` result naming the error instead of aborting the others.
 * Every check's results are held against the gaps of what it reads ({@link guardResults}): a resource that depends on
 * an errored or missing slice is never passed (nor failed), and a check always returns at least one result.
 */
export async function evaluateIntegration(
  db: Kysely<Database>,
  integration: IntegrationRef,
  options: {
    checks?: LoadedCheck[];
    now?: Date;
    /** SIEM sinks: lifecycle steps are queued in the same transaction, delivered after commit. */
    sinks?: Sinks | undefined;
    logger?: Logger;
    /** Told after each check is evaluated: checks done of the total (progress display). */
    onCheck?: (done: number, total: number) => void;
  } = {},
): Promise<EvaluationSummary> {
  const started = performance.now();
  const checks = options.checks ?? (await loadChecks());
  const now = options.now ?? new Date();
  const at = nowIso();
  const sinks = options.sinks;
  const byStatus = { pass: 0, fail: 0, not_evaluated: 0 };
  let results = 0;
  const counts: FindingCounts = { opened: 0, open: 0, resolved: 0 };
  await db.transaction().execute(async (trx) => {
    const run = await latestFinishedRun(trx, integration.id);
    const base = integrationContext(integration, now, coverageFromCheckpoints(run?.id ?? null, run ? await listCheckpoints(trx, run.id) : []));
    const cache = new InventoryCache(
      trx,
      integration.id,
      checks.map((c) => c.metadata),
    );
    await beginEvaluation(trx, integration.id, at);
    let done = 0;
    options.onCheck?.(0, checks.length);
    for (const c of checks) {
      await cache.load(c.metadata.reads);
      const out = await runCheck(c, base, cache.source, options.logger);
      cache.release(c.metadata.reads);
      for (const r of out) byStatus[r.status]++;
      results += out.length;
      addCounts(
        counts,
        await applyCheckResults(
          trx,
          integration.id,
          base.coverage.runId,
          c.metadata.id,
          out.map((r) => ({ checkId: c.metadata.id, severity: c.metadata.severity, ...r })),
          at,
        ),
      );
      options.onCheck?.(++done, checks.length);
    }
    addCounts(
      counts,
      await finishEvaluation(
        trx,
        integration.id,
        checks.map((c) => c.metadata.id),
        at,
      ),
    );
    await recordPostureDay(trx, integration.id, at);
    if (sinks)
      await enqueueFindingEvents(trx, integration.id, at, new Map(checks.map((c) => [c.metadata.id, c.metadata])), {
        sinks: sinks.names,
        product: sinks.product,
        tenantId: integration.tenant_id,
      });
  });
  await deliverAfterCommit(sinks, db, options.logger);
  return {
    results,
    byStatus,
    findingsOpened: counts.opened,
    findingsOpen: counts.open,
    findingsResolved: counts.resolved,
    durationMs: Math.round(performance.now() - started),
  };
}
