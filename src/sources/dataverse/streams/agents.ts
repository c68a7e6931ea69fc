import { num, str } from '../../../core/json.ts';
import { dataverseEntityStream } from '../entity.ts';
import type { Stream } from '../../stream.ts';
import type { Collected } from '../../../core/inventory.ts';

/**
 * A Copilot Studio agent (Dataverse `bot`, https://learn.microsoft.com/power-apps/developer/data-platform/reference/entities/bot).
 * `authenticationMode`: 0 Unspecified, 1 None, 2 Integrated, 3 Custom Azure AD, 4 Generic OAuth2.
 * `accessControlPolicy`: 0 Any, 1 Copilot readers, 2 Group membership, 3 Any (multitenant: users of any Entra tenant).
 */
export interface Agent extends Collected {
  environmentId: string;
  id: string;
  name: string | null;
  schemaName: string | null;
  authenticationMode: number | null;
  authenticationTrigger: number | null;
  accessControlPolicy: number | null;
  /** `_ownerid_value`: a Dataverse systemuser or team id. */
  ownerId: string | null;
  /** ISO 8601 UTC timestamps. */
  publishedOn: string | null;
  modifiedOn: string | null;
  createdOn: string | null;
  stateCode: number | null;
  statusCode: number | null;
}

/** Fields of `bot` read by Vigil (reference §4.3). */
const BOT_FIELDS =
  'botid,name,schemaname,authenticationmode,authenticationtrigger,accesscontrolpolicy,authorizedsecuritygroupids,publishedon,_publishedby_value,_ownerid_value,statecode,statuscode,language,runtimeprovider,template,createdon,modifiedon,configuration';

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
export const agentsStream: Stream<'agents', Agent, 'agents'> = dataverseEntityStream({
  name: 'agents',
  inventory: { kind: 'agents', position: 10, environment: true },
  primaryKey: ['environmentId', 'id'],
  entitySet: 'bots',
  select: BOT_FIELDS,
  map: (j, slice): Agent => toAgent(j, slice.key),
});
