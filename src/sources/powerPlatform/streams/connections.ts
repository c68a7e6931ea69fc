import type { EstateObject } from '../../../core/inventory.ts';
import { str, obj, arr, type Json } from '../../../core/json.ts';
import { connectorIdOf, principal, enc, powerAppsListStream, CONNECTIONS_API_VERSION } from '../admin.ts';
import type { Stream } from '../../stream.ts';
import type { PowerPlatformPrincipal } from '../admin.ts';

/**
 * Attributes of a connection (admin `connections`).
 *
 * Sources: reference §3.3 (admin inventory endpoints); terraform-provider-power-platform connection fixtures
 * (`createdBy`, `statuses`, `connectionParameters`, `permissions`, `accountName`).
 */
export interface ConnectionAttrs {
  environmentId: string;
  /** Connector name (`properties.apiId`'s last segment). */
  connectorId: string | null;
  displayName: string | null;
  /** The maker who created it: the connection runs on this person's credentials when `authenticationType` is `oauth`. */
  createdBy: PowerPlatformPrincipal;
  createdTime: string | null;
  lastModifiedTime: string | null;
  /** `properties.statuses[].status`: `Connected`, `Error`, … */
  statuses: string[];
  /** True when any status is not `Connected`. */
  isErrored: boolean;
  /**
   * How the connection authenticates: `oauth` (delegated; `connectionParameters['token:grantType']`), the
   * `connectionParametersSet.name` (e.g. `oauthSP` for a service principal), or `connectionParameters.authType`;
   * null when none is given.
   */
  authenticationType: string | null;
  /** `properties.accountName`: the account the connection signs in as (whose credentials it runs on). */
  accountName: string | null;
  /** Shared beyond its owner (any role assignment besides `Owner`). */
  isShared: boolean;
  /** Shared with everyone (a `Tenant` principal). */
  sharedWithTenant: boolean;
  /** Object ids of the users and groups it is shared with. */
  sharedWith: string[];
}

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
export const connectionsStream: Stream<'connections', EstateObject<ConnectionAttrs>, 'connections'> = powerAppsListStream(
  'connections',
  { kind: 'connections', position: 50, environment: true },
  toConnection,
  (ctx, env) =>
    `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/scopes/admin/environments/${enc(env)}/connections?api-version=${CONNECTIONS_API_VERSION}`,
);
