import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A Copilot Studio agent was created (`BotCreate`, RecordType 256). Source: Microsoft Learn "Audit Copilot Studio
 * activities in Microsoft Purview" (agent authoring events). Users ask for it: CoE Starter Kit issue #10852.
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_created',
    title: 'Copilot Studio agent created',
    severity: 'info',
    description:
      'A maker created a Copilot Studio agent (BotCreate). New agents join the estate without review: this alert is the record of who created which agent in which environment, for inventory and change review.',
    response:
      'Confirm the agent has an owner and a purpose; review its authentication, sharing, knowledge and tools before it is published; the posture checks evaluate it at the next collection.',
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://github.com/microsoft/coe-starter-kit/issues/10852',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^BotCreate$/i.test(e.operation ?? '')) return [];
      const agent = agentOf(e);
      if (!agent) return [];
      return [{ dedupeKey: e.id, title: `Agent ${agent.label} created by ${e.userId}`, eventIds: [e.id], detail: agent.detail }];
    }),
};
