import { RECORD_TYPES } from '../../core/audit.ts';
import { componentChanges } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** Edits of one agent's instructions by one user within this period (ms) are one alert: makers save often. */
const SESSION_MS = 3_600_000;

/**
 * The instructions of a Copilot Studio agent's generative orchestration were changed: a `BotComponentUpdate`
 * record whose component is the agent's instructions (as collected: `GptComponentMetadata`; or by the record's
 * component type 15). Neither the record nor Vigil keeps the text. Source: Microsoft Learn "Audit Copilot Studio
 * activities in Microsoft Purview"; componenttype 15 for instructions from real solution exports (UNCONFIRMED in docs).
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_instructions_changed',
    title: 'Agent instructions changed',
    severity: 'medium',
    description:
      "The instructions that steer an agent's generative orchestration were edited: they decide what the agent answers, which tools it calls and what it refuses. An unreviewed edit can remove guardrails or tell the agent to send data elsewhere. Edits by one user within an hour are one alert; whether the new text holds a credential is the posture check agent_hardcoded_credentials' to say.",
    response:
      "Compare the instructions with the last reviewed version (solution history or the agent's Overview page) with the maker; restore them if the change was not expected, and republish.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/authoring-instructions',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM07: System Prompt Leakage', 'LLM01: Prompt Injection'], 'mitre-atlas': ['AML.T0051: LLM Prompt Injection'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) =>
    (await componentChanges(ctx, /^BotComponentUpdate$/i)).flatMap(({ e, agent, componentId, cls, basis }) => {
      if (cls !== 'instructions') return [];
      const session = Math.floor(Date.parse(e.creationTime) / SESSION_MS);
      return [
        {
          dedupeKey: `${agent.detail.agentId ?? componentId ?? e.id}|${(e.userId ?? '').toLowerCase()}|${session}`,
          title: `Instructions of agent ${agent.label} changed by ${e.userId}`,
          eventIds: [e.id],
          detail: { ...agent.detail, componentId, basis },
        },
      ];
    }),
};
