import type { Json } from '../../core/json.ts';
import { odataPages, type ODataPage, type ODataPagingRequest } from '../../platform/http/odata.ts';
import type { StreamContext, StreamPage } from '../stream.ts';

/**
 * Delta query reading shared by the Microsoft Graph v1.0 directory streams (`streams/users.ts`, `groups.ts`,
 * `memberships.ts`): users, groups and group memberships by delta query (incremental after the first round;
 * memberships through `members@delta`); all paged by `@odata.nextLink`.
 *
 * Sources: Graph "List users" (`api/user-list.md`), "List groups", "List group members" (`api/group-list-members.md`:
 * members of mixed `@odata.type`), paging (`concepts/paging.md`), throttling cost of `$select` (`throttling-limits.md`).
 */

/**
 * A Graph delta round (`users/delta`, `groups/delta`): from the first URL or a saved next/delta link, page by page.
 * Items with `@removed` are returned as removed ids; the last page carries the next `@odata.deltaLink`. `$top` is
 * not supported on delta: the page size is asked with `Prefer: odata.maxpagesize`.
 * Sources: Graph `delta-query-overview.md`, `delta-query-users.md`, `api/user-delta.md`, `api/group-delta.md`.
 */
export async function* deltaPages<R>(ctx: StreamContext, url: string, map: (j: Json) => R): AsyncGenerator<StreamPage<R>> {
  for await (const page of deltaRound(ctx, url)) {
    const removed: string[] = [];
    const records: R[] = [];
    for (const item of page.items) {
      if (item['@removed'] !== undefined) removed.push(String(item.id));
      else records.push(map(item));
    }
    yield { records, removed, nextCursor: page.nextLink ?? null, ...(page.deltaLink ? { deltaLink: page.deltaLink } : {}) };
  }
}

/**
 * The raw pages of a delta round from `url` (the first URL or a saved next/delta link), each next page already
 * requested while the caller stores the one it was given ({@link readAhead}): a round's pages are chained by their
 * `@odata.nextLink`, so without it every page's request would wait for the previous page's store.
 */
export function deltaRound(ctx: StreamContext, url: string): AsyncGenerator<ODataPage<Json>> {
  return readAhead(odataPages<Json>(ctx.http, deltaRequest(ctx, url)));
}

/**
 * The items of `source`, with the next one already asked for while the caller handles the one it holds: at most one
 * item ahead (a page: memory stays at two pages). What the caller sees is unchanged — the same items in the same
 * order, an error of the source thrown at the item it would have been thrown at (after the caller handled the items
 * before it). The caller stores each page with its checkpoint before it asks for the next, so a page read ahead and
 * lost with the process (SIGKILL) is read again from the stored cursor. When the caller stops early (break, throw,
 * return), the request under way is let finish (a stopped run's signal ends it) and the source is closed.
 */
export async function* readAhead<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let ahead: Promise<IteratorResult<T>> | undefined = source.next();
  try {
    for (;;) {
      const got: IteratorResult<T> = await ahead;
      ahead = undefined;
      if (got.done) return;
      ahead = source.next();
      // Its error is thrown when the caller asks for the item; a caller that stops first never asks.
      ahead.catch(() => undefined);
      yield got.value;
    }
  } finally {
    if (ahead)
      await ahead.then(
        () => source.return(undefined),
        () => undefined,
      );
  }
}

/** The first URL of a delta round of `path` (`users`, `groups`) with the `$select`ed fields. */
export function deltaUrl(ctx: StreamContext, path: string, select: string): string {
  return `${ctx.cloud.graph.baseUrl}/v1.0/${path}/delta?$select=${select}`;
}

/** The paging request of a delta round from `url`: page size by `Prefer: odata.maxpagesize`, Graph token, the tenant's budgets. */
function deltaRequest(ctx: StreamContext, url: string): ODataPagingRequest {
  const size = Math.min(999, Math.max(1, ctx.graphPageSize ?? 999));
  return {
    api: 'graph',
    url,
    headers: { Prefer: `odata.maxpagesize=${size}` },
    token: ctx.tokens.bearer(ctx.cloud.graph.resource),
    tenantId: ctx.tenantId,
    // No service or cost: the pipeline charges each page to its path's service (`graphBudgetOf`: directory reads to the
    // identity-and-access budget, in resource units of the page's own URL, next links included).
    signal: ctx.signal,
  };
}
