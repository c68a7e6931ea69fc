import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { agentDetail, listInventory, riskiestAgents } from '../../reporting/index.ts';
import { commonErrors } from '../../contract/common.ts';
import {
  AgentDetailSchema,
  AgentParams,
  InventoryPageSchema,
  InventoryParams,
  InventoryQuery,
  RankedAgentListSchema,
  RankedAgentsQuery,
} from '../../contract/inventory.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';

/** `/api/v1/inventory/{kind}` (filterable, sortable, keyset-paged, with its total), `/api/v1/agents` (ranked by risk, as `vigil agents`) and the agent page. */
export function inventoryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/inventory/:kind',
    {
      schema: {
        tags: ['inventory'],
        summary: 'Live objects of one inventory kind, filtered and sorted (by name by default), with the total the filter selects',
        params: InventoryParams,
        querystring: InventoryQuery,
        response: { 200: InventoryPageSchema, ...commonErrors },
      },
    },
    async (request) => listInventory(ctx.db, principalOf(request), request.params.kind, request.query),
  );

  r.get(
    '/agents',
    {
      schema: {
        tags: ['inventory'],
        summary: 'Copilot Studio agents ranked by risk, highest score first: open findings weighted by severity, times how far the agent reaches',
        querystring: RankedAgentsQuery,
        response: { 200: RankedAgentListSchema, ...commonErrors },
      },
    },
    async (request) => ({ items: await riskiestAgents(ctx.db, principalOf(request), request.query) }),
  );

  r.get(
    '/integrations/:id/agents/:agentId',
    {
      schema: {
        tags: ['inventory'],
        summary: 'One Copilot Studio agent: configuration, authentication, sharing, components, owner, findings, events',
        params: AgentParams,
        response: { 200: AgentDetailSchema, ...commonErrors },
      },
    },
    async (request) => agentDetail(ctx.db, principalOf(request), ctx.checks, request.params.id, request.params.agentId),
  );
}
