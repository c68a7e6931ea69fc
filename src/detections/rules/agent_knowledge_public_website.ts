import { RECORD_TYPES } from '../../core/audit.ts';
import { componentChanges } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A public website became a knowledge source of a Copilot Studio agent: a `BotComponentCreate` or
 * `BotComponentUpdate` record whose component, as collected, is a knowledge source of type public website (the
 * record itself names the component, not its URL). Sources: Microsoft Learn "Audit Copilot Studio activities in
 * Microsoft Purview" (agent component events) and "Knowledge sources" (public websites are searched through Bing).
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_knowledge_public_website',
    title: 'Public website added as agent knowledge',
    severity: 'high',
    description:
      "A public website was added to an agent's knowledge (or a knowledge source was changed to one): the agent grounds its answers on content anyone who controls that site can change, the classic path for indirect prompt injection, and its queries go to Bing outside the Microsoft 365 boundary. The site comes from the collected component; a knowledge source not collected yet alerts as agent_knowledge_added.",
    response:
      "Check the site with the maker: prefer a site the organisation controls or a SharePoint source; remove the website knowledge if it is not needed, and keep the agent's instructions from following text found in its sources.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/knowledge-copilot-studio',
    ],
    frameworks: {
      'owasp-llm-2025': ['LLM01: Prompt Injection', 'LLM04: Data and Model Poisoning'],
      'mitre-atlas': ['AML.T0051.001: LLM Prompt Injection: Indirect'],
    },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) =>
    (await componentChanges(ctx, /^BotComponent(Create|Update)$/i)).flatMap(({ e, agent, componentId, cls, component }) => {
      if (cls !== 'knowledgePublicWebsite') return [];
      const url = component?.knowledge?.url ?? null;
      const host = component?.knowledge?.host ?? null;
      return [
        {
          // One alert per component and site: saving the same source again does not alert again.
          dedupeKey: `${componentId ?? e.id}|${host ?? ''}`,
          title: `Agent ${agent.label} now uses the public website ${host ?? url ?? '(unknown)'} as knowledge (${e.userId})`,
          eventIds: [e.id],
          detail: { ...agent.detail, componentId, schemaName: component?.schemaName ?? null, url, host },
        },
      ];
    }),
};
