import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * A Copilot Studio agent's Application Insights logging was changed (`BotAppInsightsUpdate`, RecordType 256).
 * Source: Microsoft Learn "Audit Copilot Studio activities in Microsoft Purview" ("Updating App Insights logging
 * configuration"); Datadog's rule of the same event names the risk.
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_app_insights_changed',
    title: "Copilot Studio agent's Application Insights logging changed",
    severity: 'medium',
    description:
      "An agent's Application Insights configuration was changed (BotAppInsightsUpdate): conversation telemetry can be turned off, hiding misuse, or sent to an Application Insights resource someone else controls, carrying conversation content out of the tenant.",
    response:
      "Open the agent's Settings > Advanced > Application Insights and check the connection string belongs to your subscription and logging is on as agreed; revert and review the account if not.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/advanced-bot-framework-composer-capture-telemetry',
    ],
    frameworks: { 'mitre-attack': ['T1562: Impair Defenses', 'T1567: Exfiltration Over Web Service'] },
    peers: ['Datadog "Microsoft 365 Copilot Studio Application Insights logging modified" (same event)'],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^BotAppInsightsUpdate$/i.test(e.operation ?? '')) return [];
      const agent = agentOf(e);
      if (!agent) return [];
      return [
        { dedupeKey: e.id, title: `Application Insights logging of agent ${agent.label} changed by ${e.userId}`, eventIds: [e.id], detail: agent.detail },
      ];
    }),
};
