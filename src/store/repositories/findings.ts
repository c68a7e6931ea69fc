import { newId } from '../../core/ids.ts';
import type { CheckStatus, Severity } from '../../core/types.ts';
import type { Executor } from '../db.ts';
import type { CheckResultsTable, FindingHistoryTable, FindingsTable, FindingSuppressionsTable } from '../schema.ts';

/** Check results (the latest evaluation per resource) and findings (failures with a lifecycle). */
export type CheckResultRow = CheckResultsTable;
type FindingRow = FindingsTable;

/** One evaluated result to store. */
export interface ResultInput {
  checkId: string;
  severity: Severity;
  resourceType: string;
  resourceId: string;
  resourceName: string | null;
  status: CheckStatus;
  reason: string | null;
  detail?: Record<string, unknown>;
}

/** Counts of findings moved by an evaluation (or part of one). */
export interface FindingCounts {
  /** Findings opened or reopened. */
  opened: number;
  /** Findings open after the evaluation (failing resources). */
  open: number;
  resolved: number;
}

/**
 * Replaces the integration's check results with a new evaluation and moves findings along their lifecycle:
 * a failing resource opens a finding (or refreshes `last_seen_at`, reopening a resolved one); an open finding whose
 * resource now passes — or no longer exists — is resolved. A `not_evaluated` result leaves its finding as it was:
 * not seeing is not passing. The evaluation engine calls the three steps itself, one check at a time
 * ({@link beginEvaluation}, {@link applyCheckResults}, {@link finishEvaluation}); this is them in one call.
 *
 * @returns how many findings were opened, are open and were resolved.
 */
export async function applyEvaluation(db: Executor, integrationId: string, runId: string | null, results: ResultInput[], at: string): Promise<FindingCounts> {
  await beginEvaluation(db, integrationId, at);
  const byCheck = new Map<string, ResultInput[]>();
  for (const r of results) {
    const list = byCheck.get(r.checkId);
    if (list) list.push(r);
    else byCheck.set(r.checkId, [r]);
  }
  const total: FindingCounts = { opened: 0, open: 0, resolved: 0 };
  for (const [checkId, rs] of byCheck) addCounts(total, await applyCheckResults(db, integrationId, runId, checkId, rs, at));
  addCounts(total, await finishEvaluation(db, integrationId, [...byCheck.keys()], at));
  return total;
}

/** Adds `b` into `a`. */
export function addCounts(a: FindingCounts, b: FindingCounts): void {
  a.opened += b.opened;
  a.open += b.open;
  a.resolved += b.resolved;
}

/** First step of an evaluation: suppressions past their expiry end (recorded in the finding's history). */
export async function beginEvaluation(db: Executor, integrationId: string, at: string): Promise<void> {
  await expireSuppressions(db, integrationId, at);
}

/**
 * Stores one check's results in place of its previous ones and moves its findings along (see {@link applyEvaluation}):
 * a finding of this check whose resource is absent from `results` is resolved (the resource is gone or out of scope).
 */
