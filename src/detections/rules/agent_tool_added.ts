import { RECORD_TYPES } from '../../core/audit.ts';
import { componentChanges } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A tool (a connector action, a flow, a prompt, another agent's call) was added to a Copilot Studio agent: a
 * `BotComponentCreate` record whose component, as collected, is an action (MCP servers alert as
 * agent_mcp_server_added). The record alone cannot tell a tool from a topic (both componenttype 9), so a component
 * not collected yet does not alert here. Source: Microsoft Learn "Audit Copilot Studio activities in Microsoft
 * Purview" and "Add tools to agents".
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_tool_added',
    title: 'Tool or connector added to an agent',
    severity: 'medium',
    description:
      "A tool was added to an agent: generative orchestration lets the model decide when to call it and with which inputs, so the agent can now act (send mail, write records, call an API) on a user's request or on text planted in its knowledge. Tools running on the maker's connection act with the maker's rights for every user.",
    response:
      "Review the tool's connector, operation and connection mode (the maker's or each user's credentials); require user confirmation for write actions, and remove tools the agent does not need.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/add-tools-custom-agent',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-atlas': ['AML.T0053: AI Agent Tool Invocation'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) =>
    (await componentChanges(ctx, /^BotComponentCreate$/i)).flatMap(({ e, agent, componentId, cls, component }) => {
      if (cls !== 'tool') return [];
      const t = component?.tool;
      const what = t?.connectorId ? `${t.connectorId}${t.operationId ? ` ${t.operationId}` : ''}` : (t?.actionKind ?? component?.schemaName ?? 'a tool');
      return [
        {
          dedupeKey: e.id,
          title: `Tool ${what} added to agent ${agent.label} by ${e.userId}`,
          eventIds: [e.id],
          detail: {
            ...agent.detail,
            componentId,
            schemaName: component?.schemaName ?? null,
            actionKind: t?.actionKind ?? null,
            connectorId: t?.connectorId ?? null,
            operationId: t?.operationId ?? null,
            customConnector: t?.customConnector ?? null,
            connectionMode: t?.connectionMode ?? null,
          },
        },
      ];
    }),
};
