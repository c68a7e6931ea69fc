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
   * A job running longer than this is considered lost (its worker died) and retried; a collection cut by it resumes
   * from its checkpoints. @default 21600 (6 hours)
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
  /** Aborted when the worker stops: stop at the next checkpoint and throw. */
  signal: AbortSignal;
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