export async function applyCheckResults(
  db: Executor,
  integrationId: string,
  runId: string | null,
  checkId: string,
  results: ResultInput[],
  at: string,
): Promise<FindingCounts> {
  await db.deleteFrom('check_results').where('integration_id', '=', integrationId).where('check_id', '=', checkId).execute();
  for (let i = 0; i < results.length; i += 200) {
    const rows: CheckResultRow[] = results.slice(i, i + 200).map((r) => ({
      integration_id: integrationId,
      check_id: checkId,
      resource_type: r.resourceType,
      resource_id: r.resourceId,
      resource_name: r.resourceName,
      status: r.status,
      reason: r.reason,
      run_id: runId,
      evaluated_at: at,
    }));
    await db.insertInto('check_results').values(rows).execute();
  }

  const existing = await db
    .selectFrom('findings')
    .select(['id', 'resource_id', 'status'])
    .where('integration_id', '=', integrationId)
    .where('check_id', '=', checkId)
    .execute();
  const byResource = new Map(existing.map((f) => [f.resource_id, f]));
  const seen = new Set<string>();
  const counts: FindingCounts = { opened: 0, open: 0, resolved: 0 };
  const writes = new FindingWrites(db, integrationId, at);
  for (const r of results) {
    seen.add(r.resourceId);
    const f = byResource.get(r.resourceId);
    if (r.status === 'fail') {
      counts.open++;
      const id = f?.id ?? newId('fnd');
      if (!f || f.status !== 'open') {
        counts.opened++;
        writes.history(id, f ? 'reopened' : 'opened', { reason: r.reason });
      }
      writes.upsert({
        id,
        integration_id: integrationId,
        check_id: checkId,
        severity: r.severity,
        resource_type: r.resourceType,
        resource_id: r.resourceId,
        resource_name: r.resourceName,
        status: 'open',
        detail: JSON.stringify({ reason: r.reason, ...r.detail }),
        first_seen_at: at,
        last_seen_at: at,
        resolved_at: null,
      });
    } else if (r.status === 'pass' && f && f.status === 'open') {
      counts.resolved++;
      writes.resolve(f.id, r.reason ?? 'the resource passes the check');
    }
  }
  // The resource is gone (deleted upstream) or no longer in the check's scope.
  for (const f of existing) {
    if (f.status === 'open' && !seen.has(f.resource_id)) {
      counts.resolved++;
      writes.resolve(f.id, "the resource no longer exists or is out of the check's scope");
    }
  }
  await writes.flush();
  return counts;
}

/** Rows per statement of {@link FindingWrites}: 12 columns × 400 rows stays under SQLite's and PostgreSQL's bound-parameter limits. */
const WRITE_BATCH = 400;

/**
 * The finding writes of one check's evaluation, gathered and written in a few statements instead of one (or two) per
 * finding: failing findings upserted (inserted, or refreshed and reopened on the `(integration, check, resource)`
 * key), resolved ones updated by id, then their history rows inserted. Written in that order on {@link flush}, so
 * every history row's finding exists.
 */
class FindingWrites {
  private readonly upserts: FindingRow[] = [];
  private readonly resolved: string[] = [];
  private readonly steps: FindingHistoryTable[] = [];

  constructor(
    private readonly db: Executor,
    private readonly integrationId: string,
    private readonly at: string,
  ) {}

  /** A failing resource's finding: inserted as given, or (existing) reopened and refreshed — its id and first sighting kept. */
  upsert(row: FindingRow): void {
    this.upserts.push(row);
  }

  /** An open finding resolved, with the reason recorded in its history. */
  resolve(findingId: string, reason: string): void {
    this.resolved.push(findingId);
    this.history(findingId, 'resolved', { reason });
  }

  /** One step of a finding's history. */
  history(findingId: string, event: FindingEvent, detail: Record<string, unknown>): void {
    this.steps.push({ id: newId('fhe'), finding_id: findingId, at: this.at, event, detail: JSON.stringify(detail) });
  }

  async flush(): Promise<void> {
    for (let i = 0; i < this.upserts.length; i += WRITE_BATCH) {
      await this.db
        .insertInto('findings')
        .values(this.upserts.slice(i, i + WRITE_BATCH))
        .onConflict((oc) =>
          oc.columns(['integration_id', 'check_id', 'resource_id']).doUpdateSet((eb) => ({
            status: 'open',
            last_seen_at: eb.ref('excluded.last_seen_at'),
            resolved_at: null,
            severity: eb.ref('excluded.severity'),
            resource_name: eb.ref('excluded.resource_name'),
            detail: eb.ref('excluded.detail'),
          })),
        )
        .execute();
    }
    for (let i = 0; i < this.resolved.length; i += WRITE_BATCH) {
      await this.db
        .updateTable('findings')
        .set({ status: 'resolved', resolved_at: this.at })
        .where('integration_id', '=', this.integrationId)
        .where('id', 'in', this.resolved.slice(i, i + WRITE_BATCH))
        .execute();
    }
    for (let i = 0; i < this.steps.length; i += WRITE_BATCH)
      await this.db
        .insertInto('finding_history')
        .values(this.steps.slice(i, i + WRITE_BATCH))
        .execute();
  }
}

