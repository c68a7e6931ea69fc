import type { Kysely } from 'kysely';
import { isGranted, PERMISSION_CAPABILITIES } from '../core/capabilities.ts';
import { blobEvents } from '../sources/managementActivity/records.ts';
import { isVigilError } from '../core/errors.ts';
import { runDetections, type DetectionRunResult } from '../detections/run.ts';
import { forEachLimited } from '../core/pool.ts';
import { credentialsFor, getIntegration, recordCredentialRefusal, streamContext, type IntegrationDeps } from '../integration/index.ts';
import { UpstreamHttpError } from '../platform/http/client.ts';
import type { JsonArrayText } from '../platform/json/array.ts';
import {
  afCode,
  CONTENT_TYPES,
  fetchContent,
  listContent,
  startSubscription,
  type ContentItem,
  type FeedContext,
} from '../sources/managementActivity/client.ts';
import { activityEvents, POWER_BI_HISTORY_MS, POWER_BI_NOT_AUTHORIZED } from '../sources/powerBi/client.ts';
import { nowIso } from '../store/db.ts';
import { encodeBlob, getCursor, raiseAlert, saveCursor, storeBlob, storeBlobs, type EncodedBlob } from '../store/repositories/audit.ts';
import type { Database } from '../store/schema.ts';

/**
 * Audit ingestion from the Office 365 Management Activity API that loses nothing silently:
 * - subscriptions ensured per content type (AF20024 "already enabled" is success; a content type the tenant lacks is
 *   reported, not fatal);
 * - content listed in windows of at most 24 hours, never starting more than 7 days back, following `NextPageUri`;
 * - blobs fetched with bounded concurrency, records stored with their `Id` as identity (duplicates dropped);
 * - a cursor per (integration, content type) that moves only after a window's records are stored, never backwards,
 *   and never past "now − settle" so late-listed content is read again (its duplicates dropped);
 * - an explicit data-loss alert when Vigil was down longer than the 7-day retention or content expired (AF20051)
 *   before it was fetched, naming the content type and the window.
 *
 * Sources: office-365-management-activity-api-reference.md (windows, retention, NextPageUri, AF codes),
 * troubleshooting guide (PublisherIdentifier, AF429), limits-and-practices.md (cursor practice of elastic/beats
 * `o365audit`, duplicates by design).
 */

/** Retention of the feed: content older than this cannot be listed or fetched. */
const RETENTION_MS = 7 * 86_400_000;
const WINDOW_MS = 86_400_000;

/** Options of {@link ingestAudit}. */
export interface AuditIngestOptions {
  /** The time Vigil considers "now" (tests move it). @default current time */
  now?: Date;
  /** How far back the first run starts, hours (at most 167). @default 24 */
  initialLookbackHours?: number;
  /** The cursor stays this far behind "now", minutes, so content listed late is not skipped. @default 15 */
  settleMinutes?: number;
  /** Blobs fetched at once (VIGIL_AUDIT_CONCURRENCY). @default 4 */
  concurrency?: number;
  /**
   * Records stored per transaction: blobs are grouped until they hold this many events, a window ends, or a source
   * ends. 1 stores every blob in its own transaction. @default 5000
   */
  commitRecords?: number;
  /** GUID sent as PublisherIdentifier (the operator's tenant). @default the integration's tenant id */
  publisherId?: string;
  contentTypes?: readonly string[];
  /** Also read Power BI activity events (`admin/activityevents`). @default true */
  powerBi?: boolean;
  /**
   * Stops the ingestion (a worker stopping, a job's expiry): every request and throttled wait ends, the signal's reason
   * is thrown, and nothing is recorded for the content type being read (no error, no `unavailable`): its cursor stays
   * at the last stored window.
   */
  signal?: AbortSignal | undefined;
  /**
   * Called after each stored content blob, and after each stored page of Power BI activity events (`contentId` null),
   * once its transaction committed (tests kill the process here).
   */
  afterBlob?: (contentType: string, contentId: string | null) => void | Promise<void>;
  /** Told after each stored blob (or Power BI page) and once when a content type is finished (progress display). */
  onProgress?: (p: AuditProgress) => void;
}

