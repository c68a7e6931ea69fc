import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { isGranted, permissionCapability, API_DISPLAY_NAMES } from '../core/capabilities.ts';
import { isVigilError, VigilError } from '../core/errors.ts';
import { DATAVERSE_ACCESS_REASONS } from '../core/remediation.ts';
import { newId } from '../core/ids.ts';
import { forEachLimited } from '../core/pool.ts';
import { STREAM_NAMES, type StreamName } from '../core/inventory.ts';
import type { RunStatus } from '../core/types.ts';
import { ROOT_SLICE, type Slice, type Stream, type StreamContext } from '../sources/stream.ts';
import { STREAM_RUN_ORDER, STREAMS } from '../sources/index.ts';
import { nowIso } from '../store/db.ts';
import { UpstreamHttpError, type ApiName } from '../platform/http/client.ts';
import { isForeignLink } from '../platform/http/links.ts';
import type { CollectionMetrics } from '../platform/metrics/index.ts';
import { markDeleted, parentPages, markUnseen, upsertRecords } from '../store/repositories/inventory.ts';
import * as runs from '../store/repositories/runs.ts';
import type { ReadMode } from '../store/repositories/runs.ts';
import type { Database } from '../store/schema.ts';

/**
 * The sync engine: runs the streams of one integration, stores each page and its checkpoint in one transaction
 * (so a killed run resumes from the next page, with nothing lost or counted twice), records errored slices apart
 * from empty ones (checks then say "not evaluated"), and marks objects a complete full round did not see as deleted.
 *
 * Each checkpoint also holds how its slice is read — `full` or `delta` (from the stored delta link: only the changes,
 * removals as ids, applied page by page) — so a run resumed after a crash knows it as well as the one that died:
 * - only a slice whose round in this run was complete and full marks rows deleted (a root stream: its one slice,
 *   done without error; a child stream: within the parents its full slices cover, plus rows whose parent is gone);
 *   a delta round never does, nor do history streams (`retain`) or streams reused because their last complete read
 *   is within their refresh interval (`refreshSeconds`);
 * - a round stopped mid-way goes on from its cursor in its own mode; a delta state lost upstream (410) turns the
 *   slice into a full round from the start, in the same transaction that forgets the link;
 * - `full` reads everything: reused streams too, and delta streams from the start instead of their delta links
 *   (upserts clear `deleted_at`, so rows wrongly marked deleted come back; the round's end stores a new link) —
 *   history streams (`retain`) excepted, which mark nothing deleted and so have nothing to learn from a full round.
 * Model: faros-ai airbyte-cdk `source-base.ts` (errors per slice, state still emitted); cloudquery `delete-stale`.
 */

/**
 * Progress of a run, reported after every page and slice, and once more when a stream is finished (`finished` set:
 * read, reused or skipped).
 */
export interface Progress {
  stream: StreamName;
  /** Position of this stream in the run, 1-based, of `streamsTotal` (every stream of the inventory, in order). */
  streamIndex: number;
  streamsTotal: number;
  slicesDone: number;
  slicesTotal: number;
  /** Records stored so far by this stream in this run. */
  records: number;
  /** Set on the stream's last report. */
  finished?: {
    /** Wall time spent on the stream, milliseconds (0 when reused or skipped). */
    durationMs: number;
    erroredSlices: number;
    /** Slices read as a delta round: only the changes since the previous complete round came back. */
    incrementalSlices: number;
    /** Not read: its last complete read (ISO 8601 UTC) is within its refresh interval. */
    reusedFrom?: string;
  };
}

/** An errored slice of a run. */
export interface SliceError {
  stream: StreamName;
  slice: string;
  code: string;
  /** The full message (with the upstream request, for logs and `--json`). */
  message: string;
  /** What went wrong in words a person reads, without the upstream URL (absent in runs stored before it existed). */
  reason?: string;
  /** How to fix it, when known (the error's remediation, or the Dataverse access fix by error code). */
  fix?: string;
}

