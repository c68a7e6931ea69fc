import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { InProcessQueue } from '../../src/jobs/memory.ts';
import { PgBossQueue } from '../../src/jobs/pgboss.ts';
import { MAX_JOB_SECONDS, ProgressWatchdog, type CollectionJob, type JobPolicy, type JobQueue } from '../../src/jobs/queue.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { dropSchema, TEST_DATABASE_URL } from '../store/dialects.ts';
import { until } from '../support/process.ts';

const policy = { retryLimit: 2, retryDelaySeconds: 1, expireInSeconds: 30 };
/** Reads pg-boss's job rows (connects on first use). */
const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
afterAll(() => pool.end());

type Made = { queue: JobQueue; cleanup: () => Promise<void>; schema?: string };
const queues: [string, (p?: Partial<JobPolicy>) => Promise<Made>][] = [
  ['in-process', async (p) => ({ queue: new InProcessQueue(silentLogger(), { ...policy, retryDelaySeconds: 0.05, ...p }), cleanup: async () => undefined })],
  [
    'pg-boss',
    async (p) => {
      const schema = `vigil_test_${randomBytes(6).toString('hex')}_pgboss`;
      const queue = new PgBossQueue({
        connectionString: TEST_DATABASE_URL,
        schema,
        policy: { ...policy, ...p },
        maintenanceIntervalSeconds: 1,
        pollingIntervalSeconds: 0.5,
        logger: silentLogger(),
      });
      return { queue, cleanup: () => dropSchema(schema), schema };
    },
  ],
];

describe.each(queues)('%s job queue', (_name, make) => {
  let cleanup: (() => Promise<void>) | undefined;
  let queue: JobQueue | undefined;
  afterEach(async () => {
    await queue?.stop({ timeoutSeconds: 5 });
    await cleanup?.();
  });

  it('keeps one queued job per integration and never runs one integration twice at once', { timeout: 120_000 }, async () => {
    ({ queue, cleanup } = await make());
    await queue.start();
    expect(await queue.enqueueCollection('int_a')).toBeTruthy();
    expect(await queue.enqueueCollection('int_a')).toBeNull();
    expect(await queue.enqueueCollection('int_b')).toBeTruthy();
    let running = 0;
    let maxRunningA = 0;
    const done: string[] = [];
    let requeued = false;
    await queue.work(
      async (job) => {
        if (job.integrationId === 'int_a') maxRunningA = Math.max(maxRunningA, ++running);
        await new Promise((r) => setTimeout(r, 300));
        // While int_a runs, one more may queue behind it, but it must not start yet.
        if (job.integrationId === 'int_a' && !requeued) {
          requeued = true;
          expect(await queue!.enqueueCollection('int_a')).toBeTruthy();
        }
        if (job.integrationId === 'int_a') running--;
        done.push(job.integrationId);
      },
      { concurrency: 3 },
    );
    await until('three jobs', () => done.length === 3, 60_000);
    expect(done.sort()).toEqual(['int_a', 'int_a', 'int_b']);
    expect(maxRunningA).toBe(1);
  });

  it('retries a failing job with backoff and dead-letters it after the retry limit', async () => {
    ({ queue, cleanup } = await make());
    await queue.start();
    const attempts: number[] = [];
    await queue.work(
      async () => {
        attempts.push(Date.now());
        throw new Error('upstream down');
      },
      { concurrency: 1 },
    );
    await queue.enqueueCollection('int_dead');
    await until('dead letter', async () => (await queue!.deadLetters()).length === 1, 60_000);
    expect(attempts).toHaveLength(1 + policy.retryLimit);
    expect((await queue.deadLetters())[0]).toMatchObject({ integrationId: 'int_dead' });
  }, 90_000);

  it('a job making progress outlives its expiry; once it stops making progress it is aborted after the expiry', async () => {
    // Expiry 2 s, as a job without progress: the old queues aborted the job 2 s after it started, progress or not.
    let schema: string | undefined;
    ({ queue, cleanup, schema } = await make({ expireInSeconds: 2 }));
    await queue.start();
    const timeline: { abortedWhileProgressing: boolean; lastProgress: number; abortedAt: number; storedAhead: number[] } = {
      abortedWhileProgressing: false,
      lastProgress: 0,
      abortedAt: 0,
      storedAhead: [],
    };
    await queue.work(
      async (job) => {
        // 4 s of progress every 300 ms: twice the expiry.
        for (let i = 0; i < 14; i++) {
          job.progress();
          timeline.lastProgress = Date.now();
          await new Promise((r) => setTimeout(r, 300));
          if (job.signal.aborted) timeline.abortedWhileProgressing = true;
          if (schema && i % 5 === 4) {
            // pg-boss: the stored expiry stays ahead of the last progress (stall 2 s + grace 2 s), never behind.
            const { rows } = await pool.query(`select extract(epoch from (started_on + expire_in - now()))::float8 as ahead from ${schema}.job where id = $1`, [
              job.id,
            ]);
            timeline.storedAhead.push(Number(rows[0]?.ahead));
          }
        }
        await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve(), { once: true }));
        timeline.abortedAt = Date.now();
        throw job.signal.reason;
      },
      { concurrency: 1 },
    );
    await queue.enqueueCollection('int_slow');
    await until('job aborted', () => timeline.abortedAt > 0, 30_000);
    expect(timeline.abortedWhileProgressing).toBe(false);
    const silent = timeline.abortedAt - timeline.lastProgress;
    expect(silent).toBeGreaterThanOrEqual(1900);
    expect(silent).toBeLessThan(3500);
    if (schema) {
      expect(timeline.storedAhead).toHaveLength(2);
      for (const ahead of timeline.storedAhead) {
        expect(ahead).toBeGreaterThan(2);
        expect(ahead).toBeLessThanOrEqual(4.5);
      }
    }
  }, 60_000);

  it('a job whose worker stopped extending it (died, hung) is handed out again after the expiry and its grace', async () => {
    let schema: string | undefined;
    ({ queue, cleanup, schema } = await make({ expireInSeconds: 2 }));
    if (!schema) return; // pg-boss only: the in-process queue's jobs die with their process
    await queue.start();
    const attempts: number[] = [];
    const expiries: number[] = [];
    let release!: () => void;
    const hung = new Promise<void>((r) => (release = r));
    await queue.work(
      async (job) => {
        attempts.push(Date.now());
        const { rows } = await pool.query(`select extract(epoch from expire_in)::float8 as s from ${schema}.job where id = $1`, [job.id]);
        expiries.push(Number(rows[0]?.s));
        // The first attempt hangs, deaf to its abort: as a dead worker, it never extends the stored expiry again.
        if (attempts.length === 1) await hung;
      },
      { concurrency: 2 },
    );
    await queue.enqueueCollection('int_hung');
    // Its stored expiry read too (the attempt is counted before its query answers: under load the read came after).
    await until('second attempt', () => expiries.length === 2, 30_000);
    // Stored expiry: 2 s + 2 s grace after the start, then pg-boss's maintenance (every second) and the retry delay.
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(3900);
    expect(attempts[1]! - attempts[0]!).toBeLessThan(15_000);
    // The retry is handed the queue's expiry (23 h), not what was left of the first attempt's: pg-boss lets it run.
    expect(expiries).toEqual([MAX_JOB_SECONDS, MAX_JOB_SECONDS]);
    release();
  }, 60_000);

  it('aborts the running job when the worker stops', async () => {
    ({ queue, cleanup } = await make());
    await queue.start();
    let seen: CollectionJob | undefined;
    await queue.work(
      async (job) => {
        seen = job;
        await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
      },
      { concurrency: 1 },
    );
    await queue.enqueueCollection('int_long');
    await until('job started', () => seen !== undefined);
    await queue.stop({ timeoutSeconds: 5 });
    expect(seen!.signal.aborted).toBe(true);
    queue = undefined;
  });
});

