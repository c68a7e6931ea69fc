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

/**
 * Default per-tenant budgets of the APIs Vigil reads, below each service's published ceiling.
 * Sources (limits-and-practices.md): Graph identity and access 3,500 resource units per 10 s for the smallest
 * tenants (5,000 / 8,000 for larger ones) per app and tenant (`concepts/throttling-limits.md`); Office 365
 * Management Activity API 2,000 requests per minute per tenant (reference); Dataverse 6,000 requests per 5 minutes
 * per user (`api-limits.md`).
 */
export const DEFAULT_BUDGETS: Partial<Record<ApiName, BudgetLimit>> = {
  graph: { capacity: 3500, windowSeconds: 10 },
  managementActivity: { capacity: 2000, windowSeconds: 60 },
  dataverse: { capacity: 6000, windowSeconds: 300 },
};
