import { VigilError } from '../../core/errors.ts';
import { str } from '../../core/json.ts';
import { graphBudgetOf, type BudgetService } from '../../platform/http/budget.ts';
import { parseRetryAfter, UpstreamHttpError } from '../../platform/http/client.ts';
import type { StreamContext } from '../stream.ts';

/**
 * Microsoft Graph JSON batching (`concepts/json-batching.md`) with throttling budgets per inner request: at most 20
 * requests per `POST /v1.0/$batch`; responses come in any order and are matched by id; the outer request succeeds even
 * when inner ones fail, and each inner request is evaluated against its own service's limits (`throttling.md`: "each
 * request is evaluated individually against the applicable throttling limits").
 *
 * So a batch costs the sum of its inner requests, each charged to its own service budget before the batch is sent (20
 * Teams reads take 20 Teams units). An inner 429 — or 503 with `Retry-After` — penalizes that service's budget for
 * every worker (`Retry-After` of the inner response, pace halved) and the inner request is sent again in a later
 * batch once the budget allows, as many times as it is throttled: throttling delays a read, it never fails it. Other
 * inner 5xx are retried {@link INNER_ATTEMPTS} times; any other inner error is the caller's to judge.
 */

/** Requests per `$batch` (Graph's limit). */
export const BATCH_SIZE = 20;
/** Attempts per inner request answered 500/502/503/504 without `Retry-After`, before the error is handed back. */
const INNER_ATTEMPTS = 6;
const INNER_ERRORS = new Set([500, 502, 503, 504]);

/**
 * One inner GET of a batch. Its service and units come from its path ({@link graphBudgetOf}, the decision single Graph
 * requests are charged by): `users/{id}/teamwork/installedApps` is a Teams read, `users?$select=id` 1 identity unit.
 */
export interface BatchItem<T> {
  /** URL relative to `{graph}/v1.0`, as `$batch` wants it. */
  url: string;
  /** The caller's handle (the user the request reads). */
  tag: T;
}

/** An inner response. */
export interface BatchAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

interface Pending<T> {
  item: BatchItem<T>;
  /** The service the item draws on and its units there, from its path. */
  budget: { service: BudgetService; cost: number };
  /** Throttled answers in a row (grows the backoff when an inner 429 carries no `Retry-After`). */
  throttled: number;
  /** Answers 5xx without `Retry-After`. */
  failed: number;
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return String(v);
  return undefined;
}

/** The upstream error of an inner answer, for the caller to throw. */
export function innerError(ctx: StreamContext, url: string, answer: BatchAnswer): UpstreamHttpError {
  const err = ((answer.body ?? {}) as { error?: { code?: unknown; message?: unknown } }).error;
  return new UpstreamHttpError(
    'graph',
    'GET',
    `${ctx.cloud.graph.baseUrl}/v1.0${url}`,
    answer.status,
    str(err?.code) ?? undefined,
    str(err?.message) ?? undefined,
    answer.body,
  );
}

/**
 * Sends `items` through `$batch`, 20 at a time, until each has a final answer, and hands every final answer (2xx, or
 * an error other than throttling) to `handle`, which returns follow-up requests (inner `@odata.nextLink`s) to queue.
 *
 * @throws VigilError `upstream` / `BATCH_RESPONSE_MISSING` when the batch answers without a response for a request;
 *   whatever `handle` throws; UpstreamHttpError from the outer request; the abort reason of `signal`.
 */
export async function runBatch<T>(
  ctx: StreamContext,
  items: BatchItem<T>[],
  handle: (item: BatchItem<T>, answer: BatchAnswer) => BatchItem<T>[] | void,
  signal?: AbortSignal,
): Promise<void> {
  const pending = (item: BatchItem<T>): Pending<T> => ({ item, budget: graphBudgetOf(item.url), throttled: 0, failed: 0 });
  const queue: Pending<T>[] = items.map(pending);
  const batchUrl = `${ctx.cloud.graph.baseUrl}/v1.0/$batch`;
  while (queue.length > 0) {
    const batch = queue.splice(0, BATCH_SIZE);
    // Each inner request is charged to its own service before sending: the first service through the outer request
    // (so an outer 429 penalizes it and a retried batch is charged again), any other here.
    const costs = new Map<BudgetService, number>();
    for (const p of batch) costs.set(p.budget.service, (costs.get(p.budget.service) ?? 0) + p.budget.cost);
    const [[service, cost], ...others] = [...costs] as [[BudgetService, number], ...[BudgetService, number][]];
    for (const [s, c] of others) await ctx.http.acquire({ service: s, tenantId: ctx.tenantId, cost: c }, signal);
    const res = await ctx.http.send<{ responses?: (BatchAnswer & { id?: unknown })[] }>({
      api: 'graph',
      service,
      method: 'POST',
      url: batchUrl,
      body: { requests: batch.map((p, i) => ({ id: String(i + 1), method: 'GET', url: p.item.url })) },
      token: ctx.tokens.bearer(ctx.cloud.graph.resource),
      tenantId: ctx.tenantId,
      cost,
      signal,
    });
    const byId = new Map((res.body?.responses ?? []).map((r) => [String(r.id), r]));
    const again: Pending<T>[] = [];
    // The longest Retry-After per throttled service, and the worst run of throttled answers.
    const throttled = new Map<BudgetService, { retryAfter: number | undefined; inRow: number; count: number }>();
    let failedWait = 0;
    for (const [i, p] of batch.entries()) {
      const answer = byId.get(String(i + 1));
      if (!answer) {
        throw new VigilError('BATCH_RESPONSE_MISSING', `graph $batch answered without a response for request ${i + 1} (${p.item.url.split('?')[0]}).`);
      }
      const retryAfter = parseRetryAfter(header(answer.headers, 'retry-after'));
      if (answer.status === 429 || (answer.status === 503 && retryAfter !== undefined)) {
        p.throttled++;
        const t = throttled.get(p.budget.service) ?? { retryAfter: undefined, inRow: 0, count: 0 };
        t.count++;
        if (retryAfter !== undefined) t.retryAfter = Math.max(t.retryAfter ?? 0, retryAfter);
        t.inRow = Math.max(t.inRow, p.throttled);
        throttled.set(p.budget.service, t);
        again.push(p);
      } else if (INNER_ERRORS.has(answer.status) && p.failed + 1 < INNER_ATTEMPTS) {
        p.failed++;
        failedWait = Math.max(failedWait, Math.random() * Math.min(8, 0.5 * 2 ** (p.failed - 1)));
        again.push(p);
      } else {
        for (const next of handle(p.item, answer) ?? []) queue.push(pending(next));
      }
    }
    if (again.length === 0) continue;
    ctx.logger.debug({ throttled: [...throttled.keys()], again: again.length }, 'sending throttled or failed $batch requests again');
    for (const [s, t] of throttled) await ctx.http.innerThrottled('graph', { service: s, tenantId: ctx.tenantId, cost: 1 }, t, signal);
    if (throttled.size === 0 && failedWait > 0) await new Promise((resolve) => setTimeout(resolve, failedWait * 1000));
    queue.unshift(...again);
  }
}
