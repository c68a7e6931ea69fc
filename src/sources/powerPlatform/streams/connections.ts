import type { ConnectionAttrs } from '../../../core/estate/powerPlatform.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { str, obj, arr, type Json } from '../../../core/json.ts';
import { connectorIdOf, principal, enc, powerAppsListStream, CONNECTIONS_API_VERSION } from '../admin.ts';

/** Maps an admin connection to {@link ConnectionAttrs} (id `{env}/{connection}`). */
export function toConnection(environmentId: string, j: Json): EstateObject<ConnectionAttrs> {
  const p = obj(j.properties);
  const statuses = arr(p.statuses)
    .map((x) => str(obj(x).status))
    .filter((x): x is string => x !== null);
  const params = obj(p.connectionParameters);
  const set = obj(p.connectionParametersSet);
  const authenticationType =
    str(set.name) ?? (str(params['token:grantType']) ? 'oauth' : null) ?? str(params.authType) ?? (params.api_key !== undefined ? 'apiKey' : null);
  const createdBy = principal(p.createdBy);
  const grants = arr(p.permissions).map((x) => obj(obj(x).properties));
  const others = grants.filter((g) => str(g.roleName) !== 'Owner');
  const name = String(j.name);
  return {
    sliceKey: environmentId,
    id: `${environmentId}/${name}`,
    name: str(p.displayName),
    attrs: {
      environmentId,
      connectorId: connectorIdOf(p.apiId) ?? connectorIdOf(j.id),
      displayName: str(p.displayName),
      createdBy,
      createdTime: str(p.createdTime),
      lastModifiedTime: str(p.lastModifiedTime),
      statuses,
      isErrored: statuses.some((x) => x !== 'Connected'),
      authenticationType,
      accountName: str(p.accountName),
      isShared: others.length > 0,
      sharedWithTenant: others.some((g) => str(obj(g.principal).type)?.toLowerCase() === 'tenant'),
      sharedWith: others
        .filter((g) => str(obj(g.principal).type)?.toLowerCase() !== 'tenant')
        .map((g) => str(obj(g.principal).id))
        .filter((x): x is string => x !== null),
    },
    raw: j,
  };
}

/** Connections of each environment. */
export const connectionsStream = powerAppsListStream(
  'connections',
  toConnection,
  (ctx, env) =>
    `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/scopes/admin/environments/${enc(env)}/connections?api-version=${CONNECTIONS_API_VERSION}`,
);
