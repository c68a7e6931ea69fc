import type { Kysely } from 'kysely';
import { type AuditEvent } from '../core/audit.ts';
import { normalizeIp } from '../sources/managementActivity/records.ts';
import { nowIso } from '../store/db.ts';
import {
  findEventsByOperation,
  getAlert,
  getDetectionWatermark,
  knownUserIps,
  latestIngestedAfter,
  mergeUserIps,
  pageStoredEvents,
  raiseAlert,
  saveDetectionWatermark,
  userIpsStoredBetween,
  withRaw,
  type UserIp,
} from '../store/repositories/audit.ts';
import type { Database } from '../store/schema.ts';
import { getEstateObjects } from '../store/repositories/inventory.ts';
import type { FlowAttrs } from '../sources/powerPlatform/streams/flows.ts';
import { loadDetections } from './index.ts';
import type { Detection, DetectionContext } from './types.ts';
import { deliverAfterCommit, enqueueAlert, type Sinks } from '../sinks/index.ts';
import type { Logger } from '../platform/log/index.ts';

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

/**
 * (user → ip → first seen) for the users of the new events: stored history merged with the new events. Addresses
 * are compared in their normalised form: history stored before ingestion normalised them (`1.2.3.4:40927`,
 * `::ffff:1.2.3.4`) is normalised here, so no migration rewrites it; an address that does not parse is left out.
 */
async function ipHistory(db: Kysely<Database>, integrationId: string, fresh: UserIp[]): Promise<Map<string, Map<string, string>>> {
  const firstSeen = new Map<string, Map<string, string>>();
  const known = await knownUserIps(db, integrationId, [...new Set(fresh.map((f) => f.user_key))]);
  for (const { user_key: user, client_ip: stored, first_seen: t } of [...known, ...fresh]) {
    const ip = normalizeIp(stored);
    if (!ip) continue;
    const ips = firstSeen.get(user) ?? new Map<string, string>();
    firstSeen.set(user, ips);
    const had = ips.get(ip);
    if (!had || t < had) ips.set(ip, t);
  }
  return firstSeen;
}

/**
 * Evaluates the events of `integrationId` stored since the last evaluation, oldest first, in pages of 2,000.
 * @returns how many new events the rules read and the alerts raised per rule.
 */
export async function runDetections(
  db: Kysely<Database>,
  integrationId: string,
  detections: Detection[] = loadDetections(),
  /** SIEM sinks: each new alert is queued in the transaction that stores it, delivered at the end of the run. */
  sinks?: { sinks: Sinks | undefined; tenantId?: string; logger?: Logger },
): Promise<DetectionRunResult> {
  const result: DetectionRunResult = { events: 0, alertsRaised: 0, byRule: {} };
  const after = await getDetectionWatermark(db, integrationId);
  const through = await latestIngestedAfter(db, integrationId, after);
  if (!through) {
    await deliverAfterCommit(sinks?.sinks, db, sinks?.logger);
    return result;
  }
  const recordTypes = [...new Set(detections.flatMap((d) => d.metadata.recordTypes))];
  const fresh = await userIpsStoredBetween(db, integrationId, after, through);
  const firstSeen = await ipHistory(db, integrationId, fresh);
  const ctxBase: Omit<DetectionContext, 'events'> = {
    integrationId,
    ipsSeenBefore: (userId, time) =>
      new Set([...(firstSeen.get(userId.toLowerCase()) ?? new Map<string, string>())].filter(([, t]) => t < time).map(([ip]) => ip)),
    find: ({ operations, from, to }) => findEventsByOperation(db, integrationId, { operations, from, to, limit: 10_000 }),
    flows: async (ids) => new Map((await getEstateObjects<FlowAttrs>(db, integrationId, 'flows', ids)).map((f) => [f.id, f.attrs])),
  };
  let from: { creationTime: string; id: string } | undefined;
  for (;;) {
    const rows = await pageStoredEvents(db, integrationId, { after, through, recordTypes, from, limit: PAGE });
    if (rows.length === 0) break;
    from = { creationTime: rows.at(-1)!.creation_time, id: rows.at(-1)!.id };
    const events: AuditEvent[] = await withRaw(db, rows);
    result.events += events.length;
    for (const d of detections) {
      const mine = events.filter((e) => e.recordType !== null && d.metadata.recordTypes.includes(e.recordType));
      if (mine.length === 0) continue;
      for (const hit of await d.run({ ...ctxBase, events: mine })) {
        const times = hit.eventIds
          .map((id) => events.find((e) => e.id === id)?.creationTime)
          .filter((t): t is string => !!t)
          .sort();
        const input = {
          integrationId,
          ruleId: d.metadata.id,
          severity: d.metadata.severity,
          title: hit.title,
          dedupeKey: hit.dedupeKey,
          detail: hit.detail,
          eventIds: hit.eventIds,
          windowStart: times[0] ?? null,
          windowEnd: times.at(-1) ?? null,
        };
        const out = sinks?.sinks;
        const { created } = out
          ? await db.transaction().execute(async (trx) => {
              const at = nowIso();
              const r = await raiseAlert(trx, input, at);
              if (r.created) {
                const row = await getAlert(trx, r.id);
                if (row) await enqueueAlert(trx, row, d.metadata, { sinks: out.names, product: out.product, tenantId: sinks.tenantId });
              }
              return r;
            })
          : await raiseAlert(db, input, nowIso());
        if (created) {
          result.alertsRaised++;
          result.byRule[d.metadata.id] = (result.byRule[d.metadata.id] ?? 0) + 1;
        }
      }
    }
  }
  // The IP history and the watermark move on only after the alerts are stored: a crash before this point evaluates
  // the same events again (alerts are raised once by their dedupe key).
  await mergeUserIps(db, integrationId, fresh);
  await saveDetectionWatermark(db, integrationId, through, nowIso());
  await deliverAfterCommit(sinks?.sinks, db, sinks?.logger);
  return result;
}
