import type { Kysely } from 'kysely';
import { type AuditEvent } from '../core/audit.ts';
import { normalizeIp } from '../sources/managementActivity/records.ts';
import { nowIso } from '../store/db.ts';
import {
  findEventRowsByOperation,
  findEventsByOperation,
  getDetectionWatermark,
  knownUserIps,
  latestIngestedAfter,
  mergeUserIps,
  pageStoredEvents,
  raiseAlerts,
  saveDetectionWatermark,
  userIpsStoredBetween,
  type AlertInput,
  type UserIp,
} from '../store/repositories/audit.ts';
import { withLazyRaw, withRaw, type LazySegmentCache } from '../store/repositories/auditRaw.ts';
import type { Database } from '../store/schema.ts';
import { getEnvironments, getEstateObjects } from '../store/repositories/inventory.ts';
import type { FlowAttrs } from '../sources/powerPlatform/streams/flows.ts';
import type { AgentComponentAttrs } from '../sources/dataverse/streams/agentComponents.ts';
import { readOpenFindings } from './helpers.ts';
import { loadDetections } from './index.ts';
import type { Detection, DetectionContext, SeenIps } from './types.ts';
import { deliverAfterCommit, enqueueAlerts, type Sinks } from '../sinks/index.ts';
import type { Logger } from '../platform/log/index.ts';

/**
 * Runs the detections over an integration's events not evaluated yet and raises their alerts (each once: the rule's
 * dedupe key), linking the triggering events. A watermark per integration (`detection_watermarks`, on `ingested_at`)
 * moves only after the alerts are stored, so events stored by a run whose detections never ran are evaluated later.
 *
 * Memory stays bounded whatever the volume: only events of the record types some rule declares are loaded, a page at
 * a time, their raw records parsed only when a rule reads them; history comes from the store (`find`) and from `audit_user_ips`, which this runner
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

/** Most rows `find` returns (documented in {@link DetectionContext.find}). */
const FIND_LIMIT = 10_000;

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

const NO_IPS: SeenIps = { size: 0, has: () => false, [Symbol.iterator]: () => [][Symbol.iterator]() };

/**
 * `ipsSeenBefore` over the run's IP history, without copying it per event: for each user (on first use) the
 * first-seen times sorted, so `size` is a binary search and `has` one map look-up; iteration lists the addresses
 * seen before the time in the history's order (as a Set built from it would).
 */
