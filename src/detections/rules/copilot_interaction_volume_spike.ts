import { RECORD_TYPES } from '../../core/audit.ts';
import { userBursts } from '../helpers.ts';
import type { Detection } from '../types.ts';

const HOUR_MS = 3_600_000;
/** Fewest interactions in one hour that can alert, whatever the user's history. */
const MIN_INTERACTIONS_PER_HOUR = 30;
/** How many times the user's usual hourly count an hour must reach. */
const SPIKE_FACTOR = 10;
/** The history the usual count is taken from: the 7 days before the new events. */
const BASELINE_MS = 7 * 24 * HOUR_MS;

/**
 * A user's Copilot interactions in one hour reached max(30, 10 × the user's mean hourly count over the stored history
 * of the previous 7 days). The mean is over the span the store holds (from the first stored interaction of anyone in
 * those 7 days; a truncated answer of `find`, at 10,000 rows, covers up to its last row), so a newly collected tenant
 * is not judged against hours it never collected. Users with no interaction in that history do not alert. At most one
 * alert per user and UTC day.
 */
export const detection: Detection = {
  metadata: {
    id: 'copilot_interaction_volume_spike',
    title: 'Unusual volume of Copilot interactions for a user',
    severity: 'medium',
    description: `A user had at least ${MIN_INTERACTIONS_PER_HOUR} Microsoft 365 Copilot interactions (RecordType 261) within one hour and at least ${SPIKE_FACTOR} times their own mean hourly count over the stored history of the previous 7 days: scripted use of Copilot to enumerate data, or a session token used by someone else. Users without stored history do not alert.`,
    response:
      "Review what the interactions accessed (AccessedResources, sensitivity labels) and where they came from (client IPs, sign-in logs); revoke the user's sessions if the activity is not theirs.",
    references: ['https://learn.microsoft.com/office/office-365-management-api/copilot-schema', 'https://attack.mitre.org/techniques/T1213/'],
    frameworks: {
      'owasp-llm-2025': ['LLM02: Sensitive Information Disclosure', 'LLM10: Unbounded Consumption'],
      'mitre-atlas': ['AML.T0057: LLM Data Leakage'],
      'mitre-attack': ['T1213: Data from Information Repositories'],
    },
    peers: [],
    recordTypes: [RECORD_TYPES.CopilotInteraction],
  },
  run: async (ctx) => {
    const fresh = ctx.events.filter((e) => e.userId && e.operation === 'CopilotInteraction');
    if (fresh.length === 0) return [];
    const start = Math.min(...fresh.map((e) => Date.parse(e.creationTime)));
    const to = new Date(start - HOUR_MS).toISOString();
    const history = await ctx.find({ operations: ['CopilotInteraction'], from: new Date(start - HOUR_MS - BASELINE_MS).toISOString(), to });
    const spanHours =
      history.length > 0
        ? Math.max(1, (Date.parse(history.length >= 10_000 ? history.at(-1)!.creationTime : to) - Date.parse(history[0]!.creationTime)) / HOUR_MS)
        : 0;
    const usual = new Map<string, number>();
    for (const e of history) {
      const user = e.userId?.toLowerCase();
      if (user) usual.set(user, (usual.get(user) ?? 0) + 1);
    }
    // Users without history can never reach the threshold (Infinity).
    const threshold = (user: string) => {
      const n = usual.get(user);
      return n ? Math.max(MIN_INTERACTIONS_PER_HOUR, Math.ceil((SPIKE_FACTOR * n) / spanHours)) : Infinity;
    };
    const bursts = await userBursts(ctx, fresh, ['CopilotInteraction'], HOUR_MS, threshold);
    return bursts.map((b) => ({
      // A user's interactions chain into long clusters: one alert per user and UTC day (of the burst's last event).
      dedupeKey: `${b.user}|${b.to.slice(0, 10)}`,
      title: `${b.user} had ${b.ids.length} Copilot interactions within an hour`,
      eventIds: b.ids,
      detail: {
        user: b.user,
        count: b.ids.length,
        from: b.from,
        to: b.to,
        usualPerHour: Number(((usual.get(b.user) ?? 0) / spanHours).toFixed(2)),
        threshold: threshold(b.user),
      },
    }));
  },
};
