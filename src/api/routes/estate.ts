import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { commonErrors } from '../../contract/common.ts';
import { AgentReachSchema, EnvironmentEstateSchema, EnvironmentParams, EstateAgentPageSchema, EstateAgentsQuery } from '../../contract/estate.ts';
import { AgentParams } from '../../contract/inventory.ts';
import { agentReach, agentsPage, environmentEstate } from '../../reporting/estate.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';

/** The estate as a picture: the agents table, an agent's reach graph and one environment's agents, apps and flows by risk. */
export function estateRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/estate/agents',
    {
      schema: {
        tags: ['inventory'],
        summary:
          'Every Copilot Studio agent with its environment, owner, sign-in, sharing, tools, knowledge, open findings and risk; sorted, searched and paged on the server, with the total',
        querystring: EstateAgentsQuery,
        response: { 200: EstateAgentPageSchema, ...commonErrors },
      },
    },
    async (request) => agentsPage(ctx.db, principalOf(request), request.query),
  );

  r.get(
    '/integrations/:id/agents/:agentId/reach',
    {
      schema: {
        tags: ['inventory'],
        summary:
          "An agent's reach graph: who can reach it (audience, sign-in, channels) and what it reaches (tools, connectors, connections, MCP servers, knowledge, HTTP endpoints, agents)",
        params: AgentParams,
        response: { 200: AgentReachSchema, ...commonErrors },
      },
    },
    async (request) => agentReach(ctx.db, principalOf(request), request.params.id, request.params.agentId),
  );

  r.get(
    '/integrations/:id/environments/:environmentId/estate',
    {
      schema: {
        tags: ['inventory'],
        summary: "One Power Platform environment's agents, apps and flows, riskiest first",
        params: EnvironmentParams,
        response: { 200: EnvironmentEstateSchema, ...commonErrors },
      },
    },
    async (request) => environmentEstate(ctx.db, principalOf(request), request.params.id, request.params.environmentId),
  );
}
