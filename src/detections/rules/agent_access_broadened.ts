import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf, propertyChange } from '../helpers.ts';
import type { Detection } from '../types.ts';

/**
 * Who may chat with an agent, as records name the Dataverse `accesscontrolpolicy` options, narrowest first:
 * `Copilot readers` (formerly `Chatbot readers`: the users it is shared with), `Group membership` (up to 20
 * security groups), `Any` (everyone in the tenant), `Any (multitenant)` (accounts of other tenants too).
 */
const RANK: [RegExp, number][] = [
  [/^(copilot|chatbot|agent) readers$/i, 0],
  [/^group membership$/i, 1],
  [/^any$/i, 2],
  [/^any \(multi-?tenant\)$/i, 3],
];
const rank = (v: string | null) => RANK.find(([re]) => re.test((v ?? '').trim()))?.[1] ?? null;

/**
 * A Copilot Studio agent was opened to the whole tenant or to other tenants: a sharing record
 * (`BotUpdateOperation-BotShare`) whose `AccessControlPolicy` change ends at `Any` or `Any (multitenant)` from a
 * narrower policy (or from none stated). Sources: Microsoft Learn "Audit Copilot Studio activities in Microsoft
 * Purview" (BotShare), the `bot` table's `accesscontrolpolicy` options; Datadog's rule on the same event and value.
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_access_broadened',
    title: 'Copilot Studio agent opened to everyone',
    severity: 'high',
    description:
      "An agent's access control policy was widened to everyone in the organisation (Any) or to accounts of any tenant (Any (multitenant)): every one of them can now chat with the agent and use its knowledge and tools, under the maker's connections where those are shared. Sharing with named users or groups, and narrowing, do not alert.",
    response:
      'Confirm the audience with the owner; unless the agent is meant for everyone, set Settings > Security > Access control back to specific users or security groups and republish; review what its knowledge and tools expose.',
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-share-bots',
      'https://learn.microsoft.com/power-apps/developer/data-platform/reference/entities/bot',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency', 'LLM02: Sensitive Information Disclosure'], 'mitre-attack': ['T1098: Account Manipulation'] },
    peers: ['Datadog "Microsoft 365 Copilot Studio agent access control policy set to open" (same event and value; Vigil also covers Any (multitenant))'],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^BotUpdateOperation-BotShare$/i.test(e.operation ?? '')) return [];
      const agent = agentOf(e);
      const c = agent ? propertyChange(agent.a, 'AccessControlPolicy') : null;
      if (!agent || !c) return [];
      const after = rank(c.newValue);
      const before = rank(c.oldValue);
      if (after === null || after < 2 || (before !== null && before >= after)) return [];
      return [
        {
          dedupeKey: e.id,
          title: `Agent ${agent.label} opened to ${after === 3 ? 'any tenant' : 'everyone in the organisation'} by ${e.userId}`,
          eventIds: [e.id],
          detail: { ...agent.detail, from: c.oldValue, to: c.newValue },
        },
      ];
    }),
};
