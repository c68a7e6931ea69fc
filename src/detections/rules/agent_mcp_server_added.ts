import { RECORD_TYPES } from '../../core/audit.ts';
import { componentChanges } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A Model Context Protocol server was added to a Copilot Studio agent as a tool: a `BotComponentCreate` record whose
 * component, as collected, is an MCP tool (`InvokeExternalAgentTaskAction`). Source: Microsoft Learn "Audit Copilot
 * Studio activities in Microsoft Purview" and "Extend your agent with Model Context Protocol".
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_mcp_server_added',
    title: 'MCP server added to an agent',
    severity: 'high',
    description:
      "An MCP server was connected to an agent: the server decides at run time which tools the agent sees, with descriptions the model reads as instructions (tool poisoning), and the agent sends it whatever inputs the model chooses. A server outside the organisation's control can change the agent's behaviour without any further change in Copilot Studio.",
    response:
      'Check who runs the MCP server and where (its host in the custom connector); allow only reviewed servers (DLP: block the connector or restrict its endpoint), and remove the server if it is not approved.',
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/agent-extend-action-mcp',
    ],
    frameworks: {
      'owasp-llm-2025': ['LLM06: Excessive Agency', 'LLM03: Supply Chain'],
      'mitre-atlas': ['AML.T0053: AI Agent Tool Invocation'],
    },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) =>
    (await componentChanges(ctx, /^BotComponentCreate$/i)).flatMap(({ e, agent, componentId, cls, component }) => {
      if (cls !== 'mcp') return [];
      const t = component?.tool;
      return [
        {
          dedupeKey: e.id,
          title: `MCP server ${t?.serverHost ?? t?.connectorId ?? component?.schemaName ?? ''} added to agent ${agent.label} by ${e.userId}`.replace('  ', ' '),
          eventIds: [e.id],
          detail: {
            ...agent.detail,
            componentId,
            schemaName: component?.schemaName ?? null,
            connectorId: t?.connectorId ?? null,
            serverHost: t?.serverHost ?? null,
          },
        },
      ];
    }),
};
