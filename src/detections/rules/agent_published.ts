import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A Copilot Studio agent was published (`BotUpdateOperation-BotPublish`, RecordType 256): its current draft —
 * instructions, knowledge, tools — became what users reach on its channels. Source: Microsoft Learn "Audit Copilot
 * Studio activities in Microsoft Purview".
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_published',
    title: 'Copilot Studio agent published',
    severity: 'low',
    description:
      "An agent was published (BotUpdateOperation-BotPublish): every change saved since the last publication — instructions, knowledge sources, tools, topics — is now live on the agent's channels. Publication with no authentication alerts apart (agent_authentication_none).",
    response:
      'Check that the publication was expected (change management) and review what changed since the previous one: the component changes alerted for this agent, and its posture findings.',
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/publication-fundamentals-publish-channels',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^BotUpdateOperation-BotPublish$/i.test(e.operation ?? '')) return [];
      const agent = agentOf(e);
      if (!agent) return [];
      return [{ dedupeKey: e.id, title: `Agent ${agent.label} published by ${e.userId}`, eventIds: [e.id], detail: agent.detail }];
    }),
};
