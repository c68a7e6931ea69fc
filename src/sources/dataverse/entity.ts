import { listPages, odataListStream, type ListRequest } from '../odata.ts';
import type { InventoryListing, Slice, Stream, StreamContext, StreamPage } from '../stream.ts';
import type { Json } from '../../core/json.ts';

/**
 * Dataverse Web API reading shared by the streams per environment (`streams/agents.ts`, `dataverseUsers.ts`,
 * `agentComponents.ts`, `agentSettings.ts`, `environmentSettings.ts`): one slice per environment with Dataverse. Paged with `Prefer: odata.maxpagesize` and `@odata.nextLink`. The token resource is the environment's
 * instance URL. Reading needs the application user to hold a security role such as System Administrator in that
 * environment; Dataverse answers 403 (`0x80072560` "The user is not a member of the organization.") otherwise.
 *
 * Sources: Dataverse `bot` and `systemuser` entity references; "Page results" (`webapi/query/page-results.md`);
 * "Service protection API limits" (`api-limits.md`); terraform-provider-power-platform application user fixtures.
 */

/** Dataverse Web API version used. */
export const DATAVERSE_API = 'api/data/v9.2';

/** The resource (token audience) of a Dataverse instance: its URL without a trailing slash. */
export function dataverseResource(instanceUrl: string): string {
  return instanceUrl.replace(/\/+$/, '');
}

/** Slice for an environment that has Dataverse; null otherwise. */
export function environmentSlice(row: { id: string; dataverse_url?: string | null }): Slice | null {
  return row.dataverse_url ? { key: row.id, params: { environmentId: row.id, instanceUrl: row.dataverse_url } } : null;
}

/**
 * Pages of one Dataverse entity set in one environment.
 * @throws VigilError `upstream` / `FOREIGN_LINK` when the instance URL (or a next link) is off the Dataverse hosts of the
 *   cloud profile: no token is asked for it and nothing is sent.
 */
async function* entityPages<R>(
  ctx: StreamContext,
  slice: Slice,
  entitySet: string,
  select: string,
  cursor: string | null,
  map: (j: Json) => R,
): AsyncGenerator<StreamPage<R>> {
  const request = entityRequest(ctx, slice, entitySet, select, cursor);
  yield* listPages(ctx, ctx.tokens.bearer(dataverseResource(slice.params.instanceUrl!)), request, map);
}

/**
 * The page request of an entity set in the slice's environment: the cursor when given, else the first page's URL
 * (`$select`, and `$filter` when `options.filter` is given, URL-encoded). Page size: the context's, at most
 * `options.maxPageSize` (default 5,000, Dataverse's largest).
 * @throws VigilError `upstream` / `FOREIGN_LINK` when the instance URL is off the Dataverse hosts of the cloud profile.
 */
export function entityRequest(
  ctx: StreamContext,
  slice: Slice,
  entitySet: string,
  select: string,
  cursor: string | null,
  options: { filter?: string; maxPageSize?: number } = {},
): ListRequest {
  // Before a token for it is asked: an instance URL off the Dataverse hosts is never the audience of a token.
  const instanceUrl = ctx.http.links.check('dataverse', slice.params.instanceUrl!, 'instanceUrl');
  const pageSize = Math.min(options.maxPageSize ?? 5000, Math.max(1, ctx.dataversePageSize ?? 5000));
  const filter = options.filter ? `&$filter=${encodeURIComponent(options.filter)}` : '';
  const url = cursor ?? `${dataverseResource(instanceUrl)}/${DATAVERSE_API}/${entitySet}?$select=${select}${filter}`;
  return { api: 'dataverse', url, headers: { 'OData-MaxVersion': '4.0', 'OData-Version': '4.0', Prefer: `odata.maxpagesize=${pageSize}` } };
}

/**
 * A stream of one Dataverse entity set read in every environment with Dataverse: one slice per environment (its
 * instance URL), a token for that instance, the `$select`ed rows page by page through {@link entityPages}.
 * @param map one record from one row, with the environment's slice (its key is the environment id).
 */
export function dataverseEntityStream<N extends string, R, K extends string = never>(definition: {
  name: N;
  primaryKey: string[];
  entitySet: string;
  select: string;
  map: (j: Json, slice: Slice) => R;
  refreshSeconds?: number;
  inventory?: InventoryListing<K>;
}): Stream<N, R, K> {
  const { entitySet, select, map, ...rest } = definition;
  return odataListStream<N, R, K>({
    ...rest,
    parent: 'environments',
    slice: environmentSlice,
    resource: (_ctx, slice) => dataverseResource(slice.params.instanceUrl!),
    request: (ctx, slice, cursor) => entityRequest(ctx, slice, entitySet, select, cursor),
    map,
  });
}

/**
 * Reads one bot to learn whether the service principal can read agents in an environment (used by verification).
 * @throws UpstreamHttpError 403 when it cannot.
 */
export async function probeAgentsAccess(ctx: StreamContext, environmentId: string, instanceUrl: string): Promise<void> {
  const pages = entityPages(ctx, { key: environmentId, params: { environmentId, instanceUrl } }, 'bots', 'botid', null, (j) => j);
  await pages.next();
  await pages.return(undefined);
}
