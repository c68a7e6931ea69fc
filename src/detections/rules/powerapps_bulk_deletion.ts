import { RECORD_TYPES } from '../../core/audit.ts';
import { userBursts } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** App deletions by one user within one hour from which an alert is raised. */
const APPS_DELETED_THRESHOLD = 5;
const WINDOW_MS = 3_600_000;
/**
 * Operations of an app deletion: the maker's `DeletePowerApp` and the administrator's `AdminDeleteApp` (Sentinel's
 * Power Apps rules list both as `powerplatform.analytics.activity.name` values of RecordType 256 PowerApp records).
 */
const DELETIONS = ['DeletePowerApp', 'AdminDeleteApp'];

/** One user deleted many Power Apps within an hour. */
export const detection: Detection = {
  metadata: {
    id: 'powerapps_bulk_deletion',
    title: 'One user deleted many Power Apps within an hour',
    severity: 'medium',
    description: `A single account deleted ${APPS_DELETED_THRESHOLD} or more Power Apps (DeletePowerApp or AdminDeleteApp, RecordType 256 or 45) within one hour: destruction by a compromised or departing maker or administrator.`,
    response:
      'Confirm the deletions with the account owner; restore deleted canvas apps within their recovery period (Power Platform admin center, or Get-AdminDeletedPowerAppsList / Get-AdminRecoverDeletedPowerApp) and check the account for compromise.',
    references: [
      'https://learn.microsoft.com/power-platform/admin/activity-logging-auditing/activity-logs-power-apps',
      'https://learn.microsoft.com/power-platform/admin/recover-deleted-canvas-apps',
    ],
    frameworks: { 'mitre-attack': ['T1485: Data Destruction'] },
    peers: [
      'Sentinel "Power Apps - Multiple apps deleted" (counts deletions per user in a sliding hour, across collection runs, with a lower default threshold; Sentinel also alerts on deletions across 10 environments)',
    ],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity, RECORD_TYPES.PowerAppsApp],
  },
  run: async (ctx) =>
    (await userBursts(ctx, ctx.events, DELETIONS, WINDOW_MS, () => APPS_DELETED_THRESHOLD)).map((b) => ({
      dedupeKey: `${b.user}|${b.key}`,
      title: `${b.user} deleted ${b.ids.length} Power Apps within an hour`,
      eventIds: b.ids,
      detail: { user: b.user, count: b.ids.length, from: b.from, to: b.to },
    })),
};
