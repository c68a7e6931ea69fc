import { RECORD_TYPES } from '../../core/audit.ts';
import type { Detection } from '../types.ts';

/** Creations by one user within one hour from which an alert is raised. */
const MASS_CREATION_THRESHOLD = 10;
const WINDOW_MS = 3_600_000;
/** Operations that create an agent (Copilot Studio) or a flow (Power Automate). */
const CREATIONS = ['BotCreate', 'CreateFlow'];

/** One user created many agents or flows in a short window. */
export const detection: Detection = {
  metadata: {
    id: 'mass_agent_or_flow_creation',
    title: 'One user created many agents or flows within an hour',
    severity: 'medium',
    description: `A single account created ${MASS_CREATION_THRESHOLD} or more Copilot Studio agents or Power Automate flows within one hour: scripted creation, a compromised maker account, or shadow automation.`,
    response: 'Review what was created (owners, connections, HTTP targets) and whether the account is compromised; disable what is not needed.',
    references: [
      'https://learn.microsoft.com/power-platform/admin/logging-power-automate',
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-attack': ['T1059: Command and Scripting Interpreter'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity, RECORD_TYPES.MicrosoftFlow],
  },
  run: async (ctx) => {
    const creations = ctx.events.filter((e) => e.userId && CREATIONS.includes(e.operation ?? ''));
    if (creations.length === 0) return [];
    // Bursts may straddle runs: count the stored creations around the new ones, not only this page.
    const times = creations.map((e) => Date.parse(e.creationTime));
    const stored = await ctx.find({
      operations: CREATIONS,
      from: new Date(Math.min(...times) - WINDOW_MS).toISOString(),
      to: new Date(Math.max(...times) + WINDOW_MS).toISOString(),
    });
    const users = new Set(creations.map((e) => e.userId!.toLowerCase()));
    const byUser = new Map<string, { t: number; id: string }[]>();
    for (const e of stored) {
      const user = e.userId?.toLowerCase();
      if (!user || !users.has(user)) continue;
      const list = byUser.get(user) ?? [];
      byUser.set(user, list);
      list.push({ t: Date.parse(e.creationTime), id: e.id });
    }
    const hits = [];
    for (const [user, list] of byUser) {
      list.sort((a, b) => a.t - b.t);
      for (let i = 0, j = 0; j < list.length; j++) {
        while (list[j]!.t - list[i]!.t > WINDOW_MS) i++;
        if (j - i + 1 >= MASS_CREATION_THRESHOLD) {
          const burst = list.slice(i, j + 1);
          hits.push({
            dedupeKey: `${user}|${new Date(burst[0]!.t).toISOString().slice(0, 13)}`,
            title: `${user} created ${burst.length} agents or flows within an hour`,
            eventIds: burst.map((b) => b.id),
            detail: { user, count: burst.length, from: new Date(burst[0]!.t).toISOString(), to: new Date(burst.at(-1)!.t).toISOString() },
          });
          break;
        }
      }
    }
    return hits;
  },
};
