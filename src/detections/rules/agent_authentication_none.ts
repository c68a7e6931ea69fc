import { RECORD_TYPES } from '../../core/audit.ts';
import { powerPlatformAdminActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/** A Copilot Studio agent was published or changed with authentication set to none. */
export const detection: Detection = {
  metadata: {
    id: 'agent_authentication_none',
    title: 'Copilot Studio agent set to "No authentication"',
    severity: 'high',
    description: 'An agent was created, published or updated with its authentication set to none: anyone who reaches a channel can use it and its tools.',
    response:
      'Ask the maker why; set Settings > Security > Authentication to Microsoft or manual authentication and republish; consider a DLP rule on the "Chat without Microsoft Entra ID authentication" connector.',
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/configuration-end-user-authentication',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-atlas': ['AML.T0040: AI Model Inference API Access'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const a = powerPlatformAdminActivity(e);
      if (!a || a.resourceType !== 'Bot') return [];
      // Changed to none (BotUpdateOperation-BotAuthUpdate lists the change), or published while none.
      const changedToNone = a.changes.some(
        (c) => /^authenticationmode$/i.test(c.property) && /^none$/i.test(c.newValue ?? '') && !/^none$/i.test(c.oldValue ?? ''),
      );
      const publishedNone = /BotPublish/i.test(e.operation ?? '') && /^none$/i.test(a.authenticationMode ?? '');
      if (!changedToNone && !publishedNone) return [];
      const agent = a.botName ?? a.botId ?? e.objectId ?? 'an agent';
      return [
        {
          dedupeKey: e.id,
          title: `Agent ${agent} ${changedToNone ? 'set to' : 'published with'} no authentication by ${e.userId}`,
          eventIds: [e.id],
          detail: {
            user: e.userId,
            agentId: a.botId ?? e.objectId,
            agent: a.botName,
            environmentId: a.environmentId,
            environment: a.environmentName,
            operation: e.operation,
          },
        },
      ];
    }),
};