/** Progress of an audit ingestion: the content type being read, and its counts so far. */
export interface AuditProgress {
  contentType: string;
  /** Position of this content type, 1-based, of `total` (the Management Activity types, then Power BI). */
  index: number;
  total: number;
  blobs: number;
  stored: number;
  duplicates: number;
  /** Set on the content type's last report. */
  finished?: { status: ContentTypeOutcome['status']; durationMs: number };
}

/** Outcome per content type. */
interface ContentTypeOutcome {
  status: 'ok' | 'unavailable' | 'error';
  reason?: string;
  /** The error code when `status` is `error` (`FOREIGN_LINK`, an upstream code, …). */
  code?: string;
  /** Records stored for the first time. */
  stored: number;
  /** Records already stored (duplicates by design, or a re-read overlap). */
  duplicates: number;
  malformed: number;
  blobs: number;
  expiredBlobs: number;
  /** The cursor after this run, ISO 8601 UTC. */
  cursor: string | null;
}

/** Outcome of {@link ingestAudit}. */
export interface AuditIngestResult {
  contentTypes: Record<string, ContentTypeOutcome>;
  /** Data-loss alerts raised by this run. */
  dataLossAlerts: string[];
  durationMs: number;
}

/**
 * Ingests the audit feed of one integration up to now.
 * @throws VigilError `authentication` when the credentials are refused (recorded on the integration); the reason of
 *   `options.signal` when it is aborted.
 */
