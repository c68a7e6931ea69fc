import { sql, type Kysely } from 'kysely';
import type { AuditEvent } from '../core/audit.ts';
import { nowIso } from '../store/db.ts';
import { raiseAlert, withRaw } from '../store/repositories/audit.ts';
import type { AuditEventsTable, Database } from '../store/schema.ts';
import { loadDetections } from './index.ts';
import type { Detection, DetectionContext, StoredEvent } from './types.ts';

/**
 * Runs the detections over an integration's events not evaluated yet and raises their alerts (each once: the rule's
 * dedupe key), linking the triggering events. A watermark per integration (`detection_watermarks`, on `ingested_at`)
 * moves only after the alerts are stored, so events stored by a run whose detections never ran are evaluated later.
 *
 * Memory stays bounded whatever the volume: only events of the record types some rule declares are loaded, with their
 * raw records, a page at a time; history comes from the store (`find`) and from `audit_user_ips`, which this runner
 * keeps: the client IPs each user's activity came from, first and last seen.
 */

/** Result of {@link runDetections}. */
export interface DetectionRunResult {
  /** New events evaluated (of the record types the rules read). */
  events: number;
  alertsRaised: number;
  byRule: Record<string, number>;
}

const PAGE = 2000;

function toStored(r: AuditEventsTable): StoredEvent {
  return { id: r.id, contentType: r.content_type, recordType: r.record_type, creationTime: r.creation_time, operation: r.operation, workload: r.workload, userId: r.user_id, userType: r.user_type, clientIp: r.client_ip, objectId: r.object_id, organizationId: r.organization_id };
}

/** (user → ip → first seen) for the users of the new events: stored history merged with the new events. */
async function ipHistory(db: Kysely<Database>, integrationId: string, after: string, through: string): Promise<{ firstSeen: Map<string, Map<string, string>>; fresh: { user_key: string; client_ip: string; first_seen: string; last_seen: string }[] }> {
  const fresh = await db
    .selectFrom('audit_events')
    .select([sql<string>`lower(user_id)`.as('user_key'), 'client_ip', sql<string>`min(creation_time)`.as('first_seen'), sql<string>`max(creation_time)`.as('last_seen')])
    .where('integration_id', '=', integrationId)
    .where('ingested_at', '>', after)
    .where('ingested_at', '<=', through)
    .where('user_id', 'is not', null)
    .where('client_ip', 'is not', null)
    .groupBy([sql`lower(user_id)`, 'client_ip'])
    .execute() as { user_key: string; client_ip: string; first_seen: string; last_seen: string }[];
  const firstSeen = new Map<string, Map<string, string>>();
  const note = (user: string, ip: string, t: string) => {
    const ips = firstSeen.get(user) ?? new Map<string, string>();
    firstSeen.set(user, ips);
    const had = ips.get(ip);
    if (!had || t < had) ips.set(ip, t);
  };
  const users = [...new Set(fresh.map((f) => f.user_key))];
  for (let i = 0; i < users.length; i += 500) {
    const known = await db.selectFrom('audit_user_ips').select(['user_key', 'client_ip', 'first_seen']).where('integration_id', '=', integrationId).where('user_key', 'in', users.slice(i, i + 500)).execute();
    for (const k of known) note(k.user_key, k.client_ip, k.first_seen);
  }
  for (const f of fresh) note(f.user_key, f.client_ip, f.first_seen);
  return { firstSeen, fresh };
}

/**
 * Evaluates the events of `integrationId` stored since the last evaluation, oldest first, in pages of 2,000.
 * @returns how many new events the rules read and the alerts raised per rule.
 */
