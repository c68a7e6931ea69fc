import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { capabilityForStream, isGranted, API_DISPLAY_NAMES } from '../core/capabilities.ts';
import { isVigilError, VigilError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { forEachLimited } from '../core/pool.ts';
import { STREAM_NAMES, type StreamName } from '../core/inventory.ts';
import type { RunStatus } from '../core/types.ts';
import { ROOT_SLICE, type Slice, type Stream, type StreamContext } from '../sources/stream.ts';
import { STREAMS } from '../sources/index.ts';
import { nowIso } from '../store/db.ts';
import { UpstreamHttpError } from '../platform/http/client.ts';
import { isForeignLink } from '../platform/http/links.ts';
import type { CollectionMetrics } from '../platform/metrics/index.ts';
import { markDeleted, parentPages, markUnseen, upsertRecords } from '../store/repositories/inventory.ts';
import * as runs from '../store/repositories/runs.ts';
import type { Database } from '../store/schema.ts';

/**
 * The sync engine: runs the streams of one integration, stores each page and its checkpoint in one transaction
 * (so a killed run resumes from the next page, with nothing lost or counted twice), records errored slices apart
 * from empty ones (checks then say "not evaluated"), and marks objects a complete stream did not see as deleted —
 * except for delta rounds (removals come as ids), history streams (`retain`) and streams reused because their last
 * complete read is within their refresh interval (`refreshSeconds`; `full` reads them anyway).
 * Model: faros-ai airbyte-cdk `source-base.ts` (errors per slice, state still emitted); cloudquery `delete-stale`.
 */

/** Progress of a run, reported after every page and slice. */
export interface Progress {
  stream: StreamName;
  slicesDone: number;
  slicesTotal: number;
  /** Records stored so far by this stream in this run. */
  records: number;
}

/** An errored slice of a run. */
export interface SliceError {
  stream: StreamName;
  slice: string;
  code: string;
  message: string;
}

/** Per-stream outcome of a run. */
export interface StreamOutcome {
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
  /** Read every stream, even those whose last complete read is younger than their refresh interval. */
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
export function abortedError(signal: AbortSignal): VigilError {
  return new VigilError('conflict', 'COLLECTION_ABORTED', `Collection stopped: ${(signal.reason as Error)?.message ?? 'aborted'}. It resumes from its last checkpoint.`);
}

const isAbort = (e: unknown) => isVigilError(e) && e.code === 'COLLECTION_ABORTED';

/**
 * True when a delta request failed because the upstream no longer has the sync state: Graph answers HTTP 410 with
 * `syncStateNotFound` or `resyncRequired` (Graph delta overview; errors reference).
 */
function isDeltaStateLost(e: unknown): boolean {
  return e instanceof UpstreamHttpError && (e.status === 410 || ['syncStateNotFound', 'resyncRequired', 'SyncStateNotFound'].includes(e.upstreamCode ?? ''));
}

function errorCode(e: unknown): { code: string; message: string } {
  if (isVigilError(e)) return { code: e.code, message: e.message };
  return { code: 'INTERNAL', message: (e as Error).message ?? String(e) };
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
      throw new VigilError('conflict', 'COLLECTION_RUNNING', `Collection ${running.id} is already running for this integration (process ${running.owner_pid} on ${running.owner_host}).`, {
        remediation: 'Wait for it to finish; `vigil runs <integration>` shows its progress.',
      });
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

  const recordError = async (stream: StreamName, slice: string, code: string, message: string, cursor: string | null) => {
    errors.push({ stream, slice, code, message });
    outcome[stream].erroredSlices++;
    await runs.saveCheckpoint(db, { runId, stream, sliceKey: slice, status: 'error', cursor, addRecords: 0, errorCode: code, errorMessage: message, at: nowIso() });
  };

  options.metrics?.runStarted();
  try {
    for (const name of STREAM_NAMES) {
      current = name;
      if (options.signal?.aborted) throw abortedError(options.signal);
      const stream = STREAMS[name] as Stream<StreamName>;
      // Children of a stream that failed in this run would read stale parents: record why they were skipped.
      if (stream.parent && failedStreams.has(stream.parent)) {
        failedStreams.add(name);
        outcome[name].slices = 1;
        await recordError(name, '*', 'PARENT_STREAM_FAILED', `Not collected: the ${stream.parent} stream failed in this run.`, null);
        continue;
      }
      const capability = capabilityForStream(name);
      if (capability) {
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
          );
          continue;
        }
      }

      // Costly streams with no incremental read upstream are reused while their last complete read is fresh.
      // A resumed run that already started the stream finishes it.
      if (stream.refreshSeconds && !options.full && ![...checkpoints.keys()].some((k) => k.startsWith(`${name}\u0000`))) {
        const last = await runs.lastCompleteRead(db, integrationId, name);
        if (last && Date.now() - Date.parse(last) < stream.refreshSeconds * 1000) {
          outcome[name].reusedFrom = last;
          ctx.logger.info({ integrationId, runId, stream: name, lastCompleteRead: last }, 'stream reused: its last complete read is within the refresh interval');
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
      /** Parent keys of the completed slices. */
      const completed: string[] = [];
      const incrementalSlices = new Set<string>();

      await forEachLimited(slices, stream.parent ? (options.concurrency ?? 4) : 1, async (slice) => {
        const cp = checkpoints.get(`${name}\u0000${slice.key}`);
        outcome[name].records += cp?.records ?? 0;
        if (cp?.status === 'done') {
          completed.push(...(slice.covers ?? [slice.key]));
          options.onProgress?.({ stream: name, slicesDone: ++slicesDone, slicesTotal: slices.length, records: outcome[name].records });
          return;
        }
        let cursor = cp?.cursor ?? null;
        let done = false;
        // Delta-capable streams start from the delta link of their previous complete round (a resumed round keeps
        // its own cursor): only the changes come back, removals as ids.
        let incremental = false;
        if (stream.delta) {
          const link = await runs.getDeltaLink(db, integrationId, name, slice.key);
          if (link) {
            incremental = true;
            cursor ??= link;
          }
        }
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
                  await runs.saveCheckpoint(trx, { runId, stream: name, sliceKey: slice.key, status: done ? 'done' : 'in_progress', cursor: page.nextCursor, addRecords: page.records.length, at });
                  await runs.heartbeat(trx, runId, at);
                });
                cursor = page.nextCursor;
                outcome[name].records += page.records.length;
                options.onProgress?.({ stream: name, slicesDone, slicesTotal: slices.length, records: outcome[name].records });
                await options.afterPage?.(name, slice.key);
                if (options.signal?.aborted) throw abortedError(options.signal);
              }
              break;
            } catch (e) {
              // The upstream forgot the delta state (410 syncStateNotFound / resyncRequired): read everything again.
              if (!incremental || !isDeltaStateLost(e)) throw e;
              ctx.logger.warn({ integrationId, runId, stream: name, slice: slice.key }, 'delta state expired upstream; reading the whole collection');
              await runs.clearDeltaLink(db, integrationId, name, slice.key);
              incremental = false;
              cursor = null;
              done = false;
            }
          }
          if (!done) await runs.saveCheckpoint(db, { runId, stream: name, sliceKey: slice.key, status: 'done', cursor: null, addRecords: 0, at: nowIso() });
          if (incremental) {
            for (const k of slice.covers ?? [slice.key]) incrementalSlices.add(k);
            outcome[name].incrementalSlices = (outcome[name].incrementalSlices ?? 0) + 1;
          }
          completed.push(...(slice.covers ?? [slice.key]));
        } catch (e) {
          if (isVigilError(e, 'authentication') || isAbort(e)) throw e;
          const { code, message } = errorCode(e);
          ctx.logger.warn({ integrationId, runId, stream: name, slice: slice.key, code }, 'slice failed');
          // A link refused by the link policy is kept nowhere: not the stored delta link it may have been (the next
          // round reads in full), not the slice's cursor.
          if (isForeignLink(e)) {
            if (incremental) await runs.clearDeltaLink(db, integrationId, name, slice.key);
            cursor = null;
          }
          await recordError(name, slice.key, code, message, cursor);
        }
        options.onProgress?.({ stream: name, slicesDone: ++slicesDone, slicesTotal: slices.length, records: outcome[name].records });
      });

      if (outcome[name].erroredSlices > 0 && !stream.parent) failedStreams.add(name);
      // A delta round sees only the changes: its removals were applied page by page, and unchanged rows stay.
      // History streams (retain) never mark anything deleted.
      if (stream.retain) continue;
      if (!stream.parent) {
        if (completed.length === 1 && incrementalSlices.size === 0) markedDeleted += await markUnseen(db, name, integrationId, runId, 'all', nowIso());
      } else {
        markedDeleted += await markUnseen(db, name, integrationId, runId, completed.filter((k) => !incrementalSlices.has(k)), nowIso(), stream.parent);
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
    await runs.finishRun(db, runId, { status: 'failed', finishedAt: nowIso(), durationMs: Date.now() - started, counts: outcome, errors, httpStats: Object.fromEntries(ctx.http.stats) });
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
