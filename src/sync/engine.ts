import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { describeAction } from '../core/actions.ts';
import { isGranted, permissionCapability, API_DISPLAY_NAMES } from '../core/capabilities.ts';
import { isVigilError, VigilError } from '../core/errors.ts';
import { DATAVERSE_ACCESS_REASONS } from '../core/remediation.ts';
import { newId } from '../core/ids.ts';
import { forEachLimited } from '../core/pool.ts';
import type { RunStatus } from '../core/types.ts';
import { ROOT_SLICE, runOrder, type AnyStream, type Slice, type Stream, type StreamContext, type StreamPage } from '../sources/stream.ts';
import { STREAM_RUN_ORDER, STREAMS, type StreamName, type StreamRecords } from '../sources/index.ts';
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

/** Streams by name, each yielding its registered record type (the registry, or a test's replacements). */
type StreamSet = { [S in StreamName]?: Stream<S, StreamRecords[S], string> };

/** Options of {@link collect}. */
export interface CollectOptions {
  db: Kysely<Database>;
  integrationId: string;
  ctx: StreamContext;
  /**
   * The streams to run, by name (run in the order their parent links give, {@link runOrder}); every parent a stream
   * names must be among them. @default the registry, `STREAMS` (sources/index.ts)
   */
  streams?: StreamSet;
  /** Slices read at once within one stream. @default 4 */
  concurrency?: number;
  /** Streams read at once, each after its parent ({@link STREAMS_AT_ONCE}); 1 reads them one after another. @default 4 */
  streamsAtOnce?: number;
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
export function abortedError(signal: AbortSignal): VigilError {
  return new VigilError('COLLECTION_ABORTED', `Collection stopped: ${(signal.reason as Error)?.message ?? 'aborted'}. It resumes from its last checkpoint.`);
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
  powerPlatform: 'Power Platform API',
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

/** A run in progress: what the steps of {@link collect} share. */
interface RunState {
  options: CollectOptions;
  db: Kysely<Database>;
  integrationId: string;
  ctx: StreamContext;
  runId: string;
  /** The streams of this run, by name. */
  streams: StreamSet;
  /** Number of streams in the run (progress reports). */
  streamsTotal: number;
  /** Checkpoints the run already holds (a resumed run), by `stream\u0000slice`. */
  checkpoints: Map<string, runs.CheckpointRow>;
  outcome: Record<StreamName, StreamOutcome>;
  errors: SliceError[];
  /** Root streams with an errored slice, and streams skipped: their children are not read. */
  failedStreams: Set<StreamName>;
  markedDeleted: number;
  /** The stream being run (named on the run's error when the run fails). */
  current: StreamName;
}

/** One stream's read within a run: what {@link runStream} and {@link readSlice} share. */
interface StreamRun {
  name: StreamName;
  stream: AnyStream;
  /** Position of the stream in the run, 1-based. */
  index: number;
  started: number;
  slicesTotal: number;
  slicesDone: number;
  /** A `full` run reading this stream from the start instead of its delta links. */
  fromStart: boolean;
  /** Parent keys of the slices whose round in this run was complete and full: only they may mark rows deleted. */
  readInFull: string[];
  fullSlices: number;
}

/**
 * Records an errored slice apart from an empty one: its error in the run's list, and a checkpoint `error` with the
 * cursor it stopped at and its read mode (a resumed run goes on from there).
 */
async function recordError(
  run: RunState,
  stream: StreamName,
  slice: string,
  code: string,
  message: string,
  cursor: string | null,
  readMode: ReadMode | null = null,
  explained: { reason?: string; fix?: string } = {},
): Promise<void> {
  run.errors.push({ stream, slice, code, message, ...explained });
  run.outcome[stream].erroredSlices++;
  await runs.saveCheckpoint(run.db, {
    runId: run.runId,
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
}

/** Reports a page or slice read of a stream. */
function progress(run: RunState, s: StreamRun): void {
  run.options.onProgress?.({
    stream: s.name,
    streamIndex: s.index,
    streamsTotal: run.streamsTotal,
    slicesDone: s.slicesDone,
    slicesTotal: s.slicesTotal,
    records: run.outcome[s.name].records,
  });
}

/** Reports a stream's end (read, reused or skipped). */
function finished(run: RunState, s: Pick<StreamRun, 'name' | 'index' | 'started'>, reusedFrom?: string): void {
  const o = run.outcome[s.name];
  run.options.onProgress?.({
    stream: s.name,
    streamIndex: s.index,
    streamsTotal: run.streamsTotal,
    slicesDone: o.slices,
    slicesTotal: o.slices,
    records: o.records,
    finished: {
      durationMs: reusedFrom ? 0 : Date.now() - s.started,
      erroredSlices: o.erroredSlices,
      incrementalSlices: o.incrementalSlices ?? 0,
      ...(reusedFrom ? { reusedFrom } : {}),
    },
  });
}

/**
 * Collects every stream for one integration: starts a run, or resumes the integration's unfinished run when its
 * owner process is gone; then runs the streams ({@link runStreams}: up to four at once, parents before children) and
 * records how the run ended. Steps: `collect → runStreams → runStream → readSlice → storePage`.
 *
 * @throws VigilError `conflict` / `COLLECTION_RUNNING` when a live process is collecting this integration;
 *   `conflict` / `COLLECTION_ABORTED` when stopped through `signal` (the run stays resumable);
 *   `authentication` errors (secret expired, app removed) after releasing the run (it resumes once fixed);
 *   any other error after recording the run as failed.
 */
export async function collect(options: CollectOptions): Promise<CollectResult> {
  const { db, integrationId, ctx } = options;
  const started = Date.now();
  // Injected streams (tests) run in the order of their parent links; the registry's order is computed once.
  const streams: StreamSet = options.streams ?? STREAMS;
  const order = options.streams ? (runOrder(Object.values(options.streams) as AnyStream[]) as StreamName[]) : STREAM_RUN_ORDER;
  const host = hostname();
  let runId: string;
  let resumed = false;
  const running = await runs.findRunningRun(db, integrationId);
  if (running) {
    if (ownerAlive(running)) {
      throw new VigilError(
        'COLLECTION_RUNNING',
        `Collection ${running.id} is already running for this integration (process ${running.owner_pid} on ${running.owner_host}).`,
        {
          remediation: (_, act) => `Wait for it to finish; to follow its progress, ${act({ do: 'listRuns', integration: integrationId })}.`,
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

  const run: RunState = {
    options,
    db,
    integrationId,
    ctx,
    runId,
    streams,
    streamsTotal: order.length,
    checkpoints: new Map((await runs.listCheckpoints(db, runId)).map((c) => [`${c.stream}\u0000${c.slice_key}`, c])),
    outcome: Object.fromEntries(Object.keys(STREAMS).map((s) => [s, { records: 0, slices: 0, erroredSlices: 0 }])) as Record<StreamName, StreamOutcome>,
    errors: [],
    failedStreams: new Set(),
    markedDeleted: 0,
    current: order[0] ?? STREAM_RUN_ORDER[0]!,
  };

  options.metrics?.runStarted();
  try {
    await runStreams(run, order, options.streamsAtOnce ?? STREAMS_AT_ONCE);
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
    run.errors.push({ stream: run.current, slice: '*', code, message });
    options.metrics?.runFinished('failed', (Date.now() - started) / 1000);
    await runs.finishRun(db, runId, {
      status: 'failed',
      finishedAt: nowIso(),
      durationMs: Date.now() - started,
      counts: run.outcome,
      errors: run.errors,
      httpStats: Object.fromEntries(ctx.http.stats),
    });
    ctx.logger.error({ integrationId, runId, code }, 'collection run failed');
    throw e;
  }

  // Streams run at once record their errors as they happen: reported in run order, whatever finished first.
  run.errors.sort((a, b) => order.indexOf(a.stream) - order.indexOf(b.stream));
  const { outcome, errors, markedDeleted } = run;
  const status: RunStatus = errors.length === 0 ? 'succeeded' : 'partial';
  const durationMs = Date.now() - started;
  options.metrics?.runFinished(status, durationMs / 1000);
  await runs.finishRun(db, runId, { status, finishedAt: nowIso(), durationMs, counts: outcome, errors, httpStats: Object.fromEntries(ctx.http.stats) });
  ctx.logger.info({ integrationId, runId, status, durationMs }, 'collection run finished');
  return { runId, status, resumed, streams: outcome, errors, markedDeleted, durationMs };
}

/**
 * Streams of one run read at the same time, by default. Each service paces its own requests (platform/http/budget.ts),
 * so streams of different services read one after another would add up their paced times: at 50,000 users, flows
 * (Power Platform, 6.6 min) and Teams apps (Teams GET per app and tenant, 27.7 min) read in turn took 1.30× the Teams
 * limit's floor (bench:collect, scale 1); read together the run is bounded by its slowest service.
 */
const STREAMS_AT_ONCE = 4;

/**
 * Runs the streams of `order` ({@link runStream}), up to `limit` at once, each started once its parent is finished
 * (a parent not in `order` counts as finished), the ready ones in run order. A stream that throws (abort,
 * authentication, a store error) stops further streams from starting; the ones under way end (a stop signal ends them
 * at once), then the first error is thrown with `run.current` naming its stream. Progress keeps each stream's position
 * in the run order. Hand-written: a dependency-aware pool is a few lines over the promises the engine already holds.
 * @throws the first error a stream threw; `COLLECTION_ABORTED` when the signal fired before a stream started.
 */
async function runStreams(run: RunState, order: readonly StreamName[], limit: number): Promise<void> {
  const signal = run.options.signal;
  const pending = [...order];
  const done = new Set<string>();
  const running = new Set<Promise<void>>();
  let failure: { name: StreamName; error: unknown } | undefined;
  const ready = (name: StreamName) => {
    const parent = (run.streams[name] as AnyStream).parent;
    return parent === undefined || done.has(parent) || !order.includes(parent as StreamName);
  };
  for (;;) {
    while (!failure && running.size < Math.max(1, limit)) {
      const at = pending.findIndex(ready);
      if (at < 0) break;
      const name = pending.splice(at, 1)[0]!;
      if (signal?.aborted) {
        failure = { name, error: abortedError(signal) };
        break;
      }
      run.current = name;
      const task: Promise<void> = runStream(run, name, order.indexOf(name) + 1).then(
        () => void done.add(name),
        (error: unknown) => void (failure ??= { name, error }),
      );
      running.add(task);
      void task.finally(() => running.delete(task));
    }
    if (running.size === 0) break;
    await Promise.race(running);
    // Let the settled task's `finally` remove it before slots are counted again.
    await Promise.resolve();
  }
  if (failure) {
    run.current = failure.name;
    throw failure.error;
  }
}

/**
 * Runs one stream of the run: skips it (recorded as an errored `*` slice) when its parent failed in this run or the
 * token lacks its permission; reuses it when its last complete read is within its refresh interval; otherwise lists
 * its slices (one for a root stream, one per parent row or batch of rows for a child), reads them
 * ({@link readSlice}, up to `concurrency` at once for a child stream) and, after a complete full round, marks the
 * objects it did not see as deleted.
 * @throws what {@link readSlice} rethrows (abort, authentication) and store errors: the run fails or stops.
 */
async function runStream(run: RunState, name: StreamName, index: number): Promise<void> {
  const { db, integrationId, ctx, runId, options, outcome } = run;
  const stream = run.streams[name] as AnyStream;
  const started = Date.now();
  // Children of a stream that failed in this run would read stale parents: record why they were skipped.
  if (stream.parent && run.failedStreams.has(stream.parent)) {
    run.failedStreams.add(name);
    outcome[name].slices = 1;
    await recordError(run, name, '*', 'PARENT_STREAM_FAILED', `Not collected: the ${stream.parent} stream failed in this run.`, null);
    finished(run, { name, index, started });
    return;
  }
  const capability = stream.capability ? permissionCapability(stream.capability) : undefined;
  // Capabilities judged by the API (Power BI) are not gated on `roles`: the stream runs and a refusal is recorded.
  if (capability && !capability.judgedByApi) {
    const roles = await ctx.tokens.roles(stream.resource(ctx, ROOT_SLICE));
    if (!isGranted(capability, roles)) {
      run.failedStreams.add(name);
      outcome[name].slices = 1;
      await recordError(
        run,
        name,
        '*',
        'MISSING_PERMISSION',
        `Not collected: the ${API_DISPLAY_NAMES[capability.api]} application permission ${capability.recommended} (or ${capability.anyOf.filter((p) => p !== capability.recommended).join(', ')}) is not granted.`,
        null,
        null,
        {
          fix: `Add the application permission ${capability.recommended} (App registrations > your app > API permissions > Add a permission > Application permissions), grant admin consent, then ${describeAction({ do: 'verifyIntegration' })}.`,
        },
      );
      finished(run, { name, index, started });
      return;
    }
  }

  // Costly streams with no incremental read upstream are reused while their last complete read is fresh.
  // A resumed run that already started the stream finishes it.
  if (stream.refreshSeconds && !options.full && ![...run.checkpoints.keys()].some((k) => k.startsWith(`${name}\u0000`))) {
    const last = await runs.lastCompleteRead(db, integrationId, name);
    if (last && Date.now() - Date.parse(last) < stream.refreshSeconds * 1000) {
      outcome[name].reusedFrom = last;
      ctx.logger.info({ integrationId, runId, stream: name, lastCompleteRead: last }, 'stream reused: its last complete read is within the refresh interval');
      finished(run, { name, index, started }, last);
      return;
    }
  }

  let slices: Slice[];
  if (!stream.parent) slices = [ROOT_SLICE];
  else {
    // Slices are small (keys and parameters); the parent rows behind them are read and dropped page by page.
    slices = [];
    for await (const parents of parentPages(db, integrationId, stream.parent, undefined, { raw: stream.parentRaw !== false })) {
      slices.push(...(stream.slices ? stream.slices(parents) : parents.map((p) => stream.slice!(p)).filter((s): s is Slice => s !== null)));
    }
  }
  outcome[name].slices = slices.length;
  const s: StreamRun = {
    name,
    stream,
    index,
    started,
    slicesTotal: slices.length,
    slicesDone: 0,
    // A `full` run reads delta streams from the start, except history streams: they mark nothing deleted, so a
    // full round of them would learn nothing a delta round does not (and re-read every user's whole history).
    fromStart: options.full === true && !stream.retain,
    readInFull: [],
    fullSlices: 0,
  };
  await forEachLimited(slices, stream.parent ? (options.concurrency ?? 4) : 1, (slice) => readSlice(run, s, slice));

  if (outcome[name].erroredSlices > 0 && !stream.parent) run.failedStreams.add(name);
  finished(run, s);
  // Only a complete full round tells which objects are gone: a delta round sees only the changes (its removals
  // were applied page by page, unchanged rows stay). History streams (retain) never mark anything deleted.
  if (stream.retain) return;
  if (!stream.parent) {
    if (s.fullSlices === slices.length && outcome[name].erroredSlices === 0)
      run.markedDeleted += await markUnseen(db, name, integrationId, runId, 'all', nowIso());
  } else {
    run.markedDeleted += await markUnseen(db, name, integrationId, runId, s.readInFull, nowIso(), stream.parent);
  }
}

/** Counts a slice done in this run, by how it was read: a full round's parents may mark rows deleted. */
function sliceDone(run: RunState, s: StreamRun, slice: Slice, mode: ReadMode | null): void {
  if (mode === 'full') {
    s.readInFull.push(...(slice.covers ?? [slice.key]));
    s.fullSlices++;
  } else run.outcome[s.name].incrementalSlices = (run.outcome[s.name].incrementalSlices ?? 0) + 1;
}

/**
 * Reads one slice of a stream page by page, each page stored with its checkpoint ({@link storePage}). Where it starts:
 * a slice done before a crash is not read again (unless a `full` run finds it read by delta); a round stopped mid-way
 * goes on from its cursor in its own mode; otherwise a new round starts from the slice's stored delta link (delta)
 * or from the start (full). A delta state lost upstream (410) turns the round into a full one from the start.
 * An upstream error is recorded as the slice's error ({@link recordError}) and the run goes on.
 * @throws VigilError `authentication` and `COLLECTION_ABORTED` (the run stops, resumable); store errors.
 */
async function readSlice(run: RunState, s: StreamRun, slice: Slice): Promise<void> {
  const { db, integrationId, ctx, runId, options, outcome } = run;
  const { name, stream } = s;
  const cp = run.checkpoints.get(`${name}\u0000${slice.key}`);
  outcome[name].records += cp?.records ?? 0;
  // How this run read the slice so far (checkpoints from before migration 0011 hold no mode: a stream without
  // delta is always read in full; for a delta stream it is unknown).
  const stored: ReadMode | null = (cp?.read_mode as ReadMode | null | undefined) ?? (cp && !stream.delta ? 'full' : null);
  // Done before a crash: nothing to read again — unless this is a `full` run and the round was a delta one.
  if (cp?.status === 'done' && !(s.fromStart && stored !== 'full')) {
    sliceDone(run, s, slice, stored);
    s.slicesDone++;
    progress(run, s);
    return;
  }
  let mode: ReadMode;
  let cursor: string | null;
  if (cp && cp.status !== 'done' && stored !== null && !(s.fromStart && stored === 'delta') && (stored === 'full' || cp.cursor !== null)) {
    // A round of this run stopped mid-way (crash or errored slice): it goes on from its cursor, in its mode.
    mode = stored;
    cursor = cp.cursor;
  } else {
    // A new round. Delta-capable streams start from the delta link of their previous complete round (only the
    // changes come back, removals as ids), unless the run is `full`: then everything is read from the start,
    // and the round's end stores a new delta link.
    const link = stream.delta && !s.fromStart ? await runs.getDeltaLink(db, integrationId, name, slice.key) : undefined;
    mode = link ? 'delta' : 'full';
    cursor = link ?? null;
  }
  let done = false;
  try {
    for (;;) {
      try {
        for await (const page of stream.read(ctx, slice, cursor)) {
          done = await storePage(run, name, slice, page, mode);
          cursor = page.nextCursor;
          outcome[name].records += page.records.length;
          progress(run, s);
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
    sliceDone(run, s, slice, mode);
  } catch (e) {
    // Stopped while waiting inside the read (a throttling budget's wait ends with the signal): the run stops, the slice
    // is not failed.
    if (options.signal?.aborted && !isAbort(e)) throw abortedError(options.signal);
    if (isVigilError(e, 'authentication') || isAbort(e)) throw e;
    const { code, message, ...explained } = describeError(e);
    ctx.logger.warn({ integrationId, runId, stream: name, slice: slice.key, code }, 'slice failed');
    // A link refused by the link policy is kept nowhere: not the stored delta link it may have been (the next
    // round reads in full), not the slice's cursor.
    if (isForeignLink(e)) {
      if (mode === 'delta') await runs.clearDeltaLink(db, integrationId, name, slice.key);
      cursor = null;
    }
    await recordError(run, name, slice.key, code, message, cursor, mode, explained);
  }
  s.slicesDone++;
  progress(run, s);
}

/**
 * Stores one page in one transaction: its records upserted (idempotent: a page stored again after a crash changes
 * nothing), the ids a delta round reports removed marked deleted, on a round's last page the next delta link, the
 * slice's checkpoint (next cursor, read mode, records added; `done` on the last page) and the run's heartbeat. A crash
 * leaves either all of it or none.
 * @returns true when this was the slice's last page (`nextCursor` null).
 */
async function storePage(run: RunState, name: StreamName, slice: Slice, page: StreamPage<unknown>, mode: ReadMode): Promise<boolean> {
  const { db, integrationId, runId } = run;
  const at = nowIso();
  const done = page.nextCursor === null;
  await db.transaction().execute(async (trx) => {
    await upsertRecords(trx, name, integrationId, runId, page.records as StreamRecords[StreamName][], at);
    if (page.removed?.length) run.markedDeleted += await markDeleted(trx, name, integrationId, page.removed, at);
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
  return done;
}
