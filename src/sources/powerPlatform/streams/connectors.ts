import type { EstateObject } from '../../../core/inventory.ts';
import { str, bool, obj, arr, type Json } from '../../../core/json.ts';
import { connectorIdOf, hostOf, principal, enc, powerAppsListStream, CONNECTORS_API_VERSION } from '../admin.ts';
import type { Stream } from '../../stream.ts';
import type { PowerPlatformPrincipal } from '../admin.ts';

/**
 * Attributes of a connector as listed in one environment.
 *
 * Connector ids are the connector names (`shared_office365`, or a custom connector's `shared_{name}-5f{hex}`), taken
 * from the last segment of `/providers/Microsoft.PowerApps/apis/{name}`. Sources: reference §3.3 (admin inventory
 * endpoints).
 */
export interface ConnectorAttrs {
  environmentId: string;
  /** Connector name (`shared_sql`). */
  connectorId: string;
  displayName: string | null;
  /** `properties.isCustomApi`. */
  isCustom: boolean;
  publisher: string | null;
  /** `Standard` or `Premium` (`properties.tier`). */
  tier: string | null;
  /** Custom connectors: the backend URL (`backendService.serviceUrl`, or `swagger` scheme + host + basePath). */
  backendUrl: string | null;
  /** Lower-case host of {@link backendUrl}. */
  backendHost: string | null;
  createdBy: PowerPlatformPrincipal | null;
  createdTime: string | null;
}

/** Maps a connector of the `apis` list to {@link ConnectorAttrs} (id `{env}/{connector}`). */
export function toConnector(environmentId: string, j: Json): EstateObject<ConnectorAttrs> {
  const p = obj(j.properties);
  const connectorId = str(j.name) ?? connectorIdOf(j.id) ?? String(j.id);
  const swagger = obj(p.swagger);
  const swaggerHost = str(swagger.host);
  const scheme = str(arr(swagger.schemes)[0]) ?? 'https';
  const backendUrl = str(obj(p.backendService).serviceUrl) ?? (swaggerHost ? `${scheme}://${swaggerHost}${str(swagger.basePath) ?? ''}` : null);
  const isCustom = bool(p.isCustomApi) ?? false;
  return {
    sliceKey: environmentId,
    id: `${environmentId}/${connectorId}`,
    name: str(p.displayName),
    attrs: {
      environmentId,
      connectorId,
      displayName: str(p.displayName),
      isCustom,
      publisher: str(p.publisher),
      tier: str(p.tier),
      backendUrl,
      backendHost: hostOf(backendUrl),
      createdBy: p.createdBy ? principal(p.createdBy) : null,
      createdTime: str(p.createdTime),
    },
    raw: j,
  };
}

/** Connectors (standard and custom) listed in each environment. */
export const connectorsStream: Stream<'connectors', EstateObject<ConnectorAttrs>, 'connectors'> = powerAppsListStream(
  'connectors',
  { kind: 'connectors', position: 40, environment: true },
  toConnector,
  (ctx, env) =>
    `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/apis?api-version=${CONNECTORS_API_VERSION}&$filter=${enc(`environment eq '${env}'`)}`,
);
