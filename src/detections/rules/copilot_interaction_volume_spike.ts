import { RECORD_TYPES } from '../../core/audit.ts';
import { userBursts } from '../helpers.ts';
import type { Detection } from '../types.ts';

const HOUR_MS = 3_600_000;
/** Fewest interactions in one hour that can alert, whatever the user's history. */
const MIN_INTERACTIONS_PER_HOUR = 30;
/** How many times the user's usual hourly count an hour must reach. */
const SPIKE_FACTOR = 10;
/** The history the usual count is taken from: the 7 days before the hour preceding the hour judged. */
const BASELINE_MS = 7 * 24 * HOUR_MS;

/** How far before the first new event `userBursts` may find a burst's first event (its window and read-back). */
const READ_BACK_MS = 25 * HOUR_MS;

/** Index of the first element of ascending `xs` that is ≥ `x`. */
function lowerBound(xs: number[], x: number): number {
  let lo = 0;
  for (let hi = xs.length; lo < hi;) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A user's Copilot interactions in one hour reached max(30, 10 × the user's mean hourly count over the stored history
 * of the 7 days before the hour preceding it). The mean is over the span the store holds (from the first stored
 * interaction of anyone in those 7 days; a truncated answer of `find`, at 10,000 rows, covers up to its last row), so a
 * newly collected tenant is not judged against hours it never collected. Each hour is judged against its own history,
 * whichever evaluation reads it: a burst is never part of its own baseline, and a user with no interaction before it
 * does not alert. At most one alert per user and UTC day.
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
    // Only users with an hour at the floor can alert: the history is read when there is one.
    if ((await userBursts(ctx, fresh, ['CopilotInteraction'], HOUR_MS, () => MIN_INTERACTIONS_PER_HOUR)).length === 0) return [];
    const times = fresh.map((e) => Date.parse(e.creationTime));
    // The history of every hour a burst can start in: from 7 days before the earliest such hour to the latest.
    const earliest = Math.min(...times) - READ_BACK_MS - HOUR_MS - BASELINE_MS;
    const history = await ctx.find({
      operations: ['CopilotInteraction'],
      from: new Date(earliest).toISOString(),
      to: new Date(Math.max(...times) - HOUR_MS).toISOString(),
    });
    const all = history.map((e) => Date.parse(e.creationTime));
    // A truncated answer holds the history up to its last row only.
    const through = history.length >= 10_000 ? all.at(-1)! : Infinity;
    const byUser = new Map<string, number[]>();
    for (let i = 0; i < history.length; i++) {
      const user = history[i]!.userId?.toLowerCase();
      if (!user) continue;
      const mine = byUser.get(user) ?? [];
      byUser.set(user, mine);
      mine.push(all[i]!);
    }
    /** The user's interactions in the history of an hour starting at `at` (epoch ms), and its span in hours. */
    const usual = (user: string, at: number): { n: number; hours: number } => {
      const to = Math.min(at - HOUR_MS, through);
      const from = at - HOUR_MS - BASELINE_MS;
      const mine = byUser.get(user) ?? [];
      const first = all[lowerBound(all, from)];
      const n = lowerBound(mine, to + 1) - lowerBound(mine, from);
      return { n, hours: first === undefined || first > to ? 1 : Math.max(1, (to - first) / HOUR_MS) };
    };
    // Users without history can never reach the threshold (Infinity).
    const threshold = (user: string, at: number) => {
      const { n, hours } = usual(user, at);
      return n === 0 ? Infinity : Math.max(MIN_INTERACTIONS_PER_HOUR, Math.ceil((SPIKE_FACTOR * n) / hours));
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
        usualPerHour: Number(((u) => u.n / u.hours)(usual(b.user, Date.parse(b.from))).toFixed(2)),
        threshold: threshold(b.user, Date.parse(b.from)),
      },
    }));
  },
};