export async function runDetections(db: Kysely<Database>, integrationId: string, detections: Detection[] = loadDetections()): Promise<DetectionRunResult> {
  const result: DetectionRunResult = { events: 0, alertsRaised: 0, byRule: {} };
  const after = (await db.selectFrom('detection_watermarks').select('evaluated_through').where('integration_id', '=', integrationId).executeTakeFirst())?.evaluated_through ?? '';
  const through = (await db.selectFrom('audit_events').select(sql<string | null>`max(ingested_at)`.as('m')).where('integration_id', '=', integrationId).where('ingested_at', '>', after).executeTakeFirst())?.m;
  if (!through) return result;
  const recordTypes = [...new Set(detections.flatMap((d) => d.metadata.recordTypes))];
  const { firstSeen, fresh } = await ipHistory(db, integrationId, after, through);
  const ctxBase: Omit<DetectionContext, 'events'> = {
    integrationId,
    ipsSeenBefore: (userId, time) => new Set([...(firstSeen.get(userId.toLowerCase()) ?? new Map<string, string>())].filter(([, t]) => t < time).map(([ip]) => ip)),
    find: async ({ operations, from, to }) =>
      operations.length === 0
        ? []
        : (await db.selectFrom('audit_events').selectAll().where('integration_id', '=', integrationId).where('operation', 'in', operations).where('creation_time', '>=', from).where('creation_time', '<=', to).orderBy('creation_time').limit(10_000).execute()).map(toStored),
  };
  let page: { t: string; id: string } | undefined;
  for (;;) {
    let q = db.selectFrom('audit_events').selectAll().where('integration_id', '=', integrationId).where('ingested_at', '>', after).where('ingested_at', '<=', through).where('record_type', 'in', recordTypes);
    if (page) {
      const a = page;
      q = q.where((eb) => eb.or([eb('creation_time', '>', a.t), eb.and([eb('creation_time', '=', a.t), eb('id', '>', a.id)])]));
    }
    const rows = await q.orderBy('creation_time').orderBy('id').limit(PAGE).execute();
    if (rows.length === 0) break;
    page = { t: rows.at(-1)!.creation_time, id: rows.at(-1)!.id };
    const events: AuditEvent[] = await withRaw(db, rows);
    result.events += events.length;
    for (const d of detections) {
      const mine = events.filter((e) => e.recordType !== null && d.metadata.recordTypes.includes(e.recordType));
      if (mine.length === 0) continue;
      for (const hit of await d.run({ ...ctxBase, events: mine })) {
        const times = hit.eventIds.map((id) => events.find((e) => e.id === id)?.creationTime).filter((t): t is string => !!t).sort();
        const { created } = await raiseAlert(db, { integrationId, ruleId: d.metadata.id, severity: d.metadata.severity, title: hit.title, dedupeKey: hit.dedupeKey, detail: hit.detail, eventIds: hit.eventIds, windowStart: times[0] ?? null, windowEnd: times.at(-1) ?? null }, nowIso());
        if (created) {
          result.alertsRaised++;
          result.byRule[d.metadata.id] = (result.byRule[d.metadata.id] ?? 0) + 1;
        }
      }
    }
  }
  // The IP history and the watermark move on only after the alerts are stored: a crash before this point evaluates
  // the same events again (alerts are raised once by their dedupe key).
  for (let i = 0; i < fresh.length; i += 500) {
    await db
      .insertInto('audit_user_ips')
      .values(fresh.slice(i, i + 500).map((f) => ({ integration_id: integrationId, ...f })))
      .onConflict((oc) =>
        oc.columns(['integration_id', 'user_key', 'client_ip']).doUpdateSet((eb) => ({
          first_seen: sql<string>`case when ${eb.ref('excluded.first_seen')} < ${eb.ref('audit_user_ips.first_seen')} then ${eb.ref('excluded.first_seen')} else ${eb.ref('audit_user_ips.first_seen')} end`,
          last_seen: sql<string>`case when ${eb.ref('excluded.last_seen')} > ${eb.ref('audit_user_ips.last_seen')} then ${eb.ref('excluded.last_seen')} else ${eb.ref('audit_user_ips.last_seen')} end`,
        })),
      )
      .execute();
  }
  await db
    .insertInto('detection_watermarks')
    .values({ integration_id: integrationId, evaluated_through: through, updated_at: nowIso() })
    .onConflict((oc) => oc.column('integration_id').doUpdateSet({ evaluated_through: through, updated_at: nowIso() }))
    .execute();
  return result;
}