/** Per-stream outcome of a run. */
interface StreamOutcome {
  /** Records stored by this run (all attempts of a resumed run included, each once). */
  records: number;
  slices: number;
  erroredSlices: number;
  /** Slices read as a delta round (only the changes since the previous complete round). */
  incrementalSlices?: number;
  /**
   * Not read in this run: a complete read from this instant (ISO 8601 UTC) is younger than the stream's refresh
   * interval, so its stored objects stand.
   */
  reusedFrom?: string;
}

/** Outcome of {@link collect}. */
export interface CollectResult {
  runId: string;
  status: RunStatus;
  /** True when the run continued one left unfinished by a process that died. */
  resumed: boolean;
  streams: Record<StreamName, StreamOutcome>;
  errors: SliceError[];
  /** Objects marked deleted because a complete stream no longer saw them. */
  markedDeleted: number;
  durationMs: number;
}

/** Options of {@link collect}. */
export interface CollectOptions {
  db: Kysely<Database>;
  integrationId: string;
  ctx: StreamContext;
  /** Slices read at once within one stream. @default 4 */
  concurrency?: number;
  /**
   * Read everything in full: every stream, even those whose last complete read is younger than their refresh
   * interval, and delta streams from the start instead of their stored delta links (a slice a resumed run had
   * already read by delta is read again in full). Rows wrongly marked deleted come back. History streams (`retain`:
   * Copilot interactions) still read from their link: they never mark anything deleted.
   */
  full?: boolean;
  onProgress?: (p: Progress) => void;
  /** Test hook: called after each stored page (a test kills the process here). */
  afterPage?: (stream: StreamName, slice: string) => void | Promise<void>;
  /**
   * Aborts the run after the page being stored: the run stays resumable and is released at once, so another
   * worker can take it over without waiting for a stale heartbeat.
   */
  signal?: AbortSignal;
  /** Told when the run starts and how it ends (Prometheus metrics); none by default. */
  metrics?: CollectionMetrics;
}

/** A run whose owner stopped sending heartbeats this long ago is taken over, whatever host it was on. */
const STALE_HEARTBEAT_MS = 5 * 60_000;

