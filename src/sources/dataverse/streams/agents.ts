import type { Agent } from '../../../core/inventory.ts';
import { num, str } from '../../../core/json.ts';
import { dataverseEntityStream } from '../entity.ts';

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
export const agentsStream = dataverseEntityStream({
  name: 'agents',
  primaryKey: ['environmentId', 'id'],
  entitySet: 'bots',
  select: BOT_FIELDS,
  map: (j, slice): Agent => toAgent(j, slice.key),
});