/**
 * Last step of an evaluation: the results and open findings of checks that were not evaluated this time (removed
 * from the library, or left out of a partial evaluation) are dropped and resolved.
 * @param evaluated ids of the checks this evaluation ran.
 */
export async function finishEvaluation(db: Executor, integrationId: string, evaluated: string[], at: string): Promise<FindingCounts> {
  const counts: FindingCounts = { opened: 0, open: 0, resolved: 0 };
  const ran = new Set(evaluated);
  const stale = (await db.selectFrom('check_results').select('check_id').distinct().where('integration_id', '=', integrationId).execute()).filter(
    (r) => !ran.has(r.check_id),
  );
  for (const r of stale) await db.deleteFrom('check_results').where('integration_id', '=', integrationId).where('check_id', '=', r.check_id).execute();
  const open = await db.selectFrom('findings').select(['id', 'check_id']).where('integration_id', '=', integrationId).where('status', '=', 'open').execute();
  const writes = new FindingWrites(db, integrationId, at);
  for (const f of open) {
    if (ran.has(f.check_id)) continue;
    counts.resolved++;
    writes.resolve(f.id, "the resource no longer exists or is out of the check's scope");
  }
  await writes.flush();
  return counts;
}

/**
 * Records the integration's posture for the day of `at` (UTC): its stored results counted by status (`pass`, `fail`,
 * `not_evaluated`), replacing an earlier evaluation's counts of the same day. Called at the end of an evaluation, in
 * its transaction, so the dashboard's posture trend reads one row per integration and day.
 */
export async function recordPostureDay(db: Executor, integrationId: string, at: string): Promise<void> {
  const rows = await db
    .selectFrom('check_results')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('integration_id', '=', integrationId)
    .groupBy('status')
    .execute();
  const n = (status: CheckStatus) => Number(rows.find((r) => r.status === status)?.n ?? 0);
  const counts = { passed: n('pass'), failed: n('fail'), not_evaluated: n('not_evaluated'), evaluated_at: at };
  await db
    .insertInto('posture_days')
    .values({ integration_id: integrationId, day: at.slice(0, 10), ...counts })
    .onConflict((oc) => oc.columns(['integration_id', 'day']).doUpdateSet(counts))
    .execute();
}

/** Filters of {@link listFindings}. */
export interface FindingFilter {
  integrationId?: string;
  /** Only these integrations (an organization's); empty: none. */
  integrationIds?: string[];
  /**
   * `open`: open and not under an active suppression; `suppressed`: under an active suppression (open or resolved);
   * `resolved`; absent: all.
   */
  status?: 'open' | 'resolved' | 'suppressed';
  severity?: Severity | undefined;
  checkId?: string | undefined;
  resourceId?: string | undefined;
  /** The instant suppressions are judged at (ISO 8601 UTC). @default now */
  at?: string;
}

/** A finding with its active suppression, if any. */
export type FindingWithSuppression = FindingRow & { suppression: Omit<FindingSuppressionsTable, 'finding_id'> | null };

/** The suppressions of these findings that are active at `at` (no expiry, or expiring after it), by finding id. */
async function activeSuppressions(db: Executor, findingIds: string[], at: string): Promise<Map<string, FindingSuppressionsTable>> {
  const active = new Map<string, FindingSuppressionsTable>();
  for (let i = 0; i < findingIds.length; i += 500) {
    for (const s of await db
      .selectFrom('finding_suppressions')
      .selectAll()
      .where('finding_id', 'in', findingIds.slice(i, i + 500))
      .execute()) {
      if (s.expires_at === null || s.expires_at > at) active.set(s.finding_id, s);
    }
  }
  return active;
}

/**
 * The lifecycle steps (`events`) an evaluation recorded at `at` for an integration's findings, oldest first: each
 * finding row with the step and its suppression active at `at`.
 */
