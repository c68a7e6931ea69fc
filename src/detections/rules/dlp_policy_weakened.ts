import { dlpPolicyActivity, RECORD_TYPES } from '../../core/audit.ts';
import type { Detection } from '../types.ts';

/**
 * How restrictive a connector group is: `Blocked` > `Confidential` (business) > `General` (non-business).
 * Source: learn.microsoft.com/power-platform/admin/wp-data-loss-prevention (connector classification).
 */
const RANK: Record<string, number> = { blocked: 2, confidential: 1, business: 1, general: 0, nonbusiness: 0, 'non-business': 0 };

/** A Power Platform DLP policy was deleted or weakened. */
export const detection: Detection = {
  metadata: {
    id: 'dlp_policy_weakened',
    title: 'Power Platform DLP policy deleted or weakened',
    severity: 'high',
    description: 'A data loss prevention policy (PowerPlatformAdminDlp, RecordType 187) was deleted, or updated so that a connector moved to a less restrictive group (Blocked to business or non-business, business to non-business): data can now flow where the policy stopped it. Renames and other edits do not alert.',
    response: 'Confirm the change with the administrator; compare the policy with its previous version (Power Platform admin center > Policies > Data policies) and restore the blocked connector groups if the change was not approved.',
    references: ['https://learn.microsoft.com/power-platform/admin/dlp-activity-logging', 'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema'],
    frameworks: { 'mitre-attack': ['T1562: Impair Defenses'] },
    recordTypes: [RECORD_TYPES.PowerPlatformAdminDlp],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const p = dlpPolicyActivity(e);
      if (!p) return [];
      const deleted = /^DeleteDlpPolicy$/i.test(e.operation ?? '');
      // Weakened: a connector moved to a less restrictive group (Blocked → business/non-business, business → non-business).
      const loosened = p.connectorChanges.filter((c) => (RANK[c.previous?.toLowerCase() ?? ''] ?? -1) > (RANK[c.current?.toLowerCase() ?? ''] ?? -1) && c.current !== null);
      if (!deleted && loosened.length === 0) return [];
      const what = deleted ? 'deleted' : `weakened (${loosened.map((c) => `${c.name ?? c.id}: ${c.previous} → ${c.current}`).join(', ')})`;
      return [{ dedupeKey: e.id, title: `DLP policy ${p.policyId ?? ''} ${what} by ${e.userId}`.replace('  ', ' '), eventIds: [e.id], detail: { user: e.userId, policyId: p.policyId, policyType: p.policyType, operation: e.operation, connectorChanges: loosened } }];
    }),
};
