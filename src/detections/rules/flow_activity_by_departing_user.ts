import { RECORD_TYPES, type AuditEvent } from '../../core/audit.ts';
import type { Detection, DetectionHit } from '../types.ts';

const DAY_MS = 86_400_000;
/** Flow activity this close (before or after) to the account's disabling or deletion alerts. */
const WINDOW_MS = 7 * DAY_MS;
/** Flow lifecycle operations (Microsoft Learn "View Power Automate activity logs": Created, Edited, Deleted flow). */
const FLOW_OPS = ['CreateFlow', 'EditFlow', 'DeleteFlow'];
/**
 * Entra directory operations that end an account (Entra audit activities "Disable account", "Delete user"; the
 * Management Activity API names them with a trailing period).
 */
const DEPARTURE_OPS = ['Disable account.', 'Delete user.', 'Disable account', 'Delete user'];

/**
 * The UPN an Entra user record is about, lower case: `ObjectId` holds it; for a deleted user Entra prefixes it with
 * the user's object id without dashes (a recorded "Delete user." in test/fixtures/real/audit/
 * elastic-beats-azuread-users.ndjson: `6d4ca534c337474d8c766c715b31bc52newuser@…`), which is removed.
 */
function departedUpn(e: Pick<AuditEvent, 'objectId'>): string | null {
  const o = e.objectId?.toLowerCase() ?? '';
  return o.includes('@') ? o.replace(/^[0-9a-f]{32}(?=[^@]+@)/, '') : null;
}

/**
 * A user created, edited or deleted a flow within 7 days of their Entra account being disabled or deleted — the
 * departing-employee signal Sentinel takes from an HR watchlist, taken here from the directory's own audit records.
 * Evaluated from both sides, so the order in which the records arrive does not matter: one alert per departure
 * record, linking the flow activity found around it.
 */
export const detection: Detection = {
  metadata: {
    id: 'flow_activity_by_departing_user',
    title: 'Flow activity by a user whose account was disabled or deleted',
    severity: 'high',
    description:
      'A user created, edited or deleted Power Automate flows (RecordType 30) within 7 days before or after their Entra account was disabled or deleted (RecordType 8 "Disable account." / "Delete user."): a departing employee setting up automated exfiltration or destroying automations, or an account still used after it was meant to be shut.',
    response:
      "Review the flows the user touched (connections, triggers, where they send data); reassign or turn off the user's flows (Power Automate admin, or Set-AdminFlowOwnerRole / Disable-AdminFlow) and check whether activity continued after the account was disabled.",
    references: [
      'https://learn.microsoft.com/power-platform/admin/activity-logging-auditing/activity-logs-power-automate',
      'https://learn.microsoft.com/entra/identity/monitoring-health/reference-audit-activities',
    ],
    frameworks: { 'mitre-attack': ['T1567: Exfiltration Over Web Service', 'T1485: Data Destruction'] },
    peers: [
      'Sentinel "Power Automate - Departing employee flow activity" (exceeds: needs no watchlist — departures come from Entra audit records — and also covers deletions and activity after the account was disabled)',
    ],
    recordTypes: [RECORD_TYPES.MicrosoftFlow, RECORD_TYPES.AzureActiveDirectory],
  },
  run: async (ctx) => {
    const flows = ctx.events.filter((e) => e.recordType === RECORD_TYPES.MicrosoftFlow && e.userId && FLOW_OPS.includes(e.operation ?? ''));
    const departures = ctx.events.filter(
      (e) => e.recordType === RECORD_TYPES.AzureActiveDirectory && DEPARTURE_OPS.includes(e.operation ?? '') && departedUpn(e),
    );
    if (flows.length === 0 && departures.length === 0) return [];
    // Each side reads the other within 7 days of its own records only (flow activity is plentiful; departures are few).
    const around = (list: AuditEvent[]) => {
      const times = list.map((e) => Date.parse(e.creationTime));
      return { from: new Date(Math.min(...times) - WINDOW_MS).toISOString(), to: new Date(Math.max(...times) + WINDOW_MS).toISOString() };
    };
    const storedDepartures = flows.length > 0 ? await ctx.find({ operations: DEPARTURE_OPS, ...around(flows) }) : [];
    const storedFlows = departures.length > 0 ? await ctx.find({ operations: FLOW_OPS, ...around(departures) }) : [];
    const near = (a: { creationTime: string }, b: { creationTime: string }) => Math.abs(Date.parse(a.creationTime) - Date.parse(b.creationTime)) <= WINDOW_MS;
    // departure record id → the departure and the flow activity linked to it.
    const found = new Map<
      string,
      {
        d: { id: string; creationTime: string; operation: string | null; objectId: string | null };
        activity: Map<string, { id: string; operation: string | null; creationTime: string }>;
      }
    >();
    const link = (
      d: { id: string; creationTime: string; operation: string | null; objectId: string | null },
      f: { id: string; operation: string | null; creationTime: string },
    ) => {
      const entry = found.get(d.id) ?? { d, activity: new Map() };
      found.set(d.id, entry);
      entry.activity.set(f.id, f);
    };
    for (const f of flows) for (const d of storedDepartures) if (departedUpn(d) === f.userId!.toLowerCase() && near(d, f)) link(d, f);
    for (const d of departures) for (const f of storedFlows) if (f.userId?.toLowerCase() === departedUpn(d) && near(d, f)) link(d, f);
    const hits: DetectionHit[] = [];
    for (const { d, activity } of found.values()) {
      const list = [...activity.values()].sort((a, b) => a.creationTime.localeCompare(b.creationTime));
      const user = departedUpn(d)!;
      const after = list.filter((f) => f.creationTime > d.creationTime).length;
      hits.push({
        dedupeKey: `${user}|${d.id}`,
        title: `${user} ${/delete/i.test(d.operation ?? '') ? 'deleted' : 'disabled'} in Entra: ${list.length} flow change(s) within 7 days${after > 0 ? `, ${after} after it` : ''}`,
        eventIds: [d.id, ...list.map((f) => f.id)],
        detail: {
          user,
          departure: { operation: d.operation, time: d.creationTime },
          flowActivity: list.map((f) => ({ operation: f.operation, time: f.creationTime })),
        },
      });
    }
    return hits;
  },
};