function seenBefore(firstSeen: Map<string, Map<string, string>>): DetectionContext['ipsSeenBefore'] {
  const sorted = new Map<string, string[]>();
  return (userId, time) => {
    const user = userId.toLowerCase();
    const ips = firstSeen.get(user);
    if (!ips) return NO_IPS;
    let times = sorted.get(user);
    if (!times) sorted.set(user, (times = [...ips.values()].sort()));
    let lo = 0;
    for (let hi = times.length; lo < hi;) {
      const mid = (lo + hi) >>> 1;
      if (times[mid]! < time) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return NO_IPS;
    return {
      size: lo,
      has: (ip) => {
        const t = ips.get(ip);
        return t !== undefined && t < time;
      },
      *[Symbol.iterator]() {
        for (const [ip, t] of ips) if (t < time) yield ip;
      },
    };
  };
}

type StoredEvent = Awaited<ReturnType<DetectionContext['find']>>[number];

/**
 * `find` for one run. Consecutive pages ask for overlapping windows (a page's time range widened by the rule's
 * window), so the rows of the last answer still inside the next window are kept and only the part after them is
 * read: each stored row is read about once per run instead of once per page. The answer is the one a fresh query
 * gives: the oldest rows (at most 10,000) of the operations in [from, to]. The kept rows are exactly the stored rows
 * of the operations in [from, through] (`inclusive`) or [from, through) — a truncated answer keeps none of its last
 * time, whose other rows it may have cut.
 */
function reusingFind(db: Kysely<Database>, integrationId: string): DetectionContext['find'] {
  const kept = new Map<string, { from: string; through: string; inclusive: boolean; rows: StoredEvent[] }>();
  return async ({ operations, from, to }) => {
    const key = JSON.stringify([...operations].sort());
    const k = kept.get(key);
    let head: StoredEvent[] = [];
    let q = { from, fromExclusive: false };
    if (k && k.from <= from && from <= k.through && to >= k.through) {
      head = k.rows.filter((r) => r.creationTime >= from);
      q = { from: k.through, fromExclusive: k.inclusive };
    }
    if (head.length >= FIND_LIMIT) {
      head = [];
      q = { from, fromExclusive: false };
    }
    const limit = FIND_LIMIT - head.length;
    const tail = q.fromExclusive && q.from === to ? [] : await findEventsByOperation(db, integrationId, { operations, ...q, to, limit });
    const rows = head.concat(tail);
    if (tail.length < limit) kept.set(key, { from, through: to, inclusive: true, rows });
    else {
      const last = rows.at(-1)!.creationTime;
      kept.set(key, { from, through: last, inclusive: false, rows: rows.filter((r) => r.creationTime < last) });
    }
    return rows;
  };
}

/**
 * Evaluates the events of `integrationId` stored since the last evaluation, oldest first, in pages of 2,000. Each
 * page's new alerts are stored in one transaction with their events linked and, with sinks, queued in the outbox.
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
  const ctxBase: Omit<DetectionContext, 'events'> = {
    integrationId,
    ipsSeenBefore: seenBefore(await ipHistory(db, integrationId, fresh)),
    find: reusingFind(db, integrationId),
    findRecords: async ({ operations, from, to }) => withRaw(db, await findEventRowsByOperation(db, integrationId, { operations, from, to, limit: 5000 })),
    flows: async (ids) => new Map((await getEstateObjects<FlowAttrs>(db, integrationId, 'flows', ids)).map((f) => [f.id, f.attrs])),
    agentComponents: async (ids) =>
      new Map((await getEstateObjects<AgentComponentAttrs>(db, integrationId, 'agentComponents', ids)).map((c) => [c.id, c.attrs])),
    openFindings: async (resourceIds) => readOpenFindings(db, integrationId, resourceIds, nowIso()),
    environments: async (ids) => new Map((await getEnvironments(db, integrationId, ids)).map((e) => [e.id, { displayName: e.display_name, sku: e.sku }])),
  };
  const segments: LazySegmentCache = new Map();
  let from: { creationTime: string; id: string } | undefined;
  for (;;) {
    const rows = await pageStoredEvents(db, integrationId, { after, through, recordTypes, from, limit: PAGE });
    if (rows.length === 0) break;
    from = { creationTime: rows.at(-1)!.creation_time, id: rows.at(-1)!.id };
    // Raw records are parsed when a rule first reads one: most rules decide on the columns alone for most events.
    const events: AuditEvent[] = await withLazyRaw(db, rows, segments);
    result.events += events.length;
    // Record `Id` → `CreationTime` of the page (the first, oldest, when an Id repeats at another time).
    const timeOf = new Map<string, string>();
    for (const e of events) if (!timeOf.has(e.id)) timeOf.set(e.id, e.creationTime);
    const raised: { d: Detection; input: AlertInput }[] = [];
    for (const d of detections) {
      const mine = events.filter((e) => e.recordType !== null && d.metadata.recordTypes.includes(e.recordType));
      if (mine.length === 0) continue;
      for (const hit of await d.run({ ...ctxBase, events: mine })) {
        const times = hit.eventIds
          .map((id) => timeOf.get(id))
          .filter((t): t is string => !!t)
          .sort();
        raised.push({
          d,
          input: {
            integrationId,
            ruleId: d.metadata.id,
            severity: d.metadata.severity,
            title: hit.title,
            dedupeKey: hit.dedupeKey,
            detail: hit.detail,
            eventIds: hit.eventIds,
            windowStart: times[0] ?? null,
            windowEnd: times.at(-1) ?? null,
          },
        });
      }
    }
    if (raised.length === 0) continue;
    const out = sinks?.sinks;
    const created = await db.transaction().execute(async (trx) => {
      const rowsRaised = await raiseAlerts(
        trx,
        raised.map((r) => r.input),
        nowIso,
      );
      const newAlerts = rowsRaised.flatMap((alert, i) => (alert ? [{ alert, detection: raised[i]!.d.metadata }] : []));
      if (out) await enqueueAlerts(trx, newAlerts, { sinks: out.names, product: out.product, tenantId: sinks.tenantId });
      return newAlerts;
    });
    for (const { detection } of created) {
      result.alertsRaised++;
      result.byRule[detection.id] = (result.byRule[detection.id] ?? 0) + 1;
    }
  }
  // The IP history and the watermark move on only after the alerts are stored: a crash before this point evaluates
  // the same events again (alerts are raised once by their dedupe key).
  await mergeUserIps(db, integrationId, fresh);
  await saveDetectionWatermark(db, integrationId, through, nowIso());
  await deliverAfterCommit(sinks?.sinks, db, sinks?.logger);
  return result;
}
