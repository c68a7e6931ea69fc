import { RECORD_TYPES } from '../../core/audit.ts';
import type { Detection, DetectionHit } from '../types.ts';

/** Enable and disable by one user within this span alert. */
const TOGGLE_WINDOW_MS = 5 * 60_000;

/**
 * Operation names of the enable (313) and disable (314) records as they may appear in `Operation`: the Purview
 * activity names (`EnablePlugin`, `DisableCopilotPlugin`) and the record type names. UNCONFIRMED which one Microsoft
 * sends for Microsoft 365 Copilot: the stored history is searched by operation, so all are listed.
 */
const ENABLE_OPS = ['EnablePlugin', 'EnableCopilotPlugin'];
const DISABLE_OPS = ['DisablePlugin', 'DisableCopilotPlugin'];

/** One user enabled and disabled Copilot plugins within five minutes. */
export const detection: Detection = {
  metadata: {
    id: 'copilot_plugin_toggled',
    title: 'Copilot plugin enabled and disabled within minutes',
    severity: 'medium',
    description:
      'One account both enabled (RecordType 313) and disabled (RecordType 314) Copilot plugins within five minutes: probing which controls apply, or switching a plugin on just long enough to use it.',
    response:
      "Review which plugins the account toggled and what Copilot did meanwhile (the user's interactions in that span); confirm the changes with the account's owner.",
    references: [
      'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema',
      'https://learn.microsoft.com/copilot/security/manage-plugins',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-attack': ['T1562: Impair Defenses', 'T1087: Account Discovery'] },
    peers: [
      'Sentinel "Copilot - Plugin Tampering (Enable and Disable Within 5 Minutes)" (exceeds: pairs the two records by user across collection runs and whatever the client address)',
    ],
    recordTypes: [RECORD_TYPES.EnableCopilotPlugin, RECORD_TYPES.DisableCopilotPlugin],
  },
  run: async (ctx) => {
    const fresh = ctx.events.filter((e) => e.userId);
    if (fresh.length === 0) return [];
    const times = fresh.map((e) => Date.parse(e.creationTime));
    const stored = await ctx.find({
      operations: [...ENABLE_OPS, ...DISABLE_OPS],
      from: new Date(Math.min(...times) - TOGGLE_WINDOW_MS).toISOString(),
      to: new Date(Math.max(...times) + TOGGLE_WINDOW_MS).toISOString(),
    });
    const isEnable = (e: { recordType: number | null; operation: string | null }) =>
      e.recordType === RECORD_TYPES.EnableCopilotPlugin || ENABLE_OPS.includes(e.operation ?? '');
    const hits: DetectionHit[] = [];
    const seen = new Set<string>();
    for (const e of fresh) {
      const user = e.userId!.toLowerCase();
      const t = Date.parse(e.creationTime);
      const other = stored.find(
        (s) => s.id !== e.id && s.userId?.toLowerCase() === user && isEnable(s) !== isEnable(e) && Math.abs(Date.parse(s.creationTime) - t) <= TOGGLE_WINDOW_MS,
      );
      if (!other) continue;
      const [first, second] = other.creationTime <= e.creationTime ? [other, e] : [e, other];
      const dedupeKey = `${user}|${first.id}`;
      if (seen.has(dedupeKey)) continue;
      seen.add(dedupeKey);
      hits.push({
        dedupeKey,
        title: `${e.userId} ${isEnable(first) ? 'enabled then disabled' : 'disabled then enabled'} Copilot plugins within ${Math.max(1, Math.round(Math.abs(Date.parse(second.creationTime) - Date.parse(first.creationTime)) / 60_000))} minute(s)`,
        eventIds: [first.id, second.id],
        detail: {
          user: e.userId,
          first: { operation: first.operation, time: first.creationTime },
          second: { operation: second.operation, time: second.creationTime },
        },
      });
    }
    return hits;
  },
};
