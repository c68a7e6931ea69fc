import type { ExternalConnectionAttrs } from '../../../core/estate/graph.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { str, type Json } from '../../../core/json.ts';
import { odataListStream } from '../../odata.ts';

/**
 * `externalConnections`: Microsoft Search external connections (Copilot connectors) of the tenant,
 * `GET /v1.0/external/connections`, paged by `@odata.nextLink`; full read every round. Needs
 * ExternalConnection.Read.All.
 */

/** Maps an external connection to an estate object (slice `*`). */
function toExternalConnection(j: Json): EstateObject<ExternalConnectionAttrs> {
  const configuration = (j.configuration ?? {}) as Json;
  return {
    sliceKey: '*',
    id: String(j.id),
    name: str(j.name),
    attrs: {
      name: str(j.name),
      description: str(j.description),
      state: str(j.state),
      authorizedAppIds: Array.isArray(configuration.authorizedAppIds) ? configuration.authorizedAppIds.map(String) : [],
      connectorId: str(j.connectorId),
    },
    raw: j,
  };
}

/** Microsoft Search external connections (Copilot connectors) of the tenant. */
export const externalConnectionsStream = odataListStream({
  name: 'externalConnections',
  capability: 'graph.externalConnections',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.graph.resource,
  request: (ctx, _slice, cursor) => ({ api: 'graph', url: cursor ?? `${ctx.cloud.graph.baseUrl}/v1.0/external/connections` }),
  map: (j) => toExternalConnection(j),
});