export async function ingestAudit(deps: IntegrationDeps, idOrName: string, options: AuditIngestOptions = {}): Promise<AuditIngestResult> {
  const started = Date.now();
  const row = await getIntegration(deps.db, idOrName);
  const tokens = credentialsFor(deps, row);
  const ctx: FeedContext = { ...streamContext(deps, tokens, options.signal), publisherId: options.publisherId ?? row.tenant_id };
  const now = options.now ?? new Date();
  const settleMs = (options.settleMinutes ?? 15) * 60_000;
  const result: AuditIngestResult = { contentTypes: {}, dataLossAlerts: [], durationMs: 0 };
  const capability = PERMISSION_CAPABILITIES.find((c) => c.id === 'audit.activityFeed')!;

  let roles: string[];
  try {
    roles = await tokens.roles(deps.cloud.managementActivity.resource);
  } catch (e) {
    await recordCredentialRefusal(deps, row.id, e);
    throw e;
  }
  const types = options.contentTypes ?? CONTENT_TYPES;
  const total = types.length + (options.powerBi !== false ? 1 : 0);
  let index = 0;
  let typeStarted = Date.now();
  const report = (contentType: string, o: ContentTypeOutcome, finished = false) =>
    options.onProgress?.({
      contentType,
      index,
      total,
      blobs: o.blobs,
      stored: o.stored,
      duplicates: o.duplicates,
      ...(finished ? { finished: { status: o.status, durationMs: Date.now() - typeStarted } } : {}),
    });
  for (const contentType of types) {
    index++;
    typeStarted = Date.now();
    const outcome: ContentTypeOutcome = { status: 'ok', stored: 0, duplicates: 0, malformed: 0, blobs: 0, expiredBlobs: 0, cursor: null };
    result.contentTypes[contentType] = outcome;
    report(contentType, outcome);
    if (!isGranted(capability, roles)) {
      outcome.status = 'unavailable';
      outcome.reason = 'Not evaluated: the Office 365 Management APIs application permission ActivityFeed.Read is not granted.';
      report(contentType, outcome, true);
      continue;
    }
    try {
      await startSubscription(ctx, contentType);
    } catch (e) {
      options.signal?.throwIfAborted();
      if (isVigilError(e, 'authentication')) throw e;
      outcome.status = 'unavailable';
      outcome.reason = `The tenant does not offer ${contentType}: ${e instanceof UpstreamHttpError ? `${e.upstreamCode ?? e.status} ${e.upstreamMessage ?? ''}`.trim() : (e as Error).message}`;
      await saveCursor(
        deps.db,
        {
          integration_id: row.id,
          content_type: contentType,
          cursor_time: (await getCursor(deps.db, row.id, contentType))?.cursor_time ?? initialCursor(now, options).toISOString(),
          subscription: 'unavailable',
          last_error: outcome.reason,
        },
        nowIso(),
      );
      report(contentType, outcome, true);
      continue;
    }

    let cursor = await startingCursor(deps, row.id, contentType, now, options);
    // A small margin inside the retention: a window starting exactly 7 days back is refused by the API.
    cursor = await skipLostWindow(deps, row.id, contentType, cursor, new Date(now.getTime() - RETENTION_MS + 5 * 60_000), '7-day', result);

    const expired: ContentItem[] = [];
    const writer = new BlobWriter(deps, row.id, outcome, options.commitRecords, async (contentId) => {
      report(contentType, outcome);
      await options.afterBlob?.(contentType, contentId);
    });
    try {
      while (cursor < now) {
        // A long run near the retention edge: the edge moves on while Vigil works, and the API refuses windows past
        // it. The 5-minute margin covers the first minutes; after that the earliest start follows the elapsed time.
        const drift = Math.max(0, Date.now() - started - 2 * 60_000);
        cursor = await skipLostWindow(deps, row.id, contentType, cursor, new Date(now.getTime() - RETENTION_MS + 5 * 60_000 + drift), '7-day', result);
        const end = new Date(Math.min(cursor.getTime() + WINDOW_MS, now.getTime()));
        for await (const page of listContent(ctx, contentType, cursor, end)) {
          await forEachLimited(page, options.concurrency ?? 4, async (item) => {
            let content: JsonArrayText;
            try {
              content = await fetchContent(ctx, item.contentUri);
            } catch (e) {
              if (afCode(e) === 'AF20051') {
                expired.push(item);
                outcome.expiredBlobs++;
                return;
              }
              throw e;
            }
            await writer.add(contentType, item.contentId, { text: content.text, records: content });
          });
        }
        await writer.flush();
        await advanceCursor(deps, row.id, contentType, cursor, new Date(Math.min(end.getTime(), now.getTime() - settleMs)), outcome);
        if (end >= now) break;
        cursor = end;
      }
    } catch (e) {
      options.signal?.throwIfAborted();
      if (isVigilError(e, 'authentication')) {
        await recordCredentialRefusal(deps, row.id, e);
        throw e;
      }
      outcome.status = 'error';
      outcome.reason = (e as Error).message;
      if (isVigilError(e)) outcome.code = e.code;
      deps.logger.warn(
        { integrationId: row.id, contentType, error: outcome.reason },
        'audit ingestion of a content type failed; its cursor stays at the last stored window',
      );
    }
    if (expired.length) {
      const from = expired.map((i) => i.contentCreated).sort()[0]!;
      const to = expired
        .map((i) => i.contentCreated)
        .sort()
        .at(-1)!;
      const alert = await raiseAlert(
        deps.db,
        {
          integrationId: row.id,
          ruleId: 'audit_data_loss',
          severity: 'high',
          title: `Audit data lost for ${contentType}: ${expired.length} content blob(s) expired before they were fetched`,
          dedupeKey: `${contentType}|expired|${from}|${to}`,
          detail: { contentType, reason: 'content expired (AF20051)', contentIds: expired.map((i) => i.contentId).slice(0, 100), blobs: expired.length },
          windowStart: from,
          windowEnd: to,
        },
        nowIso(),
      );
      if (alert.created) result.dataLossAlerts.push(alert.id);
    }
    report(contentType, outcome, true);
  }
  if (options.powerBi !== false) {
    index++;
    typeStarted = Date.now();
    const outcome = await ingestPowerBi(deps, row.id, ctx, now, settleMs, options, result, (o) => report(POWER_BI_SOURCE, o));
    result.contentTypes[POWER_BI_SOURCE] = outcome;
    report(POWER_BI_SOURCE, outcome, true);
  }
  result.durationMs = Date.now() - started;
  deps.logger.info(
    { integrationId: row.id, stored: Object.values(result.contentTypes).reduce((n, o) => n + o.stored, 0), dataLossAlerts: result.dataLossAlerts.length },
    'audit ingestion finished',
  );
  return result;
}

