import { sql } from 'kysely';
import type { ApiName } from '../../platform/http/client.ts';
import type { BudgetLimit, ThrottleBudget } from '../../platform/http/budget.ts';
import { dialectOf, type Executor } from '../db.ts';
import type { Database } from '../schema.ts';
import type { Kysely } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Throttling budgets shared through the database: one token bucket per (tenant, API) row, read and updated in one
 * transaction (`SELECT … FOR UPDATE` on PostgreSQL; SQLite serialises writers), so any number of workers on any
 * number of machines together stay within what the tenant allows, and a 429 seen by one blocks the others.
 */

/**
 * Takes `cost` units if available. Returns 0 when taken, else the milliseconds to wait before trying again
 * (nothing is taken then).
 */
export async function tryTake(db: Kysely<Database>, tenantId: string, api: string, cost: number, limit: BudgetLimit, nowMs: number): Promise<number> {
  const rate = limit.capacity / limit.windowSeconds / 1000; // units per millisecond
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('upstream_budgets')
      .values({ tenant_id: tenantId, api, tokens: limit.capacity, updated_ms: nowMs, blocked_until_ms: 0 })
      .onConflict((oc) => oc.columns(['tenant_id', 'api']).doNothing())
      .execute();
    let q = trx.selectFrom('upstream_budgets').selectAll().where('tenant_id', '=', tenantId).where('api', '=', api);
    if (dialectOf(db) === 'postgres') q = q.forUpdate();
    const row = await q.executeTakeFirstOrThrow();
    const updated = Number(row.updated_ms);
    const tokens = Math.min(limit.capacity, Number(row.tokens) + Math.max(0, nowMs - updated) * rate);
    const blockedFor = Math.max(0, Number(row.blocked_until_ms) - nowMs);
    const need = Math.min(cost, limit.capacity);
    const wait = Math.max(blockedFor, tokens >= need ? 0 : Math.ceil((need - tokens) / rate));
    await trx
      .updateTable('upstream_budgets')
      .set({ tokens: wait === 0 ? tokens - need : tokens, updated_ms: Math.max(nowMs, updated) })
      .where('tenant_id', '=', tenantId)
      .where('api', '=', api)
      .execute();
    return wait;
  });
}

/** Blocks a budget until `untilMs` (never shortens an existing block). */
async function block(db: Executor, tenantId: string, api: string, untilMs: number, limit: BudgetLimit, nowMs: number): Promise<void> {
  await db
    .insertInto('upstream_budgets')
    .values({ tenant_id: tenantId, api, tokens: limit.capacity, updated_ms: nowMs, blocked_until_ms: untilMs })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'api']).doUpdateSet({
        blocked_until_ms: sql`case when upstream_budgets.blocked_until_ms > ${untilMs} then upstream_budgets.blocked_until_ms else ${untilMs} end`,
      }),
    )
    .execute();
}

/** {@link ThrottleBudget} over the store. APIs without a limit pass freely. */
export class SharedBudget implements ThrottleBudget {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly limits: Partial<Record<ApiName, BudgetLimit>>,
    private readonly now: () => number = Date.now,
    private readonly sleepMs: (ms: number) => Promise<unknown> = (ms) => sleep(ms),
  ) {}

  async acquire(tenantId: string, api: ApiName, cost: number): Promise<void> {
    const limit = this.limits[api];
    if (!limit) return;
    for (;;) {
      const wait = await tryTake(this.db, tenantId, api, cost, limit, this.now());
      if (wait === 0) return;
      await this.sleepMs(Math.min(wait, 60_000));
    }
  }

  async penalize(tenantId: string, api: ApiName, seconds: number): Promise<void> {
    const limit = this.limits[api];
    if (!limit) return;
    const now = this.now();
    await block(this.db, tenantId, api, now + seconds * 1000, limit, now);
  }
}
