import PgBoss from 'pg-boss';
import type { Logger } from '../platform/log/index.ts';
import {
  COLLECT_DEAD_LETTER_QUEUE,
  COLLECT_QUEUE,
  DEFAULT_JOB_POLICY,
  MAX_JOB_SECONDS,
  ProgressWatchdog,
  type CollectionJob,
  type DeadLetter,
  type JobPolicy,
  type JobQueue,
} from './queue.ts';

/**
 * The job queue on PostgreSQL through pg-boss 10: shared by `vigil serve` and any number of `vigil worker`
 * processes. Collection jobs use the `stately` policy with the integration id as singleton key (at most one queued
 * and one active job per integration), retries with exponential backoff, an expiry counted from the job's last
 * progress after which a job whose worker died is retried elsewhere ({@link ProgressWatchdog}: pg-boss 10 has no
 * heartbeat, so the queue's expiry is the longest allowed and each job's stored `expire_in` follows its progress),
 * and a dead-letter queue.
 *
 * Source: pg-boss 10 docs (`docs/api/queues.md` policies, `docs/api/jobs.md` options, `docs/api/workers.md`) and
 * source (`manager.js` `work`: the handler is failed once it outlives the fetched `expireInSeconds`; `plans.js`
 * `failJobsByTimeout`: an active job expires when `started_on + expire_in` is past).
 */

/** Options of {@link PgBossQueue}. */
export interface PgBossQueueOptions {
  connectionString: string;
  /** Schema of pg-boss's tables. */
  schema: string;
  policy?: JobPolicy;
  /** How often pg-boss expires lost jobs and retries failed ones, seconds. @default 60 */
  maintenanceIntervalSeconds?: number;
  /** How often an idle worker polls, seconds. @default 2 */
  pollingIntervalSeconds?: number;
  logger: Logger;
}

export class PgBossQueue implements JobQueue {
  private readonly boss: PgBoss;
  private readonly policy: JobPolicy;
  private readonly active = new Map<string, AbortController>();

  constructor(private readonly options: PgBossQueueOptions) {
    this.policy = options.policy ?? DEFAULT_JOB_POLICY;
    this.boss = new PgBoss({
      connectionString: options.connectionString,
      schema: options.schema,
      max: 4,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
      application_name: 'vigil',
    });
    this.boss.on('error', (e) => options.logger.error({ err: { message: e.message } }, 'job queue error'));
  }

  /**
   * Starts pg-boss and creates the queues. Several processes starting at once on a new database race to create
   * pg-boss's schema and the queues: a deadlock (40P01) or duplicate (23505) is retried after a random pause.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce();
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (attempt >= 5 || (code !== '40P01' && code !== '23505')) throw e;
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 800));
      }
    }
  }

  private async startOnce(): Promise<void> {
    await this.boss.start();
    if (!(await this.boss.getQueue(COLLECT_DEAD_LETTER_QUEUE)))
      await this.boss.createQueue(COLLECT_DEAD_LETTER_QUEUE, { name: COLLECT_DEAD_LETTER_QUEUE, retentionDays: 30 });
    const queue: PgBoss.Queue = {
      name: COLLECT_QUEUE,
      policy: 'stately',
      retryLimit: this.policy.retryLimit,
      retryDelay: this.policy.retryDelaySeconds,
      retryBackoff: true,
      // The longest expiry pg-boss allows: the job's own expiry follows its progress (see work()).
      expireInSeconds: MAX_JOB_SECONDS,
      deadLetter: COLLECT_DEAD_LETTER_QUEUE,
    };
    if (await this.boss.getQueue(COLLECT_QUEUE)) await this.boss.updateQueue(COLLECT_QUEUE, queue);
    else await this.boss.createQueue(COLLECT_QUEUE, queue);
  }

  async enqueueCollection(integrationId: string): Promise<string | null> {
    return this.boss.send(COLLECT_QUEUE, { integrationId, enqueuedAt: new Date().toISOString() }, { singletonKey: integrationId });
  }

  async work(handler: (job: CollectionJob) => Promise<void>, options: { concurrency: number }): Promise<void> {
    for (let i = 0; i < Math.max(1, options.concurrency); i++) {
      await this.boss.work<{ integrationId: string; enqueuedAt?: string }>(
        COLLECT_QUEUE,
        { batchSize: 1, pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2 },
        async ([job]) => {
          if (!job) return;
          const controller = new AbortController();
          const watchdog = new ProgressWatchdog(
            this.policy.expireInSeconds,
            (reason) => controller.abort(reason),
            (seconds) => this.extendExpiry(job.id, seconds),
            Math.min(MAX_JOB_SECONDS, job.expireInSeconds),
          );
          this.active.set(job.id, controller);
          try {
            await handler({
              id: job.id,
              integrationId: job.data.integrationId,
              enqueuedAt: job.data.enqueuedAt ?? '',
              signal: controller.signal,
              progress: () => watchdog.progress(),
            });
          } finally {
            watchdog.stop();
            this.active.delete(job.id);
          }
        },
      );
    }
  }

  /**
   * Sets a running job's stored expiry to `seconds` from now: pg-boss's maintenance expires an active job once
   * `started_on + expire_in` is past (`plans.js` `failJobsByTimeout`), so `started_on` is moved to
   * `now() + seconds - expire_in`. `expire_in` itself is left alone: a failed job's row is copied into its retry, whose
   * fetch resets `started_on` and hands the worker `expire_in` as the time pg-boss lets the handler run — a changed
   * `expire_in` would cut the retry short. (`started_on` is otherwise only shown, and only tested for null when a job
   * is fetched again.) Does nothing once the job is no longer active.
   */
  private async extendExpiry(jobId: string, seconds: number): Promise<void> {
    await this.boss
      .getDb()
      .executeSql(
        `update ${this.options.schema}.job set started_on = now() - expire_in + make_interval(secs => $3) where name = $1 and id = $2 and state = 'active'`,
        [COLLECT_QUEUE, jobId, seconds],
      );
  }

  async stop(options: { timeoutSeconds?: number } = {}): Promise<void> {
    await this.boss.offWork(COLLECT_QUEUE).catch(() => undefined);
    for (const c of this.active.values()) c.abort(new Error('worker stopping'));
    await this.boss.stop({ graceful: true, wait: true, timeout: (options.timeoutSeconds ?? 30) * 1000 });
  }

  async deadLetters(): Promise<DeadLetter[]> {
    const { rows } = await this.boss
      .getDb()
      .executeSql(`select id, data, output, created_on from ${this.options.schema}.job where name = $1 order by created_on desc limit 100`, [
        COLLECT_DEAD_LETTER_QUEUE,
      ]);
    return rows.map((r: { id: string; data: { integrationId?: string }; output: { message?: string } | null; created_on: Date }) => ({
      id: r.id,
      integrationId: r.data?.integrationId ?? '',
      error: r.output?.message ?? null,
      failedAt: r.created_on ? new Date(r.created_on).toISOString() : null,
    }));
  }

  async pending(): Promise<number> {
    return this.boss.getQueueSize(COLLECT_QUEUE, { before: 'completed' });
  }
}