/** Outcome of {@link ingestAndDetect}. */
export interface AuditCycleResult {
  ingest: AuditIngestResult;
  detections: DetectionRunResult;
}

/**
 * One audit cycle as the CLI, the job handler and the demo run it: ingest the feed up to now, then run the
 * detections over every event not evaluated yet (including events stored by an earlier cycle that stopped).
 * @throws VigilError `authentication` when the credentials are refused (recorded on the integration).
 */
export async function ingestAndDetect(
  deps: IntegrationDeps,
  idOrName: string,
  options: AuditIngestOptions & { /** Told when the detections start. */ onDetect?: () => void } = {},
): Promise<AuditCycleResult> {
  const ingest = await ingestAudit(deps, idOrName, options);
  options.onDetect?.();
  const integration = await getIntegration(deps.db, idOrName);
  const detections = await runDetections(deps.db, integration.id, undefined, { sinks: deps.sinks, tenantId: integration.tenant_id, logger: deps.logger });
  deps.logger.info({ integration: idOrName, evaluated: detections.events, alertsRaised: detections.alertsRaised }, 'detections finished');
  return { ingest, detections };
}

/** The cursor key and outcome key of Power BI activity events (next to the Management Activity content types). */
export const POWER_BI_SOURCE = 'PowerBI.ActivityEvents';

/**
 * Reads Power BI activity events one UTC day per call from the cursor up to now, storing each page like a content
 * blob (the same records as RecordType 20 in Audit.General: the shared key drops whichever copy comes second). The
 * cursor moves after each day is stored, never past now − settle. A refusal is "not evaluated" with the reason and
 * the fix; a gap beyond the 30 days Power BI keeps raises a data-loss alert.
 */
