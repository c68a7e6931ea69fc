import { afterEach, describe, expect, it } from 'vitest';
import { parseCron, tick } from '../../src/sync/scheduler.ts';
import type { JobQueue } from '../../src/jobs/queue.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { DIALECTS, freshStore, type TestStore } from '../store/dialects.ts';
import { insertTestIntegration } from '../store/fixtures.ts';
import { finishRun, insertRun } from '../../src/store/repositories/runs.ts';

function fakeQueue(): JobQueue & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    start: async () => undefined,
    enqueueCollection: async (id) => (sent.push(id), `job-${sent.length}`),
    work: async () => undefined,
    stop: async () => undefined,
    deadLetters: async () => [],
    pending: async () => sent.length,
  };
}

describe.each(DIALECTS)('collection scheduler on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('enqueues a new integration at once, then once per cron slot shifted by its own jitter', async () => {
    store = await freshStore(dialect);
    await insertTestIntegration(store.db, 'int_a');
    const queue = fakeQueue();
    const base = { cron: '0 * * * *', jitterSeconds: 600, logger: silentLogger(), random: () => 0.5 };
    expect(await tick(store.db, queue, { ...base, now: new Date('2026-11-21T10:10:00Z') })).toEqual(['int_a']);
    const row = await store.db.selectFrom('collection_schedules').selectAll().executeTakeFirstOrThrow();
    expect(row.jitter_seconds).toBe(300);
    expect(row.next_due_at).toBe('2026-11-21T11:05:00.000Z');
    expect(await tick(store.db, queue, { ...base, now: new Date('2026-11-21T11:04:59Z') })).toEqual([]);
    expect(await tick(store.db, queue, { ...base, now: new Date('2026-11-21T11:05:00Z') })).toEqual(['int_a']);
    expect((await store.db.selectFrom('collection_schedules').select('next_due_at').executeTakeFirstOrThrow()).next_due_at).toBe('2026-11-21T12:05:00.000Z');
  });

  it('a new integration already collected by hand before the first tick waits for its first slot instead of being collected again', async () => {
    store = await freshStore(dialect);
    for (const id of ['int_a', 'int_b']) await insertTestIntegration(store.db, id);
    await insertRun(store.db, { id: 'run_a', integration_id: 'int_a', started_at: '2026-11-21T10:01:00Z', owner_host: null, owner_pid: null });
    await finishRun(store.db, 'run_a', { status: 'succeeded', finishedAt: '2026-11-21T10:02:00Z', durationMs: 60_000, counts: {}, errors: [], httpStats: {} });
    const queue = fakeQueue();
    const base = { cron: '0 * * * *', jitterSeconds: 0, logger: silentLogger() };
    expect(await tick(store.db, queue, { ...base, now: new Date('2026-11-21T10:10:00Z') })).toEqual(['int_b']);
    expect(await tick(store.db, queue, { ...base, now: new Date('2026-11-21T11:00:00Z') })).toEqual(['int_a', 'int_b']);
  });

  it('two schedulers ticking at once enqueue each slot once', async () => {
    store = await freshStore(dialect);
    for (const id of ['int_a', 'int_b', 'int_c']) await insertTestIntegration(store.db, id);
    const queue = fakeQueue();
    const opts = { cron: '*/5 * * * *', jitterSeconds: 0, logger: silentLogger(), now: new Date('2026-11-21T10:00:00Z') };
    await Promise.all([tick(store.db, queue, opts), tick(store.db, queue, opts)]);
    expect(queue.sent.sort()).toEqual(['int_a', 'int_b', 'int_c']);
  });

  it('after a restart, enqueues integrations whose collection was interrupted, even before their slot', async () => {
    store = await freshStore(dialect);
    for (const id of ['int_a', 'int_b']) await insertTestIntegration(store.db, id);
    const queue = fakeQueue();
    const opts = { cron: '0 * * * *', jitterSeconds: 0, logger: silentLogger(), now: new Date('2026-11-21T10:00:00Z') };
    await tick(store.db, queue, opts);
    await insertRun(store.db, { id: 'run_a', integration_id: 'int_a', started_at: '2026-11-21T10:00:01Z', owner_host: null, owner_pid: null });
    const later = { ...opts, now: new Date('2026-11-21T10:30:00Z') };
    expect(await tick(store.db, queue, later)).toEqual([]);
    expect(await tick(store.db, queue, { ...later, resumeInterrupted: true })).toEqual(['int_a']);
  });

  it('names VIGIL_COLLECT_CRON when the expression is invalid', () => {
    expect(() => parseCron('every hour')).toThrow(expect.objectContaining({ field: 'VIGIL_COLLECT_CRON' }));
  });
});
