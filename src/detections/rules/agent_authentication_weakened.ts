import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf, propertyChange } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * Strength of an agent's authentication mode as records name it (the Dataverse `authenticationmode` labels):
 * Microsoft authentication (`Integrated`: Entra ID users of the tenant, in Teams and Microsoft 365) is the
 * narrowest; manual Entra ID (`Custom Azure AD`, also spelled `Custom Azure Active Directory`) admits any account
 * the app registration accepts; manual generic OAuth 2 (`Generic OAuth2`) any identity provider; `None` anyone.
 */
const RANK: [RegExp, number][] = [
  [/^integrated$/i, 3],
  [/^custom azure (ad|active directory)$/i, 2],
  [/^generic ?oauth ?2$/i, 1],
  [/^none$/i, 0],
];
const rank = (mode: string | null) => RANK.find(([re]) => re.test((mode ?? '').trim()))?.[1] ?? null;

/**
 * A Copilot Studio agent's authentication was changed to a weaker mode other than none
 * (`BotUpdateOperation-BotAuthUpdate`, `AuthenticationMode` in `bot.update_details.change`). A change to none is
 * agent_authentication_none's, so one change raises one alert. Source: Microsoft Learn "Audit Copilot Studio
 * activities in Microsoft Purview" and "Configure user authentication"; Datadog's rule on the same event lists the
 * changed properties `AuthenticationMode`, `AuthenticationConnection`, `AuthRedirectUrl`.
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_authentication_weakened',
    title: 'Copilot Studio agent authentication weakened',
    severity: 'medium',
    description:
      "An agent's authentication moved to a mode that admits more identities, short of none: Microsoft authentication to manual authentication, or manual Entra ID to a generic OAuth 2 provider. Users from outside the tenant's directory may then reach the agent and its tools. Changes to none alert as agent_authentication_none; changes to a stronger mode do not alert.",
    response:
      "Ask the maker why; unless an external identity provider is required, set Settings > Security > Authentication back to Authenticate with Microsoft and republish; check the new OAuth connection's provider and scopes.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/configuration-end-user-authentication',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-attack': ['T1556: Modify Authentication Process'] },
    peers: [
      'Datadog "Microsoft 365 Copilot Studio agent authentication modified" (the same event; Vigil alerts only when the mode weakens, and leaves changes to none to agent_authentication_none)',
    ],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^BotUpdateOperation-BotAuthUpdate$/i.test(e.operation ?? '')) return [];
      const agent = agentOf(e);
      const c = agent ? propertyChange(agent.a, 'AuthenticationMode') : null;
      if (!agent || !c) return [];
      const before = rank(c.oldValue);
      const after = rank(c.newValue);
      if (before === null || after === null || after === 0 || after >= before) return [];
      return [
        {
          dedupeKey: e.id,
          title: `Agent ${agent.label} authentication weakened from ${c.oldValue} to ${c.newValue} by ${e.userId}`,
          eventIds: [e.id],
          detail: { ...agent.detail, from: c.oldValue, to: c.newValue },
        },
      ];
    }),
};
