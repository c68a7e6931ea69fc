import type { Agent, DataverseUser, StreamName, StreamRecords } from '../../core/inventory.ts';
import { listPages, odataListStream, type ListRequest } from '../odata.ts';
import type { Slice, Stream, StreamContext, StreamPage } from '../stream.ts';
import { str, num, type Json } from '../../core/json.ts';

/**
 * Dataverse Web API streams per environment: Copilot Studio agents (`bots`) and `systemusers` (to resolve agent
 * owners). Paged with `Prefer: odata.maxpagesize` and `@odata.nextLink`. The token resource is the environment's
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
export async function* entityPages<R>(ctx: StreamContext, slice: Slice, entitySet: string, select: string, cursor: string | null, map: (j: Json) => R): AsyncGenerator<StreamPage<R>> {
  const request = entityRequest(ctx, slice, entitySet, select, cursor);
  yield* listPages(ctx, ctx.tokens.bearer(dataverseResource(slice.params.instanceUrl!)), request, map);
}

/**
 * The page request of an entity set in the slice's environment.
 * @throws VigilError `upstream` / `FOREIGN_LINK` when the instance URL is off the Dataverse hosts of the cloud profile.
 */
function entityRequest(ctx: StreamContext, slice: Slice, entitySet: string, select: string, cursor: string | null): ListRequest {
  // Before a token for it is asked: an instance URL off the Dataverse hosts is never the audience of a token.
  const instanceUrl = ctx.http.links.check('dataverse', slice.params.instanceUrl!, 'instanceUrl');
  const pageSize = Math.min(5000, Math.max(1, ctx.dataversePageSize ?? 5000));
  const url = cursor ?? `${dataverseResource(instanceUrl)}/${DATAVERSE_API}/${entitySet}?$select=${select}`;
  return { api: 'dataverse', url, headers: { 'OData-MaxVersion': '4.0', 'OData-Version': '4.0', Prefer: `odata.maxpagesize=${pageSize}` } };
}

/**
 * A stream of one Dataverse entity set read in every environment with Dataverse: one slice per environment (its
 * instance URL), a token for that instance, the `$select`ed rows page by page through {@link entityPages}.
 * @param map one record from one row, with the environment's slice (its key is the environment id).
 */
export function dataverseEntityStream<S extends StreamName>(definition: {
  name: S;
  primaryKey: string[];
  entitySet: string;
  select: string;
  map: (j: Json, slice: Slice) => StreamRecords[S];
  refreshSeconds?: number;
}): Stream<S> {
  const { entitySet, select, map, ...rest } = definition;
  return odataListStream<S>({
    ...rest,
    parent: 'environments',
    slice: environmentSlice,
    resource: (_ctx, slice) => dataverseResource(slice.params.instanceUrl!),
    request: (ctx, slice, cursor) => entityRequest(ctx, slice, entitySet, select, cursor),
    map,
  });
}

/** Fields of `bot` read by Vigil (reference §4.3). */
export const BOT_FIELDS = 'botid,name,schemaname,authenticationmode,authenticationtrigger,accesscontrolpolicy,authorizedsecuritygroupids,publishedon,_publishedby_value,_ownerid_value,statecode,statuscode,language,runtimeprovider,template,createdon,modifiedon,configuration';

/**
 * Maps a Dataverse `bot` row (Web API JSON with {@link BOT_FIELDS}) of an environment to an {@link Agent}. Choice
 * columns keep their numeric values (`accesscontrolpolicy` 3 = Any (multitenant) included).
 */
export function toAgent(j: Record<string, unknown>, environmentId: string): Agent {
  return {
    environmentId,
    id: String(j.botid),
    name: str(j.name),
    schemaName: str(j.schemaname),
    authenticationMode: num(j.authenticationmode),
    authenticationTrigger: num(j.authenticationtrigger),
    accessControlPolicy: num(j.accesscontrolpolicy),
    ownerId: str(j._ownerid_value),
    publishedOn: str(j.publishedon),
    modifiedOn: str(j.modifiedon),
    createdOn: str(j.createdon),
    stateCode: num(j.statecode),
    statusCode: num(j.statuscode),
    raw: j,
  };
}

/** Copilot Studio agents of every environment with Dataverse. */
export const agentsStream = dataverseEntityStream({
  name: 'agents',
  primaryKey: ['environmentId', 'id'],
  entitySet: 'bots',
  select: BOT_FIELDS,
  map: (j, slice): Agent => toAgent(j, slice.key),
});

/** Dataverse users (people and application users) of every environment with Dataverse. */
export const dataverseUsersStream = dataverseEntityStream({
  name: 'dataverseUsers',
  primaryKey: ['environmentId', 'id'],
  entitySet: 'systemusers',
  select: 'systemuserid,fullname,domainname,azureactivedirectoryobjectid,applicationid,isdisabled,accessmode',
  map: (j, slice): DataverseUser => ({
      environmentId: slice.key,
      id: String(j.systemuserid),
      fullName: str(j.fullname),
      aadObjectId: str(j.azureactivedirectoryobjectid),
      applicationId: str(j.applicationid),
      isDisabled: typeof j.isdisabled === 'boolean' ? j.isdisabled : null,
      raw: j,
    }),
});

/**
 * Reads one bot to learn whether the service principal can read agents in an environment (used by verification).
 * @throws UpstreamHttpError 403 when it cannot.
 */
export async function probeAgentsAccess(ctx: StreamContext, environmentId: string, instanceUrl: string): Promise<void> {
  const pages = entityPages(ctx, { key: environmentId, params: { environmentId, instanceUrl } }, 'bots', 'botid', null, (j) => j);
  await pages.next();
  await pages.return(undefined);
}
