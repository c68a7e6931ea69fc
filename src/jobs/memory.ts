import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/log/index.ts';
import { DEFAULT_JOB_POLICY, ProgressWatchdog, retryDelaySeconds, type CollectionJob, type DeadLetter, type JobPolicy, type JobQueue } from './queue.ts';

/**
 * The in-process queue for a single process on SQLite (`vigil serve`). Same policy as the pg-boss queue: one queued
 * and one active job per integration, retries with exponential backoff and full jitter, an expiry that aborts a job
 * that made no progress for too long ({@link ProgressWatchdog}), and a dead-letter list. Hand-written because pg-boss needs PostgreSQL and the job state here
 * need not outlive the process: after a crash the scheduler enqueues again and the collection resumes from its
 * checkpoints.
 */
export class InProcessQueue implements JobQueue {
  private readonly queued: { id: string; integrationId: string; enqueuedAt: string; retry: number; notBefore: number }[] = [];
  private readonly active = new Map<string, { integrationId: string; controller: AbortController; done: Promise<void> }>();
  private readonly dead: DeadLetter[] = [];
  private handler: ((job: CollectionJob) => Promise<void>) | undefined;
  private concurrency = 1;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly policy: JobPolicy = DEFAULT_JOB_POLICY,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
  }

  async enqueueCollection(integrationId: string): Promise<string | null> {
    if (this.stopped || this.queued.some((j) => j.integrationId === integrationId)) return null;
    const id = randomUUID();
    this.queued.push({ id, integrationId, enqueuedAt: new Date().toISOString(), retry: 0, notBefore: 0 });
    this.pump();
    return id;
  }

  async work(handler: (job: CollectionJob) => Promise<void>, options: { concurrency: number }): Promise<void> {
    this.handler = handler;
    this.concurrency = Math.max(1, options.concurrency);
    this.timer = setInterval(() => this.pump(), 1000);
    this.timer.unref();
    this.pump();
  }

  private pump(): void {
    if (!this.handler || this.stopped) return;
    const now = Date.now();
    while (this.active.size < this.concurrency) {
      const busy = new Set([...this.active.values()].map((a) => a.integrationId));
      const index = this.queued.findIndex((j) => j.notBefore <= now && !busy.has(j.integrationId));
      if (index < 0) return;
      const [job] = this.queued.splice(index, 1);
      this.run(job!);
    }
  }

  private run(job: { id: string; integrationId: string; enqueuedAt: string; retry: number }): void {
    const controller = new AbortController();
    // Expiry from the last progress, not from the start: a collection that moves on is never cut (one process: no
    // stored expiry to extend).
    const watchdog = new ProgressWatchdog(this.policy.expireInSeconds, (reason) => controller.abort(reason));
    const done = this.handler!({
      id: job.id,
      integrationId: job.integrationId,
      enqueuedAt: job.enqueuedAt,
      signal: controller.signal,
      progress: () => watchdog.progress(),
    })
      .then(
        () => this.logger.info({ jobId: job.id, integrationId: job.integrationId }, 'collection job completed'),
        (e: unknown) => {
          const message = (e as Error)?.message ?? String(e);
          if (this.stopped) return;
          if (job.retry >= this.policy.retryLimit) {
            this.dead.unshift({ id: job.id, integrationId: job.integrationId, error: message, failedAt: new Date().toISOString() });
            this.logger.error({ jobId: job.id, integrationId: job.integrationId, error: message }, 'collection job dead-lettered');
            return;
          }
          const delay = retryDelaySeconds(this.policy, job.retry);
          this.logger.warn({ jobId: job.id, integrationId: job.integrationId, retryInSeconds: delay, error: message }, 'collection job failed; retrying');
          this.queued.push({ ...job, retry: job.retry + 1, notBefore: Date.now() + delay * 1000 });
        },
      )
      .finally(() => {
        watchdog.stop();
        this.active.delete(job.id);
        this.pump();
      });
    this.active.set(job.id, { integrationId: job.integrationId, controller, done });
  }

  async stop(options: { timeoutSeconds?: number } = {}): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const a of this.active.values()) a.controller.abort(new Error('worker stopping'));
    const all = Promise.all([...this.active.values()].map((a) => a.done));
    await Promise.race([all, new Promise((r) => setTimeout(r, (options.timeoutSeconds ?? 30) * 1000).unref())]);
  }

  async deadLetters(): Promise<DeadLetter[]> {
    return [...this.dead];
  }

  async pending(): Promise<number> {
    return this.queued.length + this.active.size;
  }
}
