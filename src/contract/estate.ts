import { z } from 'zod';

/**
 * Contract of the estate as a picture (issue 21): the agents table of every integration (`/api/v1/estate/agents`,
 * paged, sorted and searched on the server, with the total), an agent's reach graph
 * (`/api/v1/integrations/{id}/agents/{agentId}/reach`) and one environment's agents, apps and flows by risk
 * (`/api/v1/integrations/{id}/environments/{environmentId}/estate`).
 */

/** Sort keys of the agents table. */
export const AGENT_SORTS = ['risk', 'name', 'environment', 'owner', 'findings', 'tools', 'knowledge'] as const;

/** Filters, order and page of the agents table. */
export const EstateAgentsQuery = z.object({
  integrationId: z.string().max(200).optional().describe('Only the agents of this integration'),
  environmentId: z.string().max(200).optional().describe('Only the agents of this Power Platform environment'),
  q: z.string().max(200).optional().describe('Case-insensitive part of the agent, environment or owner name'),
  sort: z.enum(AGENT_SORTS).default('risk').describe('Order by this column'),
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('Agents per page (1–500)'),
  cursor: z.string().max(2000).optional().describe('nextCursor of the previous page'),
});

/** One row of the agents table. */
const EstateAgentSchema = z
  .object({
    integrationId: z.string(),
    integrationName: z.string(),
    agentId: z.string(),
    name: z.string().nullable(),
    environmentId: z.string(),
    environmentName: z.string().nullable(),
    owner: z.string().nullable().describe("The owner's name (Dataverse system user), null when unknown"),
    authentication: z.string().describe('How users sign in: None, Microsoft (integrated), Manual (Microsoft Entra ID), Manual (generic OAuth 2) or Unknown'),
    sharing: z.string().describe('Who may chat: Everyone in the organization, Any Microsoft Entra tenant, Agent readers, Security groups or Unknown'),
    orchestration: z.enum(['generative', 'classic']).nullable().describe('Generative orchestration on or off; null when the settings were not collected'),
    tools: z.number().int().nullable().describe('Connector, flow and MCP tools; null when the components were not collected'),
    knowledge: z.number().int().nullable().describe('Knowledge sources; null when the components were not collected'),
    openFindings: z.number().int(),
    score: z.number().describe('Risk 0–100 (src/checks/risk.ts)'),
    reach: z.string().describe('anyone, any tenant, organization, restricted, makers only, off or unknown'),
    reasons: z.array(z.string()),
  })
  .meta({ id: 'EstateAgent' });
/** One row of the agents table. */
export type EstateAgent = z.infer<typeof EstateAgentSchema>;

/** A page of the agents table with the total matching the filters. */
export const EstateAgentPageSchema = z
  .object({
    items: z.array(EstateAgentSchema),
    total: z.number().int().describe('Agents matching the filters, over every page'),
    nextCursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last'),
  })
  .meta({ id: 'EstateAgentPage' });

/** Kinds of node in a reach graph. */
const REACH_NODE_KINDS = [
  'agent',
  'channel',
  'authentication',
  'audience',
  'tool',
  'mcpServer',
  'connector',
  'connection',
  'knowledge',
  'httpEndpoint',
  'childAgent',
  'connectedAgent',
  'data',
] as const;

/** One node of a reach graph. */
const ReachNodeSchema = z.object({
  id: z.string(),
  kind: z.enum(REACH_NODE_KINDS),
  /** Which side of the agent: who can reach it (`inbound`), what it reaches (`outbound`), or the agent itself. */
  side: z.enum(['inbound', 'agent', 'outbound']),
  label: z.string(),
  detail: z.string().nullable().describe('A second line: the connector id, host, account, or why'),
  flags: z
    .array(z.string())
    .describe(
      'Risk flags: no-authentication, broad-sharing, multitenant, maker-credentials, public-website, mcp, custom-connector, insecure-http, shared-with-tenant',
    ),
});

/** One edge of a reach graph: `from` reaches `to`. */
const ReachEdgeSchema = z.object({ id: z.string(), from: z.string(), to: z.string(), label: z.string() });

/** What an agent reaches and who reaches it. */
export const AgentReachSchema = z
  .object({
    integrationId: z.string(),
    agentId: z.string(),
    name: z.string().nullable(),
    environment: z.object({ id: z.string(), name: z.string().nullable() }),
    score: z.number().describe('Risk 0–100 (src/checks/risk.ts)'),
    reasons: z.array(z.string()),
    nodes: z.array(ReachNodeSchema),
    edges: z.array(ReachEdgeSchema),
    notEvaluated: z.array(z.string()).describe('Parts of the picture Vigil could not see, and why'),
  })
  .meta({ id: 'AgentReach' });
/** What an agent reaches and who reaches it. */
export type AgentReach = z.infer<typeof AgentReachSchema>;
/** One node of a reach graph. */
export type ReachNode = z.infer<typeof ReachNodeSchema>;

/** Path of one environment's estate. */
export const EnvironmentParams = z.object({ id: z.string().max(200), environmentId: z.string().max(200) });

/** An app or flow with its risk. */
const RankedObjectSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  owner: z.string().nullable(),
  exposure: z.string().describe('Who can use or start it, in words'),
  openFindings: z.number().int(),
  score: z.number().describe('Risk 0–100 (src/checks/risk.ts)'),
  reasons: z.array(z.string()),
});

/** One environment: its agents, apps and flows, riskiest first. */
export const EnvironmentEstateSchema = z
  .object({
    integrationId: z.string(),
    integrationName: z.string(),
    environment: z.object({
      id: z.string(),
      name: z.string().nullable(),
      sku: z.string().nullable(),
      region: z.string().nullable(),
      isDefault: z.boolean(),
    }),
    agents: z.array(EstateAgentSchema),
    apps: z.array(RankedObjectSchema),
    flows: z.array(RankedObjectSchema),
  })
  .meta({ id: 'EnvironmentEstate' });
/** One environment: its agents, apps and flows, riskiest first. */
export type EnvironmentEstate = z.infer<typeof EnvironmentEstateSchema>;
