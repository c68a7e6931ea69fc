import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessQueue } from '../../src/jobs/memory.ts';
import { PgBossQueue } from '../../src/jobs/pgboss.ts';
import type { CollectionJob, JobQueue } from '../../src/jobs/queue.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { dropSchema, TEST_DATABASE_URL } from '../store/dialects.ts';
import { until } from '../support/process.ts';

const policy = { retryLimit: 2, retryDelaySeconds: 1, expireInSeconds: 30 };

const queues: [string, () => Promise<{ queue: JobQueue; cleanup: () => Promise<void> }>][] = [
  ['in-process', async () => ({ queue: new InProcessQueue(silentLogger(), { ...policy, retryDelaySeconds: 0.05 }), cleanup: async () => undefined })],
  [
    'pg-boss',
    async () => {
      const schema = `vigil_test_${randomBytes(6).toString('hex')}_pgboss`;
      const queue = new PgBossQueue({
        connectionString: TEST_DATABASE_URL,
        schema,
        policy,
        maintenanceIntervalSeconds: 1,
        pollingIntervalSeconds: 0.5,
        logger: silentLogger(),
      });
      return { queue, cleanup: () => dropSchema(schema) };
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
