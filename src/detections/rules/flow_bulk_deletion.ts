import { RECORD_TYPES } from '../../core/audit.ts';
import { userBursts } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** Flow deletions by one user within one hour from which an alert is raised. */
const FLOWS_DELETED_THRESHOLD = 5;
const WINDOW_MS = 3_600_000;
/** How far back a user's earlier bulk deletions make a new one usual. */
const HISTORY_MS = 14 * 24 * WINDOW_MS;

/**
 * One user deleted many flows within an hour, unusually for them: a run of `DeleteFlow` records (RecordType 30) of at
 * least 5 within an hour, when the same user had no such run in the 14 days before it (a user who routinely cleans
 * up in bulk alerts once, not every time).
 */
export const detection: Detection = {
  metadata: {
    id: 'flow_bulk_deletion',
    title: 'Unusual bulk deletion of Power Automate flows',
    severity: 'medium',
    description: `A single account deleted ${FLOWS_DELETED_THRESHOLD} or more Power Automate flows (DeleteFlow, RecordType 30) within one hour, and had not deleted that many within an hour in the previous 14 days: sabotage of business automation, or a departing maker removing their work.`,
    response:
      'Confirm the deletions with the account owner; restore deleted flows within 21 days (Restore-AdminFlow in Microsoft.PowerApps.Administration.PowerShell) and check the account for compromise.',
    references: [
      'https://learn.microsoft.com/power-platform/admin/activity-logging-auditing/activity-logs-power-automate',
      'https://learn.microsoft.com/power-automate/how-tos-restore-deleted-flow',
    ],
    frameworks: { 'mitre-attack': ['T1485: Data Destruction', 'T1489: Service Stop'] },
    peers: [
      'Sentinel "Power Automate - Unusual bulk deletion of flow resources" (the same hour threshold against the user\'s own 14 days; a plain prior-burst test instead of series decomposition, so it works from the first day of collection)',
    ],
    recordTypes: [RECORD_TYPES.MicrosoftFlow],
  },
  run: async (ctx) => {
    const bursts = await userBursts(ctx, ctx.events, ['DeleteFlow'], WINDOW_MS, () => FLOWS_DELETED_THRESHOLD);
    const hits = [];
    for (const b of bursts) {
      const before = await ctx.find({ operations: ['DeleteFlow'], from: new Date(Date.parse(b.from) - HISTORY_MS).toISOString(), to: b.from });
      const own = before.filter((e) => e.userId?.toLowerCase() === b.user && !b.ids.includes(e.id)).map((e) => Date.parse(e.creationTime));
      own.sort((x, y) => x - y);
      let usual = false;
      for (let i = 0, j = 0; j < own.length && !usual; j++) {
        while (own[j]! - own[i]! > WINDOW_MS) i++;
        usual = j - i + 1 >= FLOWS_DELETED_THRESHOLD;
      }
      if (usual) continue;
      hits.push({
        dedupeKey: `${b.user}|${b.key}`,
        title: `${b.user} deleted ${b.ids.length} flows within an hour`,
        eventIds: b.ids,
        detail: { user: b.user, count: b.ids.length, from: b.from, to: b.to },
      });
    }
    return hits;
  },
};
