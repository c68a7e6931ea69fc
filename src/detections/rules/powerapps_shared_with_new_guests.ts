import { RECORD_TYPES, type AuditEvent } from '../../core/audit.ts';
import { directoryChange, powerAppsActivity } from '../../sources/managementActivity/views.ts';
import type { Detection, DetectionHit } from '../types.ts';

/** Distinct newly created guests one user shares apps with, within {@link WINDOW_MS}, from which an alert is raised. */
const NEW_GUESTS_THRESHOLD = 3;
const WINDOW_MS = 3_600_000;
/** How recently a guest must have been created (invited or added) to count as new. */
const NEW_GUEST_MS = 14 * 24 * WINDOW_MS;
/** A Power Apps permission change (the activity Sentinel's rule reads); the recipient is in `targetuser.id`. */
const SHARES = ['PowerAppPermissionEdited'];
/** Entra activities that create a guest (Entra audit "Invite external user", "Add user"; trailing period as sent). */
const GUEST_CREATIONS = ['Invite external user.', 'Add user.', 'Invite external user', 'Add user'];

/** Whether a directory record created a guest: a `#EXT#` UPN, or `UserType` Guest among its changes. */
function createdGuest(e: AuditEvent): boolean {
  const d = directoryChange(e);
  const upn = d?.targetUpn ?? e.objectId ?? '';
  const type = d?.modified.get('TargetId.UserType') ?? d?.modified.get('UserType') ?? '';
  return /#EXT#/i.test(upn) || /guest/i.test(type);
}

/**
 * One user shared Power Apps with several newly created guests within an hour: `PowerAppPermissionEdited` records
 * (RecordType 256, `PowerApp`) whose `targetuser.id` is the object id of a guest that an Entra "Invite external user." /
 * "Add user." record (RecordType 8, `Target` GUID) created in the 14 days before the share. Both sides come from the
 * stored history, so a guest invited in an earlier collection run counts.
 */
export const detection: Detection = {
  metadata: {
    id: 'powerapps_shared_with_new_guests',
    title: 'Power Apps shared with several newly created guests',
    severity: 'medium',
    description: `One account shared Power Apps (PowerAppPermissionEdited, RecordType 256) with ${NEW_GUESTS_THRESHOLD} or more distinct guest accounts within an hour, each created (invited or added) in Entra ID in the 14 days before the share: guests invited to take data out through apps, or a phishing lure spread through shared apps.`,
    response:
      "Review the apps and the guests' domains; remove the guests' permissions (Power Platform admin center > app > Share) and block the invitations if the sharing was not approved; check the sharer's account for compromise.",
    references: [
      'https://learn.microsoft.com/power-platform/admin/activity-logging-auditing/activity-logs-power-apps',
      'https://learn.microsoft.com/entra/identity/monitoring-health/reference-audit-activities',
    ],
    frameworks: { 'mitre-attack': ['T1534: Internal Spearphishing', 'T1567: Exfiltration Over Web Service'] },
    peers: [
      'Sentinel "Power Apps - Bulk sharing of Power Apps to newly created guest users" (exceeds: enforces its threshold, counted per sharer over any apps in a sliding hour, and reads the guest creations from the same audit feed)',
    ],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) => {
    const fresh = ctx.events.filter((e) => e.userId && SHARES.includes(e.operation ?? '') && powerAppsActivity(e)?.targetPrincipal);
    if (fresh.length === 0) return [];
    const times = fresh.map((e) => Date.parse(e.creationTime));
    const from = Math.min(...times) - WINDOW_MS;
    const to = new Date(Math.max(...times) + WINDOW_MS).toISOString();
    const shares = (await ctx.findRecords({ operations: SHARES, from: new Date(from).toISOString(), to })).flatMap((e) => {
      const target = powerAppsActivity(e)?.targetPrincipal?.toLowerCase();
      return target && e.userId ? [{ e, user: e.userId.toLowerCase(), target, t: Date.parse(e.creationTime) }] : [];
    });
    // Guest object id → creation times.
    const created = new Map<string, number[]>();
    for (const e of await ctx.findRecords({ operations: GUEST_CREATIONS, from: new Date(from - NEW_GUEST_MS).toISOString(), to })) {
      const id = directoryChange(e)?.targetId;
      if (id && createdGuest(e)) created.set(id, [...(created.get(id) ?? []), Date.parse(e.creationTime)]);
    }
    const isNew = (s: { target: string; t: number }) => (created.get(s.target) ?? []).some((c) => c <= s.t && s.t - c <= NEW_GUEST_MS);
    const freshIds = new Set(fresh.map((e) => e.id));
    const byUser = new Map<string, typeof shares>();
    for (const s of shares.filter(isNew)) byUser.set(s.user, [...(byUser.get(s.user) ?? []), s]);
    const hits: DetectionHit[] = [];
    for (const [user, list] of byUser) {
      list.sort((a, b) => a.t - b.t || a.e.id.localeCompare(b.e.id));
      // Clusters (gaps over an hour cut them); the first hour of a cluster reaching the threshold alerts once.
      for (let start = 0; start < list.length;) {
        let end = start + 1;
        while (end < list.length && list[end]!.t - list[end - 1]!.t <= WINDOW_MS) end++;
        const cluster = list.slice(start, end);
        start = end;
        if (!cluster.some((s) => freshIds.has(s.e.id))) continue;
        for (let i = 0, j = 0; j < cluster.length; j++) {
          while (cluster[j]!.t - cluster[i]!.t > WINDOW_MS) i++;
          const run = cluster.slice(i, j + 1);
          const guests = [...new Set(run.map((s) => s.target))];
          if (guests.length < NEW_GUESTS_THRESHOLD) continue;
          const apps = [...new Set(run.map((s) => powerAppsActivity(s.e)?.appName ?? powerAppsActivity(s.e)?.appId ?? '?'))];
          hits.push({
            dedupeKey: `${user}|${cluster[0]!.e.id}`,
            title: `${user} shared ${apps.length} app(s) with ${guests.length} newly created guests within an hour`,
            eventIds: run.map((s) => s.e.id),
            detail: { user, guests, apps, from: run[0]!.e.creationTime, to: run.at(-1)!.e.creationTime },
          });
          break;
        }
      }
    }
    return hits;
  },
};
