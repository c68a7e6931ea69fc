import { newId } from '../../core/ids.ts';
import type { CheckStatus, Severity } from '../../core/types.ts';
import type { Executor } from '../db.ts';
import type { CheckResultsTable, FindingsTable } from '../schema.ts';

/** Check results (the latest evaluation per resource) and findings (failures with a lifecycle). */
export type CheckResultRow = CheckResultsTable;
export type FindingRow = FindingsTable;

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

/**
 * Replaces the integration's check results with a new evaluation and moves findings along their lifecycle:
 * a failing resource opens a finding (or refreshes `last_seen_at`, reopening a resolved one); an open finding whose
 * resource now passes — or no longer exists — is resolved. A `not_evaluated` result leaves its finding as it was:
 * not seeing is not passing.
 *
 * @returns how many findings were opened, refreshed and resolved.
 */
export async function applyEvaluation(db: Executor, integrationId: string, runId: string | null, results: ResultInput[], at: string): Promise<{ opened: number; open: number; resolved: number }> {
  await db.deleteFrom('check_results').where('integration_id', '=', integrationId).execute();
  const rows: CheckResultRow[] = results.map((r) => ({
    integration_id: integrationId,
    check_id: r.checkId,
    resource_type: r.resourceType,
    resource_id: r.resourceId,
    resource_name: r.resourceName,
    status: r.status,
    reason: r.reason,
    run_id: runId,
    evaluated_at: at,
  }));
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('check_results').values(rows.slice(i, i + 200)).execute();

  const existing = await db.selectFrom('findings').selectAll().where('integration_id', '=', integrationId).execute();
  const byKey = new Map(existing.map((f) => [`${f.check_id}\u0000${f.resource_id}`, f]));
  const seen = new Set<string>();
  let opened = 0;
  let open = 0;
  let resolved = 0;
  for (const r of results) {
    const key = `${r.checkId}\u0000${r.resourceId}`;
    seen.add(key);
    const f = byKey.get(key);
    if (r.status === 'fail') {
      open++;
      if (!f) {
        opened++;
        await db
          .insertInto('findings')
          .values({
            id: newId('fnd'),
            integration_id: integrationId,
            check_id: r.checkId,
            severity: r.severity,
            resource_type: r.resourceType,
            resource_id: r.resourceId,
            resource_name: r.resourceName,
            status: 'open',
            detail: JSON.stringify({ reason: r.reason, ...r.detail }),
            first_seen_at: at,
            last_seen_at: at,
            resolved_at: null,
          })
          .execute();
      } else {
        if (f.status !== 'open') opened++;
        await db
          .updateTable('findings')
          .set({ status: 'open', last_seen_at: at, resolved_at: null, severity: r.severity, resource_name: r.resourceName, detail: JSON.stringify({ reason: r.reason, ...r.detail }) })
          .where('id', '=', f.id)
          .execute();
      }
    } else if (r.status === 'pass' && f && f.status === 'open') {
      resolved++;
      await db.updateTable('findings').set({ status: 'resolved', resolved_at: at }).where('id', '=', f.id).execute();
    }
  }
  // The resource is gone (deleted upstream) or no longer in the check's scope.
  for (const f of existing) {
    if (f.status === 'open' && !seen.has(`${f.check_id}\u0000${f.resource_id}`)) {
      resolved++;
      await db.updateTable('findings').set({ status: 'resolved', resolved_at: at }).where('id', '=', f.id).execute();
    }
  }
  return { opened, open, resolved };
}

/** Filters of {@link listFindings}. */
export interface FindingFilter {
  integrationId?: string;
  status?: 'open' | 'resolved';
  severity?: Severity;
  checkId?: string;
}

/** Findings, most severe and newest first. */
export async function listFindings(db: Executor, filter: FindingFilter = {}): Promise<FindingRow[]> {
  let q = db.selectFrom('findings').selectAll();
  if (filter.integrationId) q = q.where('integration_id', '=', filter.integrationId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.severity) q = q.where('severity', '=', filter.severity);
  if (filter.checkId) q = q.where('check_id', '=', filter.checkId);
  const rows = await q.orderBy('last_seen_at', 'desc').execute();
  const order = ['critical', 'high', 'medium', 'low', 'info'];
  return rows.sort((a, b) => order.indexOf(a.severity) - order.indexOf(b.severity));
}

/** The latest check results of an integration. */
export async function listCheckResults(db: Executor, integrationId: string): Promise<CheckResultRow[]> {
  return db.selectFrom('check_results').selectAll().where('integration_id', '=', integrationId).orderBy('check_id').orderBy('resource_id').execute();
}
