/**
 * The job-queue port: collections of one integration are jobs with a declared policy. Two implementations: an
 * in-process queue for a single SQLite process, and pg-boss over PostgreSQL for any number of workers.
 * Model: pg-boss `docs/api/workers.md` (singletonKey, retryBackoff, expireInSeconds, deadLetter); a cron tick only
 * enqueues.
 */

/** Name of the queue of collection jobs, and of its dead-letter queue. */
export const COLLECT_QUEUE = 'vigil-collect';
export const COLLECT_DEAD_LETTER_QUEUE = 'vigil-collect-dead';

/** The policy of collection jobs. */
export interface JobPolicy {
  /** Retries after the first attempt. @default 4 */
  retryLimit: number;
  /** First retry delay in seconds; doubled each retry, with jitter. @default 30 */
  retryDelaySeconds: number;
  /**
   * A job that reported no progress for this long (see {@link CollectionJob.progress}) is considered lost — its worker
   * died or it is stuck — and retried: its worker aborts it, and pg-boss expires it a little later if the worker is
   * gone ({@link ProgressWatchdog}). A job making progress runs as long as it needs (up to {@link MAX_JOB_SECONDS}); a
   * collection cut by the expiry resumes from its checkpoints. @default 21600 (6 hours)
   */
  expireInSeconds: number;
}

/** Default job policy. */
export const DEFAULT_JOB_POLICY: JobPolicy = { retryLimit: 4, retryDelaySeconds: 30, expireInSeconds: 21_600 };

/** A collection job as handed to a handler. */
export interface CollectionJob {
  id: string;
  integrationId: string;
  /** When the job was enqueued (ISO 8601 UTC); empty for jobs enqueued by an older release. */
  enqueuedAt: string;
  /**
   * Aborted when the worker stops, when the job made no progress for the policy's `expireInSeconds`, or after
   * {@link MAX_JOB_SECONDS}: stop at the next checkpoint and throw.
   */
  signal: AbortSignal;
  /**
   * The handler reports progress (a page stored, a check evaluated, an audit blob stored): the job's expiry starts
   * again from now. Cheap to call often.
   */
  progress(): void;
}

/**
 * The longest a job may run, progress or not: pg-boss 10 refuses an expiry of 24 hours or more
 * (`attorney.js` `MAX_EXPIRATION_HOURS`) and fails a job whose handler outlives its expiry, so one hour under it.
 */
export const MAX_JOB_SECONDS = 23 * 3600;

/**
 * The expiry of a job from its progress, shared by both queues. pg-boss 10 has no heartbeat nor any way to extend a
 * running job's expiry (its `work()` fails the job once the handler outlives the `expireInSeconds` it was fetched
 * with, and its maintenance fails every active job whose `started_on + expire_in` is past), so:
 * - jobs are created with the longest expiry, {@link MAX_JOB_SECONDS} (pg-boss's own timer never cuts a job that
 *   moves on);
 * - the watchdog aborts the job when it reported no progress for `stallSeconds` (the policy's `expireInSeconds`), or
 *   at the maximum;
 * - `extend` (pg-boss: the job's row moved so that it expires `seconds` from now) keeps the stored
 *   expiry `stallSeconds` + {@link ProgressWatchdog.graceSeconds} ahead of the last progress: a worker that died stops
 *   extending, and pg-boss's maintenance expires its job (retried elsewhere) that long after its last progress;
 *   a live worker's abort comes first, with the grace to checkpoint and fail the job itself.
 * The stored expiry is written when the job starts and then only when it is less than half the grace ahead of where
 * it must be, so a collection reporting every page writes it at most once per half grace.
 */
export class ProgressWatchdog {
  /** Seconds the stored expiry runs past the watchdog's own deadline: 1/4 of the stall window, 2 to 60 s. */
  readonly graceSeconds: number;
  private deadline = 0;
  /** Until when (epoch ms) the stored expiry runs, as last extended. */
  private storedUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly hardStop: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly stallSeconds: number,
    private readonly abort: (reason: Error) => void,
    private readonly extend?: (seconds: number) => Promise<void>,
    maxSeconds = MAX_JOB_SECONDS,
    private readonly now: () => number = Date.now,
  ) {
    this.graceSeconds = Math.min(60, Math.max(2, stallSeconds / 4));
    this.hardStop = setTimeout(
      () => this.abort(new Error(`job ran for ${maxSeconds} s, the longest a job may run`)),
      Math.max(0, maxSeconds - this.graceSeconds) * 1000,
    );
    this.hardStop.unref();
    this.progress();
  }

  /** Progress now: the deadline moves to now + the stall window; the stored expiry follows when it must. */
  progress(): void {
    if (this.stopped) return;
    const now = this.now();
    this.deadline = now + this.stallSeconds * 1000;
    this.arm();
    if (this.extend && this.storedUntil - this.deadline < (this.graceSeconds * 1000) / 2) {
      const seconds = this.stallSeconds + this.graceSeconds;
      this.storedUntil = now + seconds * 1000;
      // A failed write leaves the stored expiry where it was: the job then expires sooner, never later. Retried at the
      // next progress.
      this.extend(seconds).catch(() => {
        this.storedUntil = 0;
      });
    }
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (this.now() >= this.deadline) this.abort(new Error(`job made no progress for ${this.stallSeconds} s`));
        else this.arm();
      },
      Math.max(0, this.deadline - this.now()),
    );
    this.timer.unref();
  }

  /** The job ended: no more aborts. */
  stop(): void {
    clearTimeout(this.timer);
    clearTimeout(this.hardStop);
    this.timer = undefined;
    this.stopped = true;
  }
}

/** A job that exhausted its retries. */
export interface DeadLetter {
  id: string;
  integrationId: string;
  error: string | null;
  failedAt: string | null;
}

/** The queue. */
export interface JobQueue {
  /** Connects and creates the queues (idempotent). */
  start(): Promise<void>;
  /**
   * Enqueues a collection of one integration. At most one job per integration is queued and one active at a time
   * (singleton key = integration id); returns null when one is already queued.
   */
  enqueueCollection(integrationId: string): Promise<string | null>;
  /** Handles jobs until {@link stop}: `concurrency` jobs at once in this process. */
  work(handler: (job: CollectionJob) => Promise<void>, options: { concurrency: number }): Promise<void>;
  /**
   * Stops taking jobs; aborts the signals of running jobs and waits up to `timeoutSeconds` for their handlers to
   * checkpoint and return.
   */
  stop(options?: { timeoutSeconds?: number }): Promise<void>;
  /** Jobs that exhausted their retries (newest first). */
  deadLetters(): Promise<DeadLetter[]>;
  /** Number of collection jobs queued or running. */
  pending(): Promise<number>;
}

/** Exponential backoff with full jitter, in seconds: uniform in [0, base × 2^retry]. */
export function retryDelaySeconds(policy: JobPolicy, retry: number, random = Math.random): number {
  return random() * policy.retryDelaySeconds * 2 ** retry;
}
