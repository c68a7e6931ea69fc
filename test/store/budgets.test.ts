import { afterEach, describe, expect, it } from 'vitest';
import type { BudgetSettings } from '../../src/platform/http/budget.ts';
import { MIN_RATE_FACTOR, rateFactor, SharedBudget, tenantUserCount, tryTake, type BucketTake } from '../../src/store/repositories/budgets.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const limit = { capacity: 10, windowSeconds: 10 }; // 1 unit per second
const bucket = (scopeId: string, cost = 1): BucketTake => ({ scopeId, name: 'graph', limit, cost });
const settings: BudgetSettings = { identityRuPer10s: undefined, managementPerMinute: 20_000, dataversePer5min: 6000 };

/** A worker's budget on a clock the test moves; its sleeps advance the clock and are recorded. */
function worker(store: TestStore, clock: { now: number }, tenantUsers?: (tenantId: string) => Promise<number | undefined>) {
  const slept: number[] = [];
  const budget = new SharedBudget(
    store.db,
    settings,
    tenantUsers,
    () => clock.now,
    async (ms) => {
      slept.push(ms);
      clock.now += ms;
    },
  );
  return { budget, slept };
}

describe.each(DIALECTS)('shared throttling budgets on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('two workers together never take more than the bucket allows, and refill at the documented rate', async () => {
    store = await freshStore(dialect);
    const t0 = 1_000_000;
    // Worker A and worker B draw on the same tenant's budget through the same database.
    const takes = await Promise.all(Array.from({ length: 16 }, (_, i) => tryTake(store.db, [bucket('tenant-1')], t0 + (i % 2))));
    expect(takes.filter((w) => w === 0)).toHaveLength(10);
    expect(Math.min(...takes.filter((w) => w > 0))).toBeGreaterThan(0);
    // Another tenant has its own budget.
    expect(await tryTake(store.db, [bucket('tenant-2', 5)], t0)).toBe(0);
    // Three seconds after the last take, three units came back, no more.
    const later = await Promise.all(Array.from({ length: 5 }, () => tryTake(store.db, [bucket('tenant-1')], t0 + 3001)));
    expect(later.filter((w) => w === 0)).toHaveLength(3);
  });

  it('a 429 seen by one worker blocks the others for the Retry-After and halves the pace, once per episode, down to the floor', async () => {
    store = await freshStore(dialect);
    const clock = { now: 5_000_000 };
    const a = worker(store, clock);
    const b = worker(store, clock);
    const teams = { service: 'graphTeams' as const, tenantId: 'tenant-1', cost: 1 };
    // A batch of 20 leaves the bucket (30) below half: the 429 that answers it is the pace's doing.
    await a.budget.acquire({ ...teams, cost: 20 });
    await a.budget.penalize(teams, 2.5);
    // Nineteen more inner 429s of the same batch: the same episode, no further halving.
    for (let i = 0; i < 19; i++) await b.budget.penalize(teams, 2.5);
    expect(await rateFactor(store.db, 'tenant-1', 'graphTeams')).toBe(0.5);
    // The app-wide Teams limit is not slowed by one tenant's 429.
    expect(await rateFactor(store.db, '*', 'graphTeams')).toBe(1);
    await b.budget.acquire(teams);
    expect(b.slept[0]).toBe(2500);
    // 60 Teams requests after a pause: at full pace (30 rps, a bucket of 30) they take 1 s; at half pace, recovering
    // as they go (15 → ≈ 25 rps), about 2 s.
    clock.now += 10_000;
    const before = clock.now;
    for (let i = 0; i < 60; i++) await b.budget.acquire(teams);
    expect(clock.now - before).toBeGreaterThan(1500);
    expect(clock.now - before).toBeLessThan(3200);
    // Further episodes halve again, never below the floor.
    // A take far above the bucket leaves it in debt, busy for every 429 that follows.
    await a.budget.acquire({ ...teams, cost: 1000 });
    for (let i = 0; i < 8; i++) {
      clock.now += 1001;
      await a.budget.penalize(teams, 1);
    }
    expect(await rateFactor(store.db, 'tenant-1', 'graphTeams')).toBe(MIN_RATE_FACTOR);
    // Other tenants are unaffected.
    expect(await rateFactor(store.db, 'tenant-2', 'graphTeams')).toBe(1);
  });

  it('the pace recovers additively as requests go through without a 429', async () => {
    store = await freshStore(dialect);
    const clock = { now: 9_000_000 };
    const { budget } = worker(store, clock);
    const mgmt = { service: 'managementActivity' as const, tenantId: 'tenant-1', cost: 1 };
    await budget.acquire({ ...mgmt, cost: 15_000 });
    await budget.penalize(mgmt, 1);
    expect(await rateFactor(store.db, 'tenant-1', 'managementActivity')).toBe(0.5);
    // One window's worth of units at the current pace (10,000 of the 20,000 per minute) sent without a 429 buys back a
    // tenth of the documented rate.
    clock.now += 60_000;
    await budget.acquire({ ...mgmt, cost: 10_000 });
    expect(await rateFactor(store.db, 'tenant-1', 'managementActivity')).toBeCloseTo(0.6, 6);
  });

  it('while the budget is plentiful a worker writes the store about once per ten requests, and leasing workers together stay within the limit', async () => {
    store = await freshStore(dialect);
    let updates = 0;
    const counted = store.db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === 'UpdateQueryNode') updates++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const clock = { now: 3_000_000 };
    // 1,200 per minute: 20 per second, so a lease may hold 10 requests' worth (at most a second of the rate).
    const tight: BudgetSettings = { ...settings, managementPerMinute: 1200 };
    // A worker whose budget would make it wait fails instead (the clock stands still in this test).
    const sleepy = () =>
      new SharedBudget(
        counted,
        tight,
        undefined,
        () => clock.now,
        () => Promise.reject(new Error('would wait')),
      );
    const [a, b] = [sleepy(), sleepy()];
    const mgmt = { service: 'managementActivity' as const, tenantId: 'tenant-1', cost: 1 };
    for (let i = 0; i < 100; i++) await a.acquire(mgmt);
    // 100 requests: ten store writes, not a hundred.
    expect(updates).toBe(10);
    // Requests of one process that arrive together keep every grant: 50 at once, then 50 more, still 10 writes.
    updates = 0;
    await Promise.all(Array.from({ length: 5 }, () => a.acquire(mgmt)));
    for (let i = 0; i < 45; i++) await a.acquire(mgmt);
    expect(updates).toBe(5);
    // The two workers together get what is left of the 1,200 and no more, then both have to wait.
    let granted = 150;
    const waiting = new Set<SharedBudget>();
    while (waiting.size < 2)
      for (const w of [a, b]) {
        if (waiting.has(w)) continue;
        try {
          await w.acquire(mgmt);
          granted++;
        } catch {
          waiting.add(w);
        }
      }
    expect(granted).toBeLessThanOrEqual(1200);
    expect(granted).toBeGreaterThan(1180);
  });

  it('a 429 while the budget is barely used blocks it but keeps its pace (Vigil did not cause it)', async () => {
    store = await freshStore(dialect);
    const clock = { now: 7_000_000 };
    const { budget, slept } = worker(store, clock);
    const teams = { service: 'graphTeams' as const, tenantId: 'tenant-1', cost: 2 };
    await budget.acquire(teams);
    await budget.penalize(teams, 1.5);
    expect(await rateFactor(store.db, 'tenant-1', 'graphTeams')).toBe(1);
    await budget.acquire(teams);
    expect(slept).toEqual([1500]);
  });

  it('identity resource units follow the tenant-size tier; unknown tenants get the smallest', async () => {
    store = await freshStore(dialect);
    await insertTestIntegration(store.db, 'int_big');
    const users = Array.from({ length: 501 }, (_, i) => ({
      integration_id: 'int_big',
      id: `u${i}`,
      display_name: null,
      user_principal_name: null,
      mail: null,
      account_enabled: 1,
      user_type: 'Member',
      created_date_time: null,
      raw: '{}',
      first_seen_at: '2026-01-01T00:00:00Z',
      last_seen_at: '2026-01-01T00:00:00Z',
      last_seen_run: 'r1',
      deleted_at: null,
    }));
    for (let i = 0; i < users.length; i += 100)
      await store.db
        .insertInto('directory_users')
        .values(users.slice(i, i + 100))
        .execute();
    expect(await tenantUserCount(store.db, 't-int_big')).toBe(501);
    expect(await tenantUserCount(store.db, 't-unknown')).toBeUndefined();
    const clock = { now: 1_000_000 };
    const w = worker(store, clock, (tenantId) => tenantUserCount(store.db, tenantId));
    // Over 500 users: 8,000 RU per 10 s, taken at once.
    await w.budget.acquire({ service: 'graphIdentity', tenantId: 't-int_big', cost: 8000 });
    expect(w.slept).toEqual([]);
    // Not collected yet: 3,500 RU per 10 s, so 4,000 RU wait for the 500 missing (at 350 per second).
    await w.budget.acquire({ service: 'graphIdentity', tenantId: 't-unknown', cost: 3500 });
    await w.budget.acquire({ service: 'graphIdentity', tenantId: 't-unknown', cost: 500 });
    expect(w.slept).toEqual([Math.ceil((500 / 350) * 1000)]);
  });

  it('a limit per app across tenants is shared by every tenant: the 11th tenant waits for Teams', async () => {
    store = await freshStore(dialect);
    const clock = { now: 2_000_000 };
    const { budget, slept } = worker(store, clock);
    // 30 rps per tenant, 300 rps per app across tenants: 10 tenants at full rate spend the app's second.
    for (let t = 0; t < 10; t++) await budget.acquire({ service: 'graphTeams', tenantId: `tenant-${t}`, cost: 30 });
    expect(slept).toEqual([]);
    await budget.acquire({ service: 'graphTeams', tenantId: 'tenant-10', cost: 30 });
    expect(slept).toEqual([100]);
  });

  it('per-app limits are keyed by the application (client) ID: another app registration has its own, the same app in another tenant shares it', async () => {
    store = await freshStore(dialect);
    const clock = { now: 2_500_000 };
    const { budget, slept } = worker(store, clock);
    const appA = '11111111-1111-1111-1111-11111111111A';
    const appB = '22222222-2222-2222-2222-222222222222';
    // App A at full rate in 10 tenants spends its 300 rps across tenants.
    for (let t = 0; t < 10; t++) await budget.acquire({ service: 'graphTeams', tenantId: `tenant-${t}`, cost: 30, appId: appA });
    // App B, in an 11th tenant, has its own app-wide budget: no wait (one shared key made it wait 100 ms).
    await budget.acquire({ service: 'graphTeams', tenantId: 'tenant-10', cost: 30, appId: appB });
    expect(slept).toEqual([]);
    // App A in a 12th tenant: its app-wide budget is spent, so it waits a tenth of a second for 30 units.
    await budget.acquire({ service: 'graphTeams', tenantId: 'tenant-11', cost: 30, appId: appA });
    expect(slept).toEqual([100]);
    // The rows: one per app, keyed by its client ID (case folded).
    const rows = await store.db
      .selectFrom('upstream_budgets')
      .select('tenant_id')
      .where('api', '=', 'graphTeams')
      .where('tenant_id', 'like', 'app:%')
      .execute();
    expect(rows.map((r) => r.tenant_id).sort()).toEqual([`app:${appA.toLowerCase()}`, `app:${appB}`]);
    // A 429 on the app's tenant budget penalizes the tenant, never the app-wide row.
    expect(await budget.penalize({ service: 'graphTeams', tenantId: 'tenant-1', cost: 1, appId: appA }, 1)).toBe(true);
    expect(await rateFactor(store.db, `app:${appA.toLowerCase()}`, 'graphTeams')).toBe(1);
  });

  it("a 429 on a Graph request of no listed service waits alone: Graph's global limit across tenants is not blocked", async () => {
    store = await freshStore(dialect);
    const clock = { now: 4_000_000 };
    const { budget, slept } = worker(store, clock);
    const other = { service: 'graph' as const, tenantId: 'tenant-1', cost: 1 };
    await budget.acquire(other);
    expect(await budget.penalize(other, 5)).toBe(false);
    await budget.acquire({ ...other, tenantId: 'tenant-2' });
    expect(slept).toEqual([]);
    expect(await budget.penalize({ service: 'graphTeams', tenantId: 'tenant-1', cost: 1 }, 5)).toBe(true);
  });

  it('Dataverse budgets are per environment', async () => {
    store = await freshStore(dialect);
    const clock = { now: 3_000_000 };
    const { budget, slept } = worker(store, clock);
    const dv = (environment: string) => ({ service: 'dataverse' as const, tenantId: 'tenant-1', cost: 6000, environment });
    await budget.acquire(dv('org1.crm.dynamics.com'));
    await budget.acquire(dv('org2.crm.dynamics.com'));
    expect(slept).toEqual([]);
    await budget.acquire({ ...dv('org1.crm.dynamics.com'), cost: 1 });
    expect(slept).toEqual([50]); // 6,000 per 300 s: one request every 50 ms
  });
});