describe('progress watchdog', () => {
  it('moves the deadline with each progress, writes the stored expiry at most once per half grace, aborts after the stall', () => {
    vi.useFakeTimers();
    try {
      const extended: { at: number; seconds: number }[] = [];
      const aborted: { at: number; reason: string }[] = [];
      const start = Date.now();
      const w = new ProgressWatchdog(
        8,
        (reason) => aborted.push({ at: Date.now() - start, reason: reason.message }),
        async (seconds) => void extended.push({ at: Date.now() - start, seconds }),
      );
      expect(w.graceSeconds).toBe(2);
      // 20 s of progress every 100 ms: 200 reports, the stored expiry (8 s + 2 s ahead) written about once a second.
      for (let i = 0; i < 200; i++) {
        vi.advanceTimersByTime(100);
        w.progress();
      }
      expect(aborted).toEqual([]);
      expect(extended.length).toBeGreaterThanOrEqual(18);
      expect(extended.length).toBeLessThanOrEqual(22);
      expect(extended.every((e) => e.seconds === 10)).toBe(true);
      // Silence: aborted 8 s after the last progress, before the stored expiry (10 s).
      vi.advanceTimersByTime(7900);
      expect(aborted).toEqual([]);
      vi.advanceTimersByTime(200);
      expect(aborted).toEqual([{ at: 28_000, reason: 'job made no progress for 8 s' }]);
      w.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('aborts at the ceiling even with progress', () => {
    vi.useFakeTimers();
    try {
      const aborted: string[] = [];
      const w = new ProgressWatchdog(10, (reason) => aborted.push(reason.message), undefined, 60);
      for (let i = 0; i < 60; i++) {
        vi.advanceTimersByTime(1000);
        w.progress();
      }
      expect(aborted).toEqual(['job ran for 60 s, the longest a job may run']);
      w.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
