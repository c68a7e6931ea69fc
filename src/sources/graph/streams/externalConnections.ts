import type { EstateObject } from '../../../core/inventory.ts';
import { str, type Json } from '../../../core/json.ts';
import { odataListStream } from '../../odata.ts';
import type { Stream } from '../../stream.ts';

/**
 * `externalConnections`: Microsoft Search external connections (Copilot connectors) of the tenant,
 * `GET /v1.0/external/connections`, paged by `@odata.nextLink`; full read every round. Needs
 * ExternalConnection.Read.All.
 */

/**
 * A Microsoft Search external connection (Copilot connector) that feeds external content into Microsoft Search and
 * Microsoft 365 Copilot. `id` = the connection id; slice `*`.
 *
 * Sources: reference §5.5; learn.microsoft.com/graph/api/externalconnectors-external-list-connections and
 * /graph/api/resources/externalconnectors-externalconnection (`state`: draft, ready, obsolete, limitExceeded;
 * `configuration.authorizedAppIds`).
 */
export interface ExternalConnectionAttrs {
  /** Display name. */
  name: string | null;
  description: string | null;
  /** `draft`, `ready`, `obsolete`, `limitExceeded` (as Graph returns it; null when absent). */
  state: string | null;
  /** `configuration.authorizedAppIds`: application (client) ids allowed to push items; empty when none listed. */
  authorizedAppIds: string[];
  /** Id of the Microsoft-built connector it was created from; null for a custom (API-built) connection. */
  connectorId: string | null;
}

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
export const externalConnectionsStream: Stream<'externalConnections', EstateObject<ExternalConnectionAttrs>> = odataListStream({
  name: 'externalConnections',
  capability: 'graph.externalConnections',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.graph.resource,
  request: (ctx, _slice, cursor) => ({ api: 'graph', url: cursor ?? `${ctx.cloud.graph.baseUrl}/v1.0/external/connections` }),
  map: (j) => toExternalConnection(j),
});
