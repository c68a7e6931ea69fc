import type { AuditEvent } from '../../core/audit.ts';
import { newId } from '../../core/ids.ts';
import type { Executor } from '../db.ts';
import type { AlertsTable, AuditCursorsTable, AuditEventsTable } from '../schema.ts';

/** Audit events, cursors and alerts. */

const CHUNK = 250;

/**
 * Inserts events, dropping those whose `Id` is already stored (duplicates are by design upstream).
 * @returns how many were new.
 */
export async function insertEvents(db: Executor, integrationId: string, events: AuditEvent[], at: string): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < events.length; i += CHUNK) {
    const rows: AuditEventsTable[] = events.slice(i, i + CHUNK).map((e) => ({
      integration_id: integrationId,
      id: e.id,
      content_type: e.contentType,
      record_type: e.recordType,
      creation_time: e.creationTime,
      operation: e.operation,
      workload: e.workload,
      user_id: e.userId,
      user_type: e.userType,
      client_ip: e.clientIp,
      object_id: e.objectId,
      organization_id: e.organizationId,
      raw: JSON.stringify(e.raw),
      ingested_at: at,
    }));
    const r = await db.insertInto('audit_events').values(rows).onConflict((oc) => oc.columns(['integration_id', 'id']).doNothing()).executeTakeFirst();
    inserted += Number(r.numInsertedOrUpdatedRows ?? 0);
  }
  return inserted;
}

/** The cursor of a content type, if any. */
export async function getCursor(db: Executor, integrationId: string, contentType: string): Promise<AuditCursorsTable | undefined> {
  return db.selectFrom('audit_cursors').selectAll().where('integration_id', '=', integrationId).where('content_type', '=', contentType).executeTakeFirst();
}

/** Moves a cursor forward (never backwards) and records the subscription state and last error. */
export async function saveCursor(db: Executor, c: Omit<AuditCursorsTable, 'updated_at'>, at: string): Promise<void> {
  const existing = await getCursor(db, c.integration_id, c.content_type);
  if (!existing) {
    await db.insertInto('audit_cursors').values({ ...c, updated_at: at }).execute();
    return;
  }
  const cursor = Date.parse(c.cursor_time) > Date.parse(existing.cursor_time) ? c.cursor_time : existing.cursor_time;
  await db
    .updateTable('audit_cursors')
    .set({ cursor_time: cursor, subscription: c.subscription, last_error: c.last_error, updated_at: at })
    .where('integration_id', '=', c.integration_id)
    .where('content_type', '=', c.content_type)
    .execute();
}

/** All cursors of an integration. */
export async function listCursors(db: Executor, integrationId: string): Promise<AuditCursorsTable[]> {
  return db.selectFrom('audit_cursors').selectAll().where('integration_id', '=', integrationId).orderBy('content_type').execute();
}

/** An alert to raise. */
export interface AlertInput {
  integrationId: string;
  ruleId: string;
  severity: string;
  title: string;
  /** Same key = same alert (raised once). */
  dedupeKey: string;
  detail: Record<string, unknown>;
  windowStart?: string | null;
  windowEnd?: string | null;
  eventIds?: string[];
}

/** Raises an alert unless one with the same rule and key exists; returns its id and whether it is new. */
export async function raiseAlert(db: Executor, a: AlertInput, at: string): Promise<{ id: string; created: boolean }> {
  const existing = await db.selectFrom('alerts').select('id').where('integration_id', '=', a.integrationId).where('rule_id', '=', a.ruleId).where('dedupe_key', '=', a.dedupeKey).executeTakeFirst();
  if (existing) return { id: existing.id, created: false };
  const id = newId('alr');
  await db
    .insertInto('alerts')
    .values({ id, integration_id: a.integrationId, rule_id: a.ruleId, severity: a.severity, status: 'new', title: a.title, dedupe_key: a.dedupeKey, detail: JSON.stringify(a.detail), window_start: a.windowStart ?? null, window_end: a.windowEnd ?? null, created_at: at, updated_at: at })
    .execute();
  if (a.eventIds?.length) await db.insertInto('alert_events').values(a.eventIds.map((event_id) => ({ alert_id: id, event_id }))).onConflict((oc) => oc.doNothing()).execute();
  return { id, created: true };
}

/** Alerts, newest first. */
export async function listAlerts(db: Executor, filter: { integrationId?: string; status?: string; ruleId?: string } = {}): Promise<AlertsTable[]> {
  let q = db.selectFrom('alerts').selectAll();
  if (filter.integrationId) q = q.where('integration_id', '=', filter.integrationId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.ruleId) q = q.where('rule_id', '=', filter.ruleId);
  return q.orderBy('created_at', 'desc').execute();
}

/** Events of an integration, newest first, with optional filters. */
export async function listEvents(db: Executor, filter: { integrationId?: string; since?: string; operation?: string; userId?: string; limit?: number } = {}): Promise<AuditEventsTable[]> {
  let q = db.selectFrom('audit_events').selectAll();
  if (filter.integrationId) q = q.where('integration_id', '=', filter.integrationId);
  if (filter.since) q = q.where('creation_time', '>=', filter.since);
  if (filter.operation) q = q.where('operation', '=', filter.operation);
  if (filter.userId) q = q.where('user_id', '=', filter.userId);
  return q.orderBy('creation_time', 'desc').limit(filter.limit ?? 1000).execute();
}

/** Alert lifecycle states. */
export const ALERT_STATUSES = ['new', 'acknowledged', 'closed'] as const;

/** Moves an alert along its lifecycle; returns false when no such alert exists. */
export async function setAlertStatus(db: Executor, alertId: string, status: (typeof ALERT_STATUSES)[number], at: string): Promise<boolean> {
  const r = await db.updateTable('alerts').set({ status, updated_at: at }).where('id', '=', alertId).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
