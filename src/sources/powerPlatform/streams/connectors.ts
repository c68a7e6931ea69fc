import type { ConnectorAttrs } from '../../../core/estate/powerPlatform.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { str, bool, obj, arr, type Json } from '../../../core/json.ts';
import { connectorIdOf, hostOf, principal, enc, powerAppsListStream, CONNECTORS_API_VERSION } from '../admin.ts';

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
export const connectorsStream = powerAppsListStream(
  'connectors',
  toConnector,
  (ctx, env) =>
    `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/apis?api-version=${CONNECTORS_API_VERSION}&$filter=${enc(`environment eq '${env}'`)}`,
);
