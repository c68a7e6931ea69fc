import ora, { type Ora } from 'ora';
import type { AuditProgress } from '../sync/audit.ts';
import type { Progress } from '../sync/engine.ts';

/**
 * Progress of long commands (`vigil collect`, `vigil audit`, the demo) on stderr, so stdout keeps only the result:
 * - on a TTY, one live line drawn by ora (spinner, redraw, cursor): streams done of the total, records, elapsed time,
 *   and an ETA only where it can be known — within a sliced stream, from the slices done so far (nothing is said
 *   about the whole run: streams differ too much in cost for a run-wide estimate to be right);
 * - otherwise (pipes, CI logs, files), one plain line per finished step (stream, check phase, content type) and
 *   nothing animated.
 * Commands run with `--json` use {@link silentProgress}.
 */
export interface ProgressReporter {
  /** A collection's page, slice or finished stream. */
  collect(p: Progress): void;
  /** The check evaluation: checks done of the total (0 when it starts). */
  evaluate(done: number, total: number): void;
  /** An audit ingestion's blob or finished content type. */
  audit(p: AuditProgress): void;
  /** The detections start (after the audit ingestion). */
  detect(): void;
  /** Clears the live line (call also when the command fails). */
  done(): void;
  /** Same as {@link collect} (the demo's name for it). */
  update(p: Progress): void;
}

/** A reporter that shows nothing (`--json`). */
export const silentProgress: ProgressReporter = {
  collect: () => undefined,
  evaluate: () => undefined,
  audit: () => undefined,
  detect: () => undefined,
  done: () => undefined,
  update: () => undefined,
};

/** `m:ss` (or `h:mm:ss`) of a duration in milliseconds. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

const n = (x: number) => x.toLocaleString('en-US');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const blobs = (x: number) => `${n(x)} blob${x === 1 ? '' : 's'}`;

/**
 * Estimated time left in a sliced stream, milliseconds, from the time its first `done` slices took; undefined while
 * too little is known to say (fewer than 3 slices done, or a stream of one slice).
 */
export function sliceEta(done: number, total: number, elapsedMs: number): number | undefined {
  if (total <= 1 || done < 3 || done >= total) return undefined;
  return (elapsedMs / done) * (total - done);
}

/** What the reporter keeps of a collection between reports. */
interface CollectState {
  stream: string;
  streamStarted: number;
  /** Records of finished streams. */
  recordsBefore: number;
  last: Progress;
}

/** The live line of a collection. */
function collectText(p: Progress, recordsTotal: number, elapsedMs: number, streamElapsedMs: number): string {
  const parts = [`collecting ${p.stream} (stream ${p.streamIndex}/${p.streamsTotal})`];
  if (p.slicesTotal > 1) parts.push(`${n(p.slicesDone)}/${n(p.slicesTotal)} slices`);
  parts.push(`${n(recordsTotal)} records`, `${clock(elapsedMs)} elapsed`);
  const eta = sliceEta(p.slicesDone, p.slicesTotal, streamElapsedMs);
  if (eta !== undefined && eta >= 1000) parts.push(`~${clock(eta)} left in this stream`);
  return parts.join(' · ');
}

/** The line of a finished stream (not a TTY). */
function streamDoneLine(p: Progress): string {
  const f = p.finished!;
  const head = `[${String(p.streamIndex).padStart(String(p.streamsTotal).length)}/${p.streamsTotal}] ${p.stream}`;
  if (f.reusedFrom) return `${head}: reused (read ${f.reusedFrom})`;
  const delta = f.incrementalSlices > 0 && f.incrementalSlices === p.slicesTotal ? ' (changes since the last run)' : '';
  return `${head}: ${n(p.records)} records${delta} in ${seconds(f.durationMs)}${f.erroredSlices ? `, ${f.erroredSlices} errored slice${f.erroredSlices === 1 ? '' : 's'}` : ''}`;
}

/** The live line of an audit ingestion. */
function auditText(p: AuditProgress, recordsTotal: number, elapsedMs: number): string {
  return `ingesting ${p.contentType} (${p.index}/${p.total}) · ${blobs(p.blobs)} · ${n(p.stored)} records${p.duplicates ? ` (${n(p.duplicates)} duplicates)` : ''} · ${n(recordsTotal)} records in all · ${clock(elapsedMs)} elapsed`;
}

/** The line of a finished content type (not a TTY). */
function contentTypeDoneLine(p: AuditProgress): string {
  const f = p.finished!;
  return `[${p.index}/${p.total}] ${p.contentType}: ${f.status}, ${blobs(p.blobs)}, ${n(p.stored)} records${p.duplicates ? ` (${n(p.duplicates)} duplicates)` : ''} in ${seconds(f.durationMs)}`;
}

/**
 * Creates the reporter for `stream` (default stderr): a live ora line when it is a TTY, plain lines otherwise.
 * @param options.now clock, milliseconds (tests)
 */
export function createProgress(stream: NodeJS.WriteStream = process.stderr, options: { now?: () => number } = {}): ProgressReporter {
  const now = options.now ?? Date.now;
  const live = Boolean(stream.isTTY);
  const started = now();
  let spinner: Ora | undefined;
  let rendered = 0;
  const show = (text: string) => {
    if (!live) return;
    // One line: longer text would wrap, and the spinner would redraw two.
    const room = (stream.columns || 80) - 3;
    if ([...text].length > room) text = `${[...text].slice(0, room - 1).join('')}…`;
    if (!spinner) spinner = ora({ stream, text, discardStdin: false, hideCursor: true }).start();
    else {
      spinner.text = text;
      // ora redraws on a timer, which starves while synchronous SQLite work keeps the event loop busy (the check
      // evaluation): draw now, at most every 100 ms.
      if (now() - rendered >= 100) {
        rendered = now();
        spinner.render();
      }
    }
  };
  const line = (text: string) => {
    if (!live) stream.write(`${text}\n`);
  };
  let c: CollectState | undefined;
  let evaluation: { started: number } | undefined;
  let auditRecordsBefore = 0;

  const collect = (p: Progress) => {
    if (!c || c.stream !== p.stream) c = { stream: p.stream, streamStarted: now(), recordsBefore: c ? c.recordsBefore + c.last.records : 0, last: p };
    c.last = p;
    if (p.finished) line(streamDoneLine(p));
    show(collectText(p, c.recordsBefore + p.records, now() - started, now() - c.streamStarted));
  };
  return {
    collect,
    update: collect,
    evaluate(done, total) {
      if (!evaluation) {
        evaluation = { started: now() };
        line(`evaluating ${total} checks`);
      }
      show(`evaluating checks ${done}/${total} · ${clock(now() - started)} elapsed`);
      if (done === total) line(`checks evaluated: ${total} in ${seconds(now() - evaluation.started)}`);
    },
    audit(p) {
      if (p.finished) {
        line(contentTypeDoneLine(p));
        auditRecordsBefore += p.stored;
      }
      show(auditText(p, auditRecordsBefore + (p.finished ? 0 : p.stored), now() - started));
    },
    detect() {
      line('running detections');
      show(`running detections · ${clock(now() - started)} elapsed`);
    },
    done() {
      spinner?.stop();
      spinner = undefined;
    },
  };
}