function ownerAlive(run: runs.RunRow): boolean {
  if (run.owner_host === hostname() && run.owner_pid) {
    if (run.owner_pid === process.pid) return false;
    try {
      process.kill(run.owner_pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  return Date.now() - Date.parse(run.heartbeat_at ?? run.started_at) < STALE_HEARTBEAT_MS;
}

/** Thrown when the run was stopped through its signal; the run is left resumable. */
function abortedError(signal: AbortSignal): VigilError {
  return new VigilError(
    'conflict',
    'COLLECTION_ABORTED',
    `Collection stopped: ${(signal.reason as Error)?.message ?? 'aborted'}. It resumes from its last checkpoint.`,
  );
}

const isAbort = (e: unknown) => isVigilError(e) && e.code === 'COLLECTION_ABORTED';

/**
 * True when a delta request failed because the upstream no longer has the sync state: Graph answers HTTP 410 with
 * `syncStateNotFound` or `resyncRequired` (Graph delta overview; errors reference).
 */
function isDeltaStateLost(e: unknown): boolean {
  return e instanceof UpstreamHttpError && (e.status === 410 || ['syncStateNotFound', 'resyncRequired', 'SyncStateNotFound'].includes(e.upstreamCode ?? ''));
}

/** Names of the upstream APIs as a person knows them (errors shown by the CLI). */
const API_NAMES: Record<ApiName, string> = {
  identity: 'Microsoft Entra ID',
  graph: 'Microsoft Graph',
  bap: 'Power Platform admin API',
  powerApps: 'Power Apps API',
  flow: 'Power Automate API',
  dataverse: 'Dataverse',
  managementActivity: 'Office 365 Management Activity API',
  powerBi: 'Power BI',
  arm: 'Azure Resource Manager',
};

/**
 * The code, the full message, a reason without the upstream URL, and the fix of a slice's error. An upstream HTTP error
 * reads as its status, code and message; a Dataverse access refusal (0x80072560 no application user, 0x80040220 missing
 * privileges) gets the fix `vigil integrations verify` gives for it ({@link DATAVERSE_ACCESS_REASONS}).
 */
function describeError(e: unknown): { code: string; message: string; reason: string; fix?: string } {
  if (e instanceof UpstreamHttpError) {
    const fix = DATAVERSE_ACCESS_REASONS[e.code] ?? e.remediation;
    const reason = `${API_NAMES[e.api]} answered ${e.status}${e.upstreamCode ? ` ${e.upstreamCode}` : ''}${e.upstreamMessage ? `: ${e.upstreamMessage}` : ''}`;
    return { code: e.code, message: e.message, reason, ...(fix ? { fix } : {}) };
  }
  if (isVigilError(e)) {
    // Messages that carry their fix inline ("… Fix: …") are split so the fix is shown once.
    const reason = e.message.replace(/\s*Fix: [\s\S]*$/, '');
    return { code: e.code, message: e.message, reason, ...(e.remediation ? { fix: e.remediation } : {}) };
  }
  const message = (e as Error).message ?? String(e);
  return { code: 'INTERNAL', message, reason: message };
}

function errorCode(e: unknown): { code: string; message: string } {
  const { code, message } = describeError(e);
  return { code, message };
}

/**
 * Collects every stream for one integration: starts a run, or resumes the integration's unfinished run when its
 * owner process is gone.
 *
 * @throws VigilError `conflict` / `COLLECTION_RUNNING` when a live process is collecting this integration;
 *   `authentication` errors (secret expired, app removed) after recording the run as failed.
 */
export async function collect(options: CollectOptions): Promise<CollectResult> {
  const { db, integrationId, ctx } = options;
  const started = Date.now();
  const host = hostname();
  let runId: string;
  let resumed = false;
  const running = await runs.findRunningRun(db, integrationId);
  if (running) {
    if (ownerAlive(running)) {
      throw new VigilError(
        'conflict',
        'COLLECTION_RUNNING',
        `Collection ${running.id} is already running for this integration (process ${running.owner_pid} on ${running.owner_host}).`,
        {
          remediation: 'Wait for it to finish; `vigil runs <integration>` shows its progress.',
        },
      );
    }
    runId = running.id;
    resumed = true;
    await runs.claimRun(db, runId, host, process.pid, nowIso());
    ctx.logger.info({ integrationId, runId }, 'resuming interrupted collection run');
  } else {
    runId = newId('run');
    await runs.insertRun(db, { id: runId, integration_id: integrationId, started_at: nowIso(), owner_host: host, owner_pid: process.pid });
    ctx.logger.info({ integrationId, runId }, 'collection run started');
  }

  const checkpoints = new Map((await runs.listCheckpoints(db, runId)).map((c) => [`${c.stream}\u0000${c.slice_key}`, c]));
  const outcome = Object.fromEntries(STREAM_NAMES.map((s) => [s, { records: 0, slices: 0, erroredSlices: 0 }])) as Record<StreamName, StreamOutcome>;
  const errors: SliceError[] = [];
  const failedStreams = new Set<StreamName>();
  let markedDeleted = 0;
  let current: StreamName = STREAM_NAMES[0];

  const recordError = async (
    stream: StreamName,
    slice: string,
    code: string,
    message: string,
    cursor: string | null,
    readMode: ReadMode | null = null,
    explained: { reason?: string; fix?: string } = {},
  ) => {
    errors.push({ stream, slice, code, message, ...explained });
    outcome[stream].erroredSlices++;
    await runs.saveCheckpoint(db, {
      runId,
      stream,
      sliceKey: slice,
      status: 'error',
      cursor,
      readMode,
      addRecords: 0,
      errorCode: code,
      errorMessage: message,
      at: nowIso(),
    });
  };

  const streamsTotal = STREAM_NAMES.length;
  let streamIndex = 0;
  let streamStarted = Date.now();
  const finished = (name: StreamName, reusedFrom?: string) =>
    options.onProgress?.({
      stream: name,
      streamIndex,
      streamsTotal,
      slicesDone: outcome[name].slices,
      slicesTotal: outcome[name].slices,
      records: outcome[name].records,
      finished: {
        durationMs: reusedFrom ? 0 : Date.now() - streamStarted,
        erroredSlices: outcome[name].erroredSlices,
        incrementalSlices: outcome[name].incrementalSlices ?? 0,
        ...(reusedFrom ? { reusedFrom } : {}),
      },
    });

  options.metrics?.runStarted();
  try {
    for (const name of STREAM_RUN_ORDER) {
      current = name;
      streamIndex++;
      streamStarted = Date.now();
      if (options.signal?.aborted) throw abortedError(options.signal);
      const stream = STREAMS[name] as Stream<StreamName>;
      // Children of a stream that failed in this run would read stale parents: record why they were skipped.
      if (stream.parent && failedStreams.has(stream.parent)) {
        failedStreams.add(name);
        outcome[name].slices = 1;
        await recordError(name, '*', 'PARENT_STREAM_FAILED', `Not collected: the ${stream.parent} stream failed in this run.`, null);
        finished(name);
        continue;
      }
      const capability = stream.capability ? permissionCapability(stream.capability) : undefined;
      // Capabilities judged by the API (Power BI) are not gated on `roles`: the stream runs and a refusal is recorded.
      if (capability && !capability.judgedByApi) {
        const roles = await ctx.tokens.roles(stream.resource(ctx, ROOT_SLICE));
        if (!isGranted(capability, roles)) {
          failedStreams.add(name);
          outcome[name].slices = 1;
          await recordError(
            name,
            '*',
            'MISSING_PERMISSION',
            `Not collected: the ${API_DISPLAY_NAMES[capability.api]} application permission ${capability.recommended} (or ${capability.anyOf.filter((p) => p !== capability.recommended).join(', ')}) is not granted.`,
            null,
            null,
            {
              fix: `Add the application permission ${capability.recommended} (App registrations > your app > API permissions > Add a permission > Application permissions), grant admin consent, then run \`vigil integrations verify\`.`,
            },
          );
          finished(name);
          continue;
        }
      }

      // Costly streams with no incremental read upstream are reused while their last complete read is fresh.
      // A resumed run that already started the stream finishes it.
      if (stream.refreshSeconds && !options.full && ![...checkpoints.keys()].some((k) => k.startsWith(`${name}\u0000`))) {
        const last = await runs.lastCompleteRead(db, integrationId, name);
        if (last && Date.now() - Date.parse(last) < stream.refreshSeconds * 1000) {
          outcome[name].reusedFrom = last;
          ctx.logger.info(
            { integrationId, runId, stream: name, lastCompleteRead: last },
            'stream reused: its last complete read is within the refresh interval',
          );
          finished(name, last);
          continue;
        }
      }

      let slices: Slice[];
      if (!stream.parent) slices = [ROOT_SLICE];
      else {
        // Slices are small (keys and parameters); the parent rows behind them are read and dropped page by page.
        slices = [];
        for await (const parents of parentPages(db, integrationId, stream.parent)) {
          slices.push(...(stream.slices ? stream.slices(parents) : parents.map((p) => stream.slice!(p)).filter((s): s is Slice => s !== null)));
        }
      }
      outcome[name].slices = slices.length;
      let slicesDone = 0;
      // A `full` run reads delta streams from the start, except history streams: they mark nothing deleted, so a
      // full round of them would learn nothing a delta round does not (and re-read every user's whole history).
      const fromStart = options.full === true && !stream.retain;
      /** Parent keys of the slices whose round in this run was complete and full: only they may mark rows deleted. */
      const readInFull: string[] = [];
      let fullSlices = 0;
      const doneIn = (slice: Slice, mode: ReadMode | null) => {
        if (mode === 'full') {
          readInFull.push(...(slice.covers ?? [slice.key]));
          fullSlices++;
        } else outcome[name].incrementalSlices = (outcome[name].incrementalSlices ?? 0) + 1;
      };

      await forEachLimited(slices, stream.parent ? (options.concurrency ?? 4) : 1, async (slice) => {
        const cp = checkpoints.get(`${name}\u0000${slice.key}`);
        outcome[name].records += cp?.records ?? 0;
        // How this run read the slice so far (checkpoints from before migration 0011 hold no mode: a stream without
        // delta is always read in full; for a delta stream it is unknown).
        const stored: ReadMode | null = (cp?.read_mode as ReadMode | null | undefined) ?? (cp && !stream.delta ? 'full' : null);
        // Done before a crash: nothing to read again — unless this is a `full` run and the round was a delta one.
        if (cp?.status === 'done' && !(fromStart && stored !== 'full')) {
          doneIn(slice, stored);
          options.onProgress?.({
            stream: name,
            streamIndex,
            streamsTotal,
            slicesDone: ++slicesDone,
            slicesTotal: slices.length,
            records: outcome[name].records,
          });
          return;
        }
        let mode: ReadMode;
        let cursor: string | null;
        if (cp && cp.status !== 'done' && stored !== null && !(fromStart && stored === 'delta') && (stored === 'full' || cp.cursor !== null)) {
          // A round of this run stopped mid-way (crash or errored slice): it goes on from its cursor, in its mode.
          mode = stored;
          cursor = cp.cursor;
        } else {
          // A new round. Delta-capable streams start from the delta link of their previous complete round (only the
          // changes come back, removals as ids), unless the run is `full`: then everything is read from the start,
          // and the round's end stores a new delta link.
          const link = stream.delta && !fromStart ? await runs.getDeltaLink(db, integrationId, name, slice.key) : undefined;
          mode = link ? 'delta' : 'full';
          cursor = link ?? null;
        }
        let done = false;
        try {
          for (;;) {
            try {
              for await (const page of stream.read(ctx, slice, cursor)) {
                const at = nowIso();
                done = page.nextCursor === null;
                await db.transaction().execute(async (trx) => {
                  await upsertRecords(trx, name, integrationId, runId, page.records, at);
                  if (page.removed?.length) markedDeleted += await markDeleted(trx, name, integrationId, page.removed, at);
                  if (done && page.deltaLink) await runs.saveDeltaLink(trx, integrationId, name, slice.key, page.deltaLink, runId, at);
                  await runs.saveCheckpoint(trx, {
                    runId,
                    stream: name,
                    sliceKey: slice.key,
                    status: done ? 'done' : 'in_progress',
                    cursor: page.nextCursor,
                    readMode: mode,
                    addRecords: page.records.length,
                    at,
                  });
                  await runs.heartbeat(trx, runId, at);
                });
                cursor = page.nextCursor;
                outcome[name].records += page.records.length;
                options.onProgress?.({ stream: name, streamIndex, streamsTotal, slicesDone, slicesTotal: slices.length, records: outcome[name].records });
                await options.afterPage?.(name, slice.key);
                if (options.signal?.aborted) throw abortedError(options.signal);
              }
              break;
            } catch (e) {
              // The upstream forgot the delta state (410 syncStateNotFound / resyncRequired): read everything again.
              // Forgetting the link and turning the slice's round into a full one from the start is one transaction,
              // so a crash right after it resumes the full round, never the delta one.
              if (mode !== 'delta' || !isDeltaStateLost(e)) throw e;
              ctx.logger.warn({ integrationId, runId, stream: name, slice: slice.key }, 'delta state expired upstream; reading the whole collection');
              await db.transaction().execute(async (trx) => {
                await runs.clearDeltaLink(trx, integrationId, name, slice.key);
                await runs.saveCheckpoint(trx, {
                  runId,
                  stream: name,
                  sliceKey: slice.key,
                  status: 'in_progress',
                  cursor: null,
                  readMode: 'full',
                  addRecords: 0,
                  at: nowIso(),
                });
              });
              mode = 'full';
              cursor = null;
              done = false;
            }
          }
          if (!done)
            await runs.saveCheckpoint(db, {
              runId,
              stream: name,
              sliceKey: slice.key,
              status: 'done',
              cursor: null,
              readMode: mode,
              addRecords: 0,
              at: nowIso(),
            });
          doneIn(slice, mode);
        } catch (e) {
          if (isVigilError(e, 'authentication') || isAbort(e)) throw e;
          const { code, message, ...explained } = describeError(e);
          ctx.logger.warn({ integrationId, runId, stream: name, slice: slice.key, code }, 'slice failed');
          // A link refused by the link policy is kept nowhere: not the stored delta link it may have been (the next
          // round reads in full), not the slice's cursor.
          if (isForeignLink(e)) {
            if (mode === 'delta') await runs.clearDeltaLink(db, integrationId, name, slice.key);
            cursor = null;
          }
          await recordError(name, slice.key, code, message, cursor, mode, explained);
        }
        options.onProgress?.({ stream: name, streamIndex, streamsTotal, slicesDone: ++slicesDone, slicesTotal: slices.length, records: outcome[name].records });
      });

      if (outcome[name].erroredSlices > 0 && !stream.parent) failedStreams.add(name);
      finished(name);
      // Only a complete full round tells which objects are gone: a delta round sees only the changes (its removals
      // were applied page by page, unchanged rows stay). History streams (retain) never mark anything deleted.
      if (stream.retain) continue;
      if (!stream.parent) {
        if (fullSlices === slices.length && outcome[name].erroredSlices === 0)
          markedDeleted += await markUnseen(db, name, integrationId, runId, 'all', nowIso());
      } else {
        markedDeleted += await markUnseen(db, name, integrationId, runId, readInFull, nowIso(), stream.parent);
      }
    }
  } catch (e) {
    // Stopped, or the credentials were refused (expired secret): the run keeps its checkpoints and is released,
    // so it resumes where it stopped once the worker restarts or the secret is rotated.
    if (isAbort(e) || isVigilError(e, 'authentication')) {
      options.metrics?.runFinished('stopped', (Date.now() - started) / 1000);
      await runs.releaseRun(db, runId);
      ctx.logger.warn({ integrationId, runId, code: (e as VigilError).code }, 'collection run stopped; it resumes from its checkpoints');
      throw e;
    }
    const { code, message } = errorCode(e);
    errors.push({ stream: current, slice: '*', code, message });
    options.metrics?.runFinished('failed', (Date.now() - started) / 1000);
    await runs.finishRun(db, runId, {
      status: 'failed',
      finishedAt: nowIso(),
      durationMs: Date.now() - started,
      counts: outcome,
      errors,
      httpStats: Object.fromEntries(ctx.http.stats),
    });
    ctx.logger.error({ integrationId, runId, code }, 'collection run failed');
    throw e;
  }

  const status: RunStatus = errors.length === 0 ? 'succeeded' : 'partial';
  const durationMs = Date.now() - started;
  options.metrics?.runFinished(status, durationMs / 1000);
  await runs.finishRun(db, runId, { status, finishedAt: nowIso(), durationMs, counts: outcome, errors, httpStats: Object.fromEntries(ctx.http.stats) });
  ctx.logger.info({ integrationId, runId, status, durationMs }, 'collection run finished');
  return { runId, status, resumed, streams: outcome, errors, markedDeleted, durationMs };
}