async function ingestPowerBi(
  deps: IntegrationDeps,
  integrationId: string,
  ctx: FeedContext,
  now: Date,
  settleMs: number,
  options: AuditIngestOptions,
  result: AuditIngestResult,
  onPage: (o: ContentTypeOutcome) => void,
): Promise<ContentTypeOutcome> {
  const outcome: ContentTypeOutcome = { status: 'ok', stored: 0, duplicates: 0, malformed: 0, blobs: 0, expiredBlobs: 0, cursor: null };
  onPage(outcome);
  const stored = await getCursor(deps.db, integrationId, POWER_BI_SOURCE);
  const writer = new BlobWriter(deps, integrationId, outcome, options.commitRecords, async () => {
    onPage(outcome);
    await options.afterBlob?.(POWER_BI_SOURCE, null);
  });
  let cursor = await startingCursor(deps, integrationId, POWER_BI_SOURCE, now, options);
  cursor = await skipLostWindow(deps, integrationId, POWER_BI_SOURCE, cursor, new Date(now.getTime() - POWER_BI_HISTORY_MS + 5 * 60_000), '30-day', result);
  try {
    while (cursor < now) {
      const dayEnd = new Date(Date.UTC(cursor.getUTCFullYear(), cursor.getUTCMonth(), cursor.getUTCDate() + 1));
      const end = new Date(Math.min(dayEnd.getTime(), now.getTime()));
      // The API's end is inclusive: stop 1 ms before the next window starts.
      for await (const page of activityEvents(ctx, cursor, new Date(end.getTime() - 1))) {
        await writer.add(POWER_BI_SOURCE, null, { text: page.text, records: page.events });
      }
      await writer.flush();
      await advanceCursor(deps, integrationId, POWER_BI_SOURCE, cursor, new Date(Math.min(end.getTime(), now.getTime() - settleMs)), outcome);
      if (end >= now) break;
      cursor = end;
    }
  } catch (e) {
    options.signal?.throwIfAborted();
    if (isVigilError(e, 'authentication')) {
      await recordCredentialRefusal(deps, integrationId, e);
      throw e;
    }
    if (isVigilError(e, 'authorization') && e.code === POWER_BI_NOT_AUTHORIZED) {
      outcome.status = 'unavailable';
      outcome.reason = `Not evaluated: ${e.message} ${e.remediation ?? ''}`.trim();
      await saveCursor(
        deps.db,
        {
          integration_id: integrationId,
          content_type: POWER_BI_SOURCE,
          cursor_time: stored?.cursor_time ?? cursor.toISOString(),
          subscription: 'unavailable',
          last_error: outcome.reason,
        },
        nowIso(),
      );
    } else {
      outcome.status = 'error';
      outcome.reason = (e as Error).message;
      if (isVigilError(e)) outcome.code = e.code;
      deps.logger.warn(
        { integrationId, source: POWER_BI_SOURCE, error: outcome.reason },
        'Power BI activity events failed; the cursor stays at the last stored day',
      );
    }
  }
  return outcome;
}

/**
 * When `cursor` lies before `earliest` (what the upstream still keeps), raises the data-loss alert naming the
 * content type and the lost window [cursor, earliest) — once per window start — and returns `earliest`; otherwise
 * returns `cursor` unchanged.
 */
async function skipLostWindow(
  deps: IntegrationDeps,
  integrationId: string,
  contentType: string,
  cursor: Date,
  earliest: Date,
  retention: string,
  result: AuditIngestResult,
): Promise<Date> {
  if (cursor >= earliest) return cursor;
  const alert = await raiseAlert(
    deps.db,
    {
      integrationId,
      ruleId: 'audit_data_loss',
      severity: 'high',
      title: `Audit data lost for ${contentType}: ${cursor.toISOString()} to ${earliest.toISOString()} is beyond the ${retention} retention`,
      dedupeKey: `${contentType}|gap|${cursor.toISOString()}`,
      detail: { contentType, reason: 'collection gap longer than the retention', lostFrom: cursor.toISOString(), lostTo: earliest.toISOString() },
      windowStart: cursor.toISOString(),
      windowEnd: earliest.toISOString(),
    },
    nowIso(),
  );
  if (alert.created) result.dataLossAlerts.push(alert.id);
  deps.logger.error({ integrationId, contentType, lostFrom: cursor.toISOString(), lostTo: earliest.toISOString() }, 'audit data lost: gap beyond retention');
  return earliest;
}

/**
 * Stores the blobs (or Power BI pages) of one source in groups, and counts the outcome: new, duplicate, malformed.
 * Each blob is normalised and compressed as it arrives (a content blob's records are parsed one at a time as they are
 * read, so memory is the blobs in flight as text plus the compressed group), and queued; a group is stored in one transaction ({@link storeBlobs}) once it
 * holds `commitRecords` events, and whatever is queued is stored by {@link BlobWriter.flush}, which the caller awaits
 * before it moves a cursor past those blobs. `stored` is told of each blob once its transaction committed (progress,
 * and the tests' kill hook). A group that fails to store fails the flush that stored it; its blobs, never committed,
 * are read again from the unmoved cursor.
 */
