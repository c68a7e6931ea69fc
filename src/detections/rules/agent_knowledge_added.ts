import { RECORD_TYPES } from '../../core/audit.ts';
import { componentChanges } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A knowledge source other than a public website was added to a Copilot Studio agent (`BotComponentCreate` of a
 * knowledge component: by the collected component, or by the record's component type 16 when the component is not
 * collected yet). Public websites alert as agent_knowledge_public_website instead. Source: Microsoft Learn "Audit
 * Copilot Studio activities in Microsoft Purview"; componenttype 16 = knowledge source is UNCONFIRMED (real exports).
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_knowledge_added',
    title: 'Knowledge source added to an agent',
    severity: 'low',
    description:
      "A knowledge source (SharePoint site, Dataverse table, uploaded file, Graph connector…) was added to an agent: what the agent can quote to its users grew. Agents answer with the user's own permissions for SharePoint and Graph connector sources, but uploaded files and maker-authenticated sources are readable by every user of the agent.",
    response: "Check that the source's content suits the agent's audience (sensitivity labels, uploaded files readable by every user); remove it if not.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/knowledge-copilot-studio',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM02: Sensitive Information Disclosure'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) =>
    (await componentChanges(ctx, /^BotComponentCreate$/i)).flatMap(({ e, agent, componentId, cls, basis, component }) => {
      if (cls !== 'knowledge') return [];
      const k = component?.knowledge;
      return [
        {
          dedupeKey: e.id,
          title: `Knowledge source ${k ? `(${k.sourceType}${k.host ? ` ${k.host}` : ''})` : '(not collected yet)'} added to agent ${agent.label} by ${e.userId}`,
          eventIds: [e.id],
          detail: { ...agent.detail, componentId, basis, schemaName: component?.schemaName ?? null, sourceType: k?.sourceType ?? null, url: k?.url ?? null },
        },
      ];
    }),
};