export async function findingStepsAt(
  db: Executor,
  integrationId: string,
  at: string,
  events: FindingEvent[],
): Promise<(FindingWithSuppression & { step: FindingEvent })[]> {
  const steps = await db
    .selectFrom('finding_history')
    .innerJoin('findings', 'findings.id', 'finding_history.finding_id')
    .selectAll('findings')
    .select(['finding_history.event as step'])
    .where('findings.integration_id', '=', integrationId)
    .where('finding_history.at', '=', at)
    .where('finding_history.event', 'in', events)
    .orderBy('finding_history.id')
    .execute();
  const suppressed = await activeSuppressions(db, [...new Set(steps.map((s) => s.id))], at);
  return steps.map(({ step, ...f }) => {
    const sup = suppressed.get(f.id);
    return {
      ...f,
      step: step as FindingEvent,
      suppression: sup ? { reason: sup.reason, author: sup.author, expires_at: sup.expires_at, created_at: sup.created_at } : null,
    };
  });
}

/** Findings, most severe and newest first, each with its active suppression. */
export async function listFindings(db: Executor, filter: FindingFilter = {}): Promise<FindingWithSuppression[]> {
  const at = filter.at ?? new Date().toISOString();
  let q = db.selectFrom('findings').selectAll();
  if (filter.integrationId) q = q.where('integration_id', '=', filter.integrationId);
  if (filter.integrationIds) {
    if (filter.integrationIds.length === 0) return [];
    q = q.where('integration_id', 'in', filter.integrationIds);
  }
  if (filter.status === 'open' || filter.status === 'resolved') q = q.where('status', '=', filter.status);
  if (filter.severity) q = q.where('severity', '=', filter.severity);
  if (filter.checkId) q = q.where('check_id', '=', filter.checkId);
  if (filter.resourceId) q = q.where('resource_id', '=', filter.resourceId);
  const rows = await q.orderBy('last_seen_at', 'desc').execute();
  const suppressions = await activeSuppressions(
    db,
    rows.map((r) => r.id),
    at,
  );
  const order = ['critical', 'high', 'medium', 'low', 'info'];
  return rows
    .map((r) => {
      const s = suppressions.get(r.id);
      return { ...r, suppression: s ? { reason: s.reason, author: s.author, expires_at: s.expires_at, created_at: s.created_at } : null };
    })
    .filter((r) => (filter.status === 'open' ? r.suppression === null : filter.status === 'suppressed' ? r.suppression !== null : true))
    .sort((a, b) => order.indexOf(a.severity) - order.indexOf(b.severity));
}

/** Lifecycle steps a finding's history records. */
export type FindingEvent = 'opened' | 'resolved' | 'reopened' | 'suppressed' | 'unsuppressed' | 'suppression_expired';

/** Appends one step to a finding's history. */
async function recordHistory(db: Executor, findingId: string, event: FindingEvent, at: string, detail: Record<string, unknown> | null = null): Promise<void> {
  await db
    .insertInto('finding_history')
    .values({ id: newId('fhe'), finding_id: findingId, at, event, detail: detail ? JSON.stringify(detail) : null })
    .execute();
}

/** A finding's history, oldest first. */
export async function findingHistory(db: Executor, findingId: string): Promise<FindingHistoryTable[]> {
  return db.selectFrom('finding_history').selectAll().where('finding_id', '=', findingId).orderBy('at').orderBy('id').execute();
}

/** One finding by id, with its active suppression. */
export async function getFinding(db: Executor, findingId: string, at = new Date().toISOString()): Promise<FindingWithSuppression | undefined> {
  const row = await db.selectFrom('findings').selectAll().where('id', '=', findingId).executeTakeFirst();
  if (!row) return undefined;
  const s = await db.selectFrom('finding_suppressions').selectAll().where('finding_id', '=', findingId).executeTakeFirst();
  const active = s && (s.expires_at === null || s.expires_at > at) ? s : null;
  return {
    ...row,
    suppression: active ? { reason: active.reason, author: active.author, expires_at: active.expires_at, created_at: active.created_at } : null,
  };
}