class BlobWriter {
  private queue: EncodedBlob[] = [];
  private queued = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: IntegrationDeps,
    private readonly integrationId: string,
    private readonly outcome: ContentTypeOutcome,
    private readonly commitRecords = 5000,
    private readonly stored: (contentId: string | null) => Promise<void>,
  ) {}

  /** Normalises, compresses and queues one blob; stores the group when it is full (and then returns once stored). */
  async add(contentType: string, contentId: string | null, fetched: { text: string; records: Iterable<unknown> & { length: number } }): Promise<void> {
    const { events, malformed } = blobEvents(fetched.records, contentType);
    const records = fetched.records.length;
    this.outcome.malformed += malformed;
    const blob = await encodeBlob({ contentType, contentId, text: fetched.text, records, events });
    this.queue.push(blob);
    this.queued += events.length;
    if (this.queued >= this.commitRecords) await this.flush();
  }

  /** Stores every queued blob in one transaction, after the groups before it. */
  flush(): Promise<void> {
    const group = this.queue;
    this.queue = [];
    this.queued = 0;
    const run = this.chain.then(async () => {
      if (group.length === 0) return;
      const counts = await storeBlobs(this.deps.db, this.integrationId, group, nowIso());
      // Counted for the whole committed group before anyone is told (a callback that throws leaves no count behind).
      group.forEach((blob, i) => {
        const inserted = counts[i]!;
        this.outcome.stored += inserted;
        this.deps.metrics?.eventsIngested(blob.contentType, inserted);
        this.outcome.duplicates += blob.events.length - inserted;
        this.outcome.blobs++;
      });
      for (const blob of group) await this.stored(blob.contentId);
    });
    // A failed group fails its own flush; the groups after it are still stored in order.
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/** A first run's start: `now` minus the initial look-back (hours, at most 167: inside the 7-day retention). */
function initialCursor(now: Date, options: AuditIngestOptions): Date {
  return new Date(now.getTime() - Math.min(167, options.initialLookbackHours ?? 24) * 3_600_000);
}

/**
 * Where a source's collection starts: its stored cursor, or — on the first run — `now` minus the initial look-back
 * (hours, at most 167 so the first window stays inside the 7-day retention), saved at once. Saving the start before the
 * first window is read keeps it fixed: a first run killed part-way and resumed later reads from the same instant, not
 * from its own later "now" minus the look-back, which would skip the records in between.
 */
async function startingCursor(deps: IntegrationDeps, integrationId: string, source: string, now: Date, options: AuditIngestOptions): Promise<Date> {
  const stored = await getCursor(deps.db, integrationId, source);
  if (stored) return new Date(stored.cursor_time);
  const start = initialCursor(now, options);
  await saveCursor(
    deps.db,
    { integration_id: integrationId, content_type: source, cursor_time: start.toISOString(), subscription: 'enabled', last_error: null },
    nowIso(),
  );
  return start;
}

/**
 * After a window's records are stored: moves the cursor to `next` (the window end, never past now − settle; never
 * backwards) and reports it.
 */
async function advanceCursor(
  deps: IntegrationDeps,
  integrationId: string,
  source: string,
  cursor: Date,
  next: Date,
  outcome: ContentTypeOutcome,
): Promise<void> {
  if (next > cursor)
    await saveCursor(
      deps.db,
      { integration_id: integrationId, content_type: source, cursor_time: next.toISOString(), subscription: 'enabled', last_error: null },
      nowIso(),
    );
  outcome.cursor = (next > cursor ? next : cursor).toISOString();
}

/**
 * Stores records that did not come as a content blob (tests, imports): normalised, then stored as one blob.
 * @returns how many were new; records without `Id` or a parseable `CreationTime` are skipped.
 */
export async function storeRecords(
  db: Kysely<Database>,
  integrationId: string,
  contentType: string,
  records: Record<string, unknown>[],
  at: string,
): Promise<number> {
  const { events } = blobEvents(records, contentType);
  return storeBlob(db, integrationId, { contentType, contentId: null, text: JSON.stringify(records), records: records.length, events }, at);
}
