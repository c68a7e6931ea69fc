import { RECORD_TYPES } from '../../core/audit.ts';
import { copilotInteraction } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * Copilot flagged a jailbreak attempt or a cross-prompt injection in an interaction. Real CopilotInteraction records
 * carry `JailbreakDetected` on each of `CopilotEventData.Messages` and `XPIADetected` on each of `AccessedResources`
 * (a recorded Teams interaction, November 2025, in pnp/Microsoft365-Analytics-Insights' Copilot tests; Sentinel's
 * Microsoft Copilot solution reads `Messages[0].JailbreakDetected`). Records without the flags, or with them false,
 * do not alert.
 */
export const detection: Detection = {
  metadata: {
    id: 'copilot_jailbreak_attempt',
    title: 'Copilot flagged a jailbreak or prompt-injection attempt',
    severity: 'high',
    description:
      "A Microsoft 365 Copilot interaction (RecordType 261) has a message flagged JailbreakDetected (the user's prompt tried to override Copilot's guardrails) or an accessed resource flagged XPIADetected (a file, mail or page Copilot read carried instructions meant for the model: cross-prompt injection).",
    response:
      "Review the user's recent Copilot activity and the flagged resources; for a jailbreak, talk to the user or check whether the account is compromised; for cross-prompt injection, find who wrote the flagged content and remove or quarantine it.",
    references: [
      'https://learn.microsoft.com/office/office-365-management-api/copilot-schema',
      'https://learn.microsoft.com/copilot/microsoft-365/microsoft-365-copilot-ai-security',
    ],
    frameworks: {
      'owasp-llm-2025': ['LLM01: Prompt Injection'],
      'mitre-atlas': ['AML.T0054: LLM Jailbreak', 'AML.T0051: LLM Prompt Injection'],
    },
    peers: [
      'Sentinel "Copilot - Jailbreak Attempt Detected" (exceeds: any message of the interaction, not only the first, and cross-prompt injection flagged on accessed resources)',
    ],
    recordTypes: [RECORD_TYPES.CopilotInteraction],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const c = copilotInteraction(e);
      if (!c || (c.jailbreakMessageIds.length === 0 && c.xpiaResources.length === 0)) return [];
      const what = [
        ...(c.jailbreakMessageIds.length > 0 ? ['a jailbreak attempt'] : []),
        ...(c.xpiaResources.length > 0 ? [`prompt injection in ${c.xpiaResources.length} resource(s)`] : []),
      ].join(' and ');
      return [
        {
          dedupeKey: e.id,
          title: `Copilot flagged ${what} for ${e.userId}`,
          eventIds: [e.id],
          detail: { user: e.userId, appHost: c.appHost, threadId: c.threadId, jailbreakMessageIds: c.jailbreakMessageIds, xpiaResources: c.xpiaResources },
        },
      ];
    }),
};
