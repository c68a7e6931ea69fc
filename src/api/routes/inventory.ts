import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentDetail, listInventory } from '../../reporting/index.ts';
import { INVENTORY_KINDS } from '../../store/repositories/queries.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, EventSchema, FindingSchema, Json, page, PageQuery, Timestamp } from '../schemas.ts';

const ItemSchema = z.object({
  integrationId: z.string(),
  id: z.string(),
  name: z.string().nullable(),
  environmentId: z.string().nullable(),
  attributes: Json.describe('The normalised fields of the object, by kind'),
  firstSeenAt: Timestamp,
  lastSeenAt: Timestamp,
});

/** `/api/v1/inventory/{kind}` (filterable, keyset-paged) and the agent page. */
export function inventoryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/inventory/:kind', {
    schema: {
      tags: ['inventory'],
      summary: 'Live objects of one inventory kind, ordered by integration and id',
      params: z.object({ kind: z.enum(INVENTORY_KINDS) }),
      querystring: PageQuery.extend({
        integrationId: z.string().max(200).optional(),
        environmentId: z.string().max(200).optional().describe('Only objects of this Power Platform environment (agents, apps, flows, connectors, connections)'),
        q: z.string().max(200).optional().describe('Case-insensitive part of the name'),
      }),
      response: { 200: page(ItemSchema), ...commonErrors },
    },
  }, async (request) => listInventory(ctx.db, principalOf(request), request.params.kind, request.query));

  r.get('/integrations/:id/agents/:agentId', {
    schema: {
      tags: ['inventory'],
      summary: 'One Copilot Studio agent: configuration, authentication, sharing, components, owner, findings, events',
      params: z.object({ id: z.string().max(200), agentId: z.string().max(200) }),
      response: {
        200: z.object({
          agent: z.object({
            id: z.string(),
            integrationId: z.string(),
            environmentId: z.string(),
            name: z.string().nullable(),
            schemaName: z.string().nullable(),
            authenticationMode: z.number().nullable().describe('Dataverse bot authenticationmode: 1 none, 2 integrated (Microsoft), 3 manual (OAuth)'),
            authenticationTrigger: z.number().nullable(),
            accessControlPolicy: z.number().nullable().describe('Who may chat with the agent (Dataverse bot accesscontrolpolicy)'),
            publishedOn: Timestamp.nullable(),
            modifiedOn: Timestamp.nullable(),
            createdOn: Timestamp.nullable(),
            stateCode: z.number().nullable(),
            statusCode: z.number().nullable(),
            raw: Json.describe('The Dataverse bot row as collected'),
          }),
          environment: z.object({ id: z.string(), name: z.string().nullable() }),
          owner: z.object({ id: z.string(), name: z.string().nullable(), entraObjectId: z.string().nullable() }).nullable(),
          settings: Json.nullable(),
          components: z.array(z.object({ id: z.string(), name: z.string().nullable(), attributes: Json })),
          findings: z.array(FindingSchema),
          events: z.array(EventSchema),
        }),
        ...commonErrors,
      },
    },
  }, async (request) => agentDetail(ctx.db, principalOf(request), ctx.checks, request.params.id, request.params.agentId));
}
