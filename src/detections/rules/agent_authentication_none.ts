import { strings } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** A Copilot Studio agent was published or changed with authentication set to none. */
export const detection: Detection = {
  metadata: {
    id: 'agent_authentication_none',
    title: 'Copilot Studio agent set to "No authentication"',
    severity: 'high',
    description: 'An agent was created, published or updated with its authentication set to none: anyone who reaches a channel can use it and its tools.',
    response: 'Ask the maker why; set Settings > Security > Authentication to Microsoft or manual authentication and republish; consider a DLP rule on the "Chat without Microsoft Entra ID authentication" connector.',
    references: ['https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio', 'https://learn.microsoft.com/microsoft-copilot-studio/configuration-end-user-authentication'],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-atlas': ['AML.T0040: AI Model Inference API Access'] },
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^Bot(Create|Update|Publish)/i.test(e.operation ?? '') && !/bot/i.test(e.operation ?? '')) return [];
      const text = JSON.stringify(e.raw);
      const none = /"(authenticationmode|AuthenticationMode|AuthMode|authenticationMode)"\s*:\s*"?(None|1)"?/.test(text) || strings(e.raw).some((s) => /^(no authentication|none)$/i.test(s) && /auth/i.test(text));
      return none ? [{ dedupeKey: e.id, title: `Agent ${e.objectId ?? ''} set to no authentication by ${e.userId}`.replace('  ', ' '), eventIds: [e.id], detail: { user: e.userId, agent: e.objectId, operation: e.operation } }] : [];
    }),
};
