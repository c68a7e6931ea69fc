import type { Kysely } from 'kysely';
import type { AuditEvent } from '../core/audit.ts';
import { nowIso } from '../store/db.ts';
import { raiseAlert } from '../store/repositories/audit.ts';
import type { Database, AuditEventsTable } from '../store/schema.ts';
import { loadDetections } from './index.ts';
import type { Detection } from './types.ts';

/**
 * Runs the detections over an integration's events ingested since a given instant and raises their alerts (each
 * once: the rule's dedupe key), linking the triggering events.
 */

function toEvent(r: AuditEventsTable): AuditEvent {
  return {
    id: r.id,
    contentType: r.content_type,
    recordType: r.record_type,
    creationTime: r.creation_time,
    operation: r.operation,
    workload: r.workload,
    userId: r.user_id,
    userType: r.user_type,
    clientIp: r.client_ip,
    objectId: r.object_id,
    organizationId: r.organization_id,
    raw: JSON.parse(r.raw) as Record<string, unknown>,
  };
}

/** Result of {@link runDetections}. */
export interface DetectionRunResult {
  events: number;
  alertsRaised: number;
  byRule: Record<string, number>;
}

/**
 * Evaluates events of `integrationId` ingested at or after `since` (ISO 8601), oldest first, in pages.
 * Prior client IPs per user come from events created before the earliest evaluated event.
 */
export async function runDetections(db: Kysely<Database>, integrationId: string, since: string, detections: Detection[] = loadDetections()): Promise<DetectionRunResult> {
  const result: DetectionRunResult = { events: 0, alertsRaised: 0, byRule: {} };
  const rows = await db.selectFrom('audit_events').selectAll().where('integration_id', '=', integrationId).where('ingested_at', '>=', since).orderBy('creation_time').execute();
  if (rows.length === 0) return result;
  const events = rows.map(toEvent);
  result.events = events.length;
  const earliest = events[0]!.creationTime;
  const prior = new Map<string, Set<string>>();
  const history = await db
    .selectFrom('audit_events')
    .select(['user_id', 'client_ip'])
    .distinct()
    .where('integration_id', '=', integrationId)
    .where('creation_time', '<', earliest)
    .where('client_ip', 'is not', null)
    .where('user_id', 'is not', null)
    .execute();
  for (const h of history) {
    const u = h.user_id!.toLowerCase();
    if (!prior.has(u)) prior.set(u, new Set());
    prior.get(u)!.add(h.client_ip!);
  }
  const ctx = { integrationId, events, priorIps: (user: string) => prior.get(user.toLowerCase()) };
  for (const d of detections) {
    for (const hit of d.run(ctx)) {
      const { created } = await raiseAlert(db, { integrationId, ruleId: d.metadata.id, severity: d.metadata.severity, title: hit.title, dedupeKey: hit.dedupeKey, detail: hit.detail, eventIds: hit.eventIds }, nowIso());
      if (created) {
        result.alertsRaised++;
        result.byRule[d.metadata.id] = (result.byRule[d.metadata.id] ?? 0) + 1;
      }
    }
  }
  return result;
}
