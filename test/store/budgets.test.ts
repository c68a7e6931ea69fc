import { afterEach, describe, expect, it } from 'vitest';
import { SharedBudget, tryTake } from '../../src/store/repositories/budgets.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';

const limit = { capacity: 10, windowSeconds: 10 }; // 1 unit per second

describe.each(DIALECTS)('shared throttling budgets on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('two workers together never take more than the bucket allows, and refill at the documented rate', async () => {
    store = await freshStore(dialect);
    const t0 = 1_000_000;
    // Worker A and worker B draw on the same tenant's Graph budget through the same database.
    const takes = await Promise.all(Array.from({ length: 16 }, (_, i) => tryTake(store.db, 'tenant-1', 'graph', 1, limit, t0 + (i % 2))));
    expect(takes.filter((w) => w === 0)).toHaveLength(10);
    expect(Math.min(...takes.filter((w) => w > 0))).toBeGreaterThan(0);
    // Another tenant has its own budget.
    expect(await tryTake(store.db, 'tenant-2', 'graph', 5, limit, t0)).toBe(0);
    // Three seconds after the last take, three units came back, no more.
    const later = await Promise.all(Array.from({ length: 5 }, () => tryTake(store.db, 'tenant-1', 'graph', 1, limit, t0 + 3001)));
    expect(later.filter((w) => w === 0)).toHaveLength(3);
  });

  it('a 429 seen by one worker blocks the others for that tenant until Retry-After has passed', async () => {
    store = await freshStore(dialect);
    let now = 5_000_000;
    const slept: number[] = [];
    const workerA = new SharedBudget(store.db, { graph: limit }, () => now);
    const workerB = new SharedBudget(
      store.db,
      { graph: limit },
      () => now,
      async (ms) => {
        slept.push(ms);
        now += ms;
      },
    );
    await workerA.acquire('tenant-1', 'graph', 1);
    await workerA.penalize('tenant-1', 'graph', 2.5);
    await workerB.acquire('tenant-1', 'graph', 1);
    expect(slept).toEqual([2500]);
    // Unlimited APIs pass freely.
    await workerB.acquire('tenant-1', 'bap', 1000);
    expect(slept).toEqual([2500]);
  });
});