/**
 * Suppresses a finding (replacing an earlier suppression): it leaves the open list until `expiresAt` (or until lifted)
 * while its lifecycle goes on underneath; when the suppression expires the finding shows again as it stands.
 * @returns false when no such finding exists.
 */
export async function suppressFinding(
  db: Executor,
  findingId: string,
  s: { reason: string; author: string; expiresAt: string | null },
  at: string,
): Promise<boolean> {
  const row = await db.selectFrom('findings').select('id').where('id', '=', findingId).executeTakeFirst();
  if (!row) return false;
  await db.deleteFrom('finding_suppressions').where('finding_id', '=', findingId).execute();
  await db
    .insertInto('finding_suppressions')
    .values({ finding_id: findingId, reason: s.reason, author: s.author, expires_at: s.expiresAt, created_at: at })
    .execute();
  await recordHistory(db, findingId, 'suppressed', at, { reason: s.reason, author: s.author, expiresAt: s.expiresAt });
  return true;
}

/**
 * Lifts a finding's suppression.
 * @returns false when the finding had none.
 */
export async function unsuppressFinding(db: Executor, findingId: string, author: string, at: string): Promise<boolean> {
  const r = await db.deleteFrom('finding_suppressions').where('finding_id', '=', findingId).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) return false;
  await recordHistory(db, findingId, 'unsuppressed', at, { author });
  return true;
}

/** Removes the integration's suppressions that expired at or before `at`, recording it in each finding's history. */
async function expireSuppressions(db: Executor, integrationId: string, at: string): Promise<void> {
  const expired = await db
    .selectFrom('finding_suppressions')
    .innerJoin('findings', 'findings.id', 'finding_suppressions.finding_id')
    .select(['finding_suppressions.finding_id', 'finding_suppressions.expires_at', 'finding_suppressions.reason'])
    .where('findings.integration_id', '=', integrationId)
    .where('finding_suppressions.expires_at', 'is not', null)
    .where('finding_suppressions.expires_at', '<=', at)
    .execute();
  for (const e of expired) {
    await db.deleteFrom('finding_suppressions').where('finding_id', '=', e.finding_id).execute();
    await recordHistory(db, e.finding_id, 'suppression_expired', e.expires_at!, { reason: e.reason });
  }
}

/** True once an evaluation stamped with this collection run has been written (evaluation commits in one transaction). */
export async function hasResultsOfRun(db: Executor, integrationId: string, runId: string): Promise<boolean> {
  return Boolean(
    await db.selectFrom('check_results').select('run_id').where('integration_id', '=', integrationId).where('run_id', '=', runId).limit(1).executeTakeFirst(),
  );
}

/** The latest check results of an integration. */
export async function listCheckResults(db: Executor, integrationId: string): Promise<CheckResultRow[]> {
  return db.selectFrom('check_results').selectAll().where('integration_id', '=', integrationId).orderBy('check_id').orderBy('resource_id').execute();
}

/**
 * The open findings of an integration on these resources (`resource_id`, e.g. an agent's botid), not suppressed at
 * `at` (ISO 8601 UTC), oldest first. Ids are looked up 500 at a time; an empty list answers empty.
 */
export async function openFindingsOnResources(db: Executor, integrationId: string, resourceIds: string[], at: string): Promise<FindingRow[]> {
  const unique = [...new Set(resourceIds)];
  const rows: FindingRow[] = [];
  for (let i = 0; i < unique.length; i += 500)
    rows.push(
      ...(await db
        .selectFrom('findings')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .where('status', '=', 'open')
        .where('resource_id', 'in', unique.slice(i, i + 500))
        .execute()),
    );
  const suppressed = await activeSuppressions(
    db,
    rows.map((r) => r.id),
    at,
  );
  return rows.filter((r) => !suppressed.has(r.id)).sort((a, b) => (a.first_seen_at < b.first_seen_at ? -1 : a.first_seen_at > b.first_seen_at ? 1 : 0));
}
