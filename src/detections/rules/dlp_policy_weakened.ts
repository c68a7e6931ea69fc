import { RECORD_TYPES } from '../../core/audit.ts';
import type { Detection } from '../types.ts';

/** A Power Platform DLP policy was deleted or changed. */
export const detection: Detection = {
  metadata: {
    id: 'dlp_policy_weakened',
    title: 'Power Platform DLP policy deleted or changed',
    severity: 'high',
    description: 'A data loss prevention policy (PowerPlatformAdminDlp, RecordType 187) was deleted or updated: connectors it blocked may now move data freely.',
    response: 'Confirm the change with the administrator; compare the policy with its previous version (Power Platform admin center > Policies > Data policies) and restore the blocked connector groups if the change was not approved.',
    references: ['https://learn.microsoft.com/power-platform/admin/dlp-activity-logging', 'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema'],
    frameworks: { 'mitre-attack': ['T1562: Impair Defenses'] },
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (e.recordType !== RECORD_TYPES.PowerPlatformAdminDlp && !/dlp/i.test(e.operation ?? '')) return [];
      const op = e.operation ?? '';
      const kind = /delete/i.test(op) ? 'deleted' : /(update|modif|edit|change)/i.test(op) ? 'changed' : null;
      return kind ? [{ dedupeKey: e.id, title: `DLP policy ${e.objectId ?? ''} ${kind} by ${e.userId}`.replace('  ', ' '), eventIds: [e.id], detail: { user: e.userId, policy: e.objectId, operation: op } }] : [];
    }),
};
