import type { Kysely } from 'kysely';
import { DATAVERSE_ACCESS_REASONS } from '../core/remediation.ts';
import { nowIso } from '../store/db.ts';
import { applyEvaluation, type ResultInput } from '../store/repositories/findings.ts';
import { isEstateStream, STREAM_NAMES, type EstateStreamName } from '../core/inventory.ts';
import { listAgents, listAllUsers, listDataverseUsers, listEnvironments, listEstateObjects } from '../store/repositories/inventory.ts';
import { latestFinishedRun, listCheckpoints } from '../store/repositories/runs.ts';
import type { Database, IntegrationsTable } from '../store/schema.ts';
import { deliverAfterCommit, enqueueFindingEvents, type Sinks } from '../sinks/index.ts';
import type { Logger } from '../platform/log/index.ts';
import { loadChecks } from './loader.ts';
import type { CheckContext, Coverage, CoverageGap, EstateRow, LoadedCheck } from './types.ts';

/**
 * Evaluates every check for one integration against the store and moves findings along their lifecycle.
 */

/** The integration fields evaluation needs. */
export type IntegrationRef = Pick<IntegrationsTable, 'id' | 'tenant_id' | 'mode' | 'secret_expires_at' | 'credential_state' | 'credential_error'>;

/** Plain-language reasons for upstream codes that make a slice unreadable. */
const GAP_REASONS: Record<string, string> = {
  ...DATAVERSE_ACCESS_REASONS,
  Forbidden: 'The application is not registered as a Power Platform admin management application (run `vigil integrations verify` for the steps).',
  Authorization_RequestDenied: 'Microsoft Graph refused the read: an application permission is missing.',
  DATAVERSE_URL_NOT_ALLOWED: 'The Dataverse URL is outside the configured cloud; no token was sent.',
};

/** Builds the coverage view of a run from its checkpoints. */
export function coverageFromCheckpoints(runId: string | null, checkpoints: { stream: string; slice_key: string; status: string; error_code: string | null; error_message: string | null }[]): Coverage {
  const gaps = new Map<string, CoverageGap>();
  for (const c of checkpoints) {
    if (c.status === 'error') {
      const code = c.error_code ?? 'ERROR';
      gaps.set(`${c.stream}\u0000${c.slice_key}`, { code, message: GAP_REASONS[code] ? `${GAP_REASONS[code]} (${c.error_message ?? code})` : (c.error_message ?? code) });
    } else if (c.status !== 'done') {
      gaps.set(`${c.stream}\u0000${c.slice_key}`, { code: 'INCOMPLETE', message: 'The collection of this part did not finish.' });
    }
  }
  const never: CoverageGap = { code: 'NOT_COLLECTED', message: 'The integration has not been collected yet.' };
  return {
    runId,
    streamGap: (stream) => (runId === null ? never : (gaps.get(`${stream}\u0000*`) ?? null)),
    sliceGap: (stream, key) => (runId === null ? never : (gaps.get(`${stream}\u0000*`) ?? gaps.get(`${stream}\u0000${key}`) ?? null)),
    sliceGaps: (stream) =>
      [...gaps.entries()].filter(([k]) => k.startsWith(`${stream}\u0000`) && k !== `${stream}\u0000*`).map(([k, g]) => ({ ...g, sliceKey: k.slice(stream.length + 1) })),
  };
}

/** Loads the check context of an integration from the store. */
export async function buildContext(db: Kysely<Database>, integration: IntegrationRef, now = new Date()): Promise<CheckContext> {
  const run = await latestFinishedRun(db, integration.id);
  const coverage = coverageFromCheckpoints(run?.id ?? null, run ? await listCheckpoints(db, run.id) : []);
  const [environments, agents, dvUsers] = await Promise.all([listEnvironments(db, integration.id), listAgents(db, integration.id), listDataverseUsers(db, integration.id)]);
  const dataverseUsers = new Map(dvUsers.map((u) => [`${u.environment_id}/${u.id}`, u]));
  const directoryUsers = new Map((await listAllUsers(db, integration.id)).map((u) => [u.id, u]));
  const estate = new Map<string, EstateRow<unknown>[]>();
  for (const name of STREAM_NAMES) if (isEstateStream(name)) estate.set(name, await listEstateObjects(db, integration.id, name));
  return {
    integrationId: integration.id,
    tenantId: integration.tenant_id,
    integration: { mode: integration.mode, secretExpiresAt: integration.secret_expires_at, credentialState: integration.credential_state, credentialError: integration.credential_error },
    now,
    coverage,
    inventory: { environments, agents, dataverseUsers, directoryUsers, estate: <S extends EstateStreamName>(stream: S) => (estate.get(stream) ?? []) as never },
  };
}

/** Result of {@link evaluateIntegration}. */
export interface EvaluationSummary {
  results: number;
  byStatus: Record<'pass' | 'fail' | 'not_evaluated', number>;
  findingsOpened: number;
  findingsOpen: number;
  findingsResolved: number;
}

/**
 * Runs every check (or the given ones) for an integration, stores the results and updates findings.
 * A check that throws yields one `not_evaluated` result naming the error instead of aborting the others.
 */
export async function evaluateIntegration(
  db: Kysely<Database>,
  integration: IntegrationRef,
  options: { checks?: LoadedCheck[]; now?: Date; /** SIEM sinks: lifecycle steps are queued in the same transaction, delivered after commit. */ sinks?: Sinks | undefined; logger?: Logger } = {},
): Promise<EvaluationSummary> {
  const checks = options.checks ?? (await loadChecks());
  const ctx = await buildContext(db, integration, options.now);
  const inputs: ResultInput[] = [];
  for (const c of checks) {
    let results;
    try {
      results = c.run(ctx);
    } catch (e) {
      results = [{ resourceType: 'tenant' as const, resourceId: integration.tenant_id, resourceName: null, status: 'not_evaluated' as const, reason: `Check failed: ${(e as Error).message}` }];
    }
    for (const r of results) inputs.push({ checkId: c.metadata.id, severity: c.metadata.severity, ...r });
  }
  const byStatus = { pass: 0, fail: 0, not_evaluated: 0 };
  for (const r of inputs) byStatus[r.status]++;
  const at = nowIso();
  const sinks = options.sinks;
  const f = await db.transaction().execute(async (trx) => {
    const counts = await applyEvaluation(trx, integration.id, ctx.coverage.runId, inputs, at);
    if (sinks) await enqueueFindingEvents(trx, integration.id, at, new Map(checks.map((c) => [c.metadata.id, c.metadata])), { sinks: sinks.names, product: sinks.product, tenantId: integration.tenant_id });
    return counts;
  });
  await deliverAfterCommit(sinks, db, options.logger);
  return { results: inputs.length, byStatus, findingsOpened: f.opened, findingsOpen: f.open, findingsResolved: f.resolved };
}
