import type { ApiName } from './client.ts';

/**
 * The throttling-budget port of the HTTP pipeline: before each request the pipeline takes `cost` units from the
 * (tenant, API) budget, waiting when it is spent; after a 429 it blocks the budget for the `Retry-After` so every
 * worker sharing the budget slows down, not only the one that was throttled.
 */
export interface ThrottleBudget {
  /** Waits until `cost` units of the tenant's budget for `api` are available, then takes them. */
  acquire(tenantId: string, api: ApiName, cost: number): Promise<void>;
  /** Blocks the tenant's budget for `api` for `seconds` (a 429 was seen). */
  penalize(tenantId: string, api: ApiName, seconds: number): Promise<void>;
}

/** Size and refill of one budget: `capacity` units, refilled at `capacity / windowSeconds` per second. */
export interface BudgetLimit {
  capacity: number;
  windowSeconds: number;
}
