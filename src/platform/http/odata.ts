import type { BudgetService } from './budget.ts';
import type { ApiName, HttpClient, HttpResponse } from './client.ts';

interface ODataBody<T> {
  value?: T[];
  '@odata.nextLink'?: string;
  /** Azure Resource Manager, BAP, Power Apps and Power Automate name the next page `nextLink`. */
  nextLink?: string;
  '@odata.deltaLink'?: string;
}

/**
 * OData paging: follow the absolute `@odata.nextLink` (Graph, Dataverse) or `nextLink` (Azure Resource Manager,
 * BAP, Power Apps, Power Automate) until absent, never rebuilding skip tokens by hand.
 * Request headers (`ConsistencyLevel`, `Prefer: odata.maxpagesize`) are resent on every page because they are not
 * implied by the link.
 *
 * Sources: Microsoft Graph "Paging Microsoft Graph data" (`concepts/paging.md`); Dataverse "Page results"
 * (`webapi/query/page-results.md`: `Prefer: odata.maxpagesize`, `@odata.nextLink` with an opaque `$skiptoken`);
 * Azure REST API guidelines (`nextLink`); pnp/cli-microsoft365 flow list tests (Power Automate `nextLink`).
 */

/** One page of an OData collection. */
export interface ODataPage<T> {
  items: T[];
  /** Absolute URL of the next page, when there is one. */
  nextLink: string | undefined;
  /** Absolute delta link (delta queries), on the last page only. */
  deltaLink: string | undefined;
}

/** Parameters of {@link odataPages}. */
export interface ODataPagingRequest {
  api: ApiName;
  /** First page URL, or a `nextLink` saved in a checkpoint to resume from. */
  url: string;
  headers?: Record<string, string>;
  token: (forceRefresh: boolean) => Promise<string>;
  /** Tenant whose throttling budget the requests draw on. */
  tenantId?: string;
  /** The throttled service the requests draw on (default per API family, see `HttpRequest.service`). */
  service?: BudgetService;
  /** Budget units per page request. @default 1 */
  cost?: number;
  /** Stops the paging (see `HttpRequest.signal`). */
  signal?: AbortSignal | undefined;
}

/**
 * Yields the pages of an OData collection one at a time (memory stays flat whatever the collection size). Every
 * next and delta link is checked against the pipeline's link policy for `req.api` before the page is yielded, so a
 * page handed to the sync engine (which stores `nextLink` as its cursor and `deltaLink` for the next round) only
 * ever carries links on the API's own hosts. The first URL (perhaps a link stored by an earlier run) is checked too.
 *
 * @throws VigilError `upstream` / `FOREIGN_LINK` when the URL, a next link or a delta link is off the API's hosts
 *   (nothing is sent there and the page is not yielded); UpstreamHttpError from the pipeline.
 */
export async function* odataPages<T>(http: HttpClient, req: ODataPagingRequest): AsyncGenerator<ODataPage<T>> {
  // Named here (the pipeline would refuse it too): the first URL may be a link stored by an earlier run.
  http.links.check(req.api, req.url, 'the stored or first link');
  let url: string | undefined = req.url;
  while (url) {
    const body: ODataBody<T> = await pageBody<T>(http, req, url);
    const next: string | undefined = body['@odata.nextLink'] ?? body.nextLink ?? undefined;
    const delta: string | undefined = body['@odata.deltaLink'] ?? undefined;
    if (next !== undefined) http.links.check(req.api, next, body['@odata.nextLink'] !== undefined ? '@odata.nextLink' : 'nextLink');
    if (delta !== undefined) http.links.check(req.api, delta, '@odata.deltaLink');
    yield { items: body.value ?? [], nextLink: next, deltaLink: delta };
    url = next;
  }
}

/**
 * The parsed body of one page (`{}` when empty), without the response around it: the response's text (as large as the
 * page) is let go as soon as it is parsed, instead of staying reachable from the paging generator's frame while the
 * caller stores the page and reads the next one ahead (issue 18: such texts outlived a scavenge and were promoted).
 */
async function pageBody<T>(http: HttpClient, req: ODataPagingRequest, url: string): Promise<ODataBody<T>> {
  const res: HttpResponse<ODataBody<T> | null> = await http.send<ODataBody<T> | null>({
    api: req.api,
    url,
    headers: req.headers,
    token: req.token,
    tenantId: req.tenantId,
    service: req.service,
    cost: req.cost,
    signal: req.signal,
  });
  return res.body ?? {};
}
