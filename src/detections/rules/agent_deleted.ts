import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A Copilot Studio agent was deleted (`BotDelete`, RecordType 256). `BotDeleteCleanup`, the clean-up of the
 * agent's dependencies that follows, does not alert again. Source: Microsoft Learn "Audit Copilot Studio activities in
 * Microsoft Purview".
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_deleted',
    title: 'Copilot Studio agent deleted',
    severity: 'medium',
    description:
      'A maker or administrator deleted a Copilot Studio agent (BotDelete): its conversations stop and its configuration is gone. Deleting an agent can also remove the evidence of how it was misused.',
    response:
      "Confirm the deletion with the agent's owner; if it was not expected, review the account's other recent activity and restore the agent from a solution export or environment backup.",
    references: ['https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio'],
    frameworks: { 'mitre-attack': ['T1485: Data Destruction', 'T1070: Indicator Removal'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^BotDelete$/i.test(e.operation ?? '')) return [];
      const agent = agentOf(e);
      if (!agent) return [];
      return [{ dedupeKey: e.id, title: `Agent ${agent.label} deleted by ${e.userId}`, eventIds: [e.id], detail: agent.detail }];
    }),
};
