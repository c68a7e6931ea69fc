import { RECORD_TYPES } from '../../core/audit.ts';
import { dlpPolicyActivity, type DlpPolicyActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * How restrictive a connector group is: `Blocked` > `Confidential` (business) > `General` (non-business). Used for a
 * connector's move and for the policy's default group (where connectors the policy does not list go, new ones
 * included). Source: learn.microsoft.com/power-platform/admin/wp-data-loss-prevention (connector classification).
 */
const RANK: Record<string, number> = { blocked: 2, confidential: 1, business: 1, general: 0, nonbusiness: 0, 'non-business': 0 };

/**
 * How wide a policy's scope is (`DlpPolicyType`, the `policyType` values of the audit record): `AllEnvironments` >
 * `ExceptEnvironments` (every environment but the listed ones, new environments included) > `OnlyEnvironments` /
 * `SingleEnvironment` (only the listed ones). Source: learn.microsoft.com/power-platform/admin/dlp-activity-logging
 * (PolicyType: AllEnvironments, SingleEnvironment, OnlyEnvironments, ExceptEnvironments).
 */
const SCOPE: Record<string, number> = { allenvironments: 2, exceptenvironments: 1, onlyenvironments: 0, singleenvironment: 0 };

/** Whether `to` ranks below `from` in `ranks` (both known). */
const lower = (ranks: Record<string, number>, from: string | null, to: string | null): boolean => {
  const a = ranks[from?.toLowerCase() ?? ''];
  const b = ranks[to?.toLowerCase() ?? ''];
  return a !== undefined && b !== undefined && b < a;
};

/** A property change of the update's `changeSet.changedProperties`, by name (any case), or undefined. */
const changed = (p: DlpPolicyActivity, name: string) => p.changedProperties.find((c) => c.property.toLowerCase() === name.toLowerCase());

/**
 * A Power Platform DLP policy was deleted or weakened. An update (`UpdateDlpPolicy`, RecordType 187) weakens the
 * policy when its `AdditionalInfo.changeSet` shows any of: a connector moved to a less restrictive group
 * (`connectorChanges`), the default group moved to a less restrictive one (`changedProperties` name
 * `DefaultConnectorClassification`, e.g. Blocked → General), or the scope narrowed (`DlpPolicyType`, e.g.
 * AllEnvironments → OnlyEnvironments / ExceptEnvironments, or ExceptEnvironments → OnlyEnvironments). Record shape:
 * learn.microsoft.com/power-platform/admin/dlp-activity-logging ("Additional Info" and its Update example).
 */
export const detection: Detection = {
  metadata: {
    id: 'dlp_policy_weakened',
    title: 'Power Platform DLP policy deleted or weakened',
    severity: 'high',
    description:
      'A data loss prevention policy (PowerPlatformAdminDlp, RecordType 187) was deleted, or updated so that it stops less: a connector moved to a less restrictive group (Blocked to business or non-business, business to non-business), the default group for unlisted and new connectors moved to a less restrictive one (e.g. Blocked to General), or the scope narrowed (all environments to some, or "all except" to "only these"). Renames and tightening edits do not alert.',
    response:
      'Confirm the change with the administrator; compare the policy with its previous version (Power Platform admin center > Policies > Data policies) and restore the connector groups, the default group and the scope if the change was not approved.',
    references: [
      'https://learn.microsoft.com/power-platform/admin/dlp-activity-logging',
      'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema',
    ],
    frameworks: { 'mitre-attack': ['T1562: Impair Defenses'] },
    peers: [
      'Sentinel "Power Platform - DLP policy updated or removed" (deletions alike; an update alerts only when it weakens the policy, and names the connector, default group or scope change)',
    ],
    recordTypes: [RECORD_TYPES.PowerPlatformAdminDlp],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const p = dlpPolicyActivity(e);
      if (!p) return [];
      const deleted = /^DeleteDlpPolicy$/i.test(e.operation ?? '');
      const loosened = p.connectorChanges.filter(
        (c) => (RANK[c.previous?.toLowerCase() ?? ''] ?? -1) > (RANK[c.current?.toLowerCase() ?? ''] ?? -1) && c.current !== null,
      );
      const defaultGroup = changed(p, 'DefaultConnectorClassification');
      const defaultLoosened = defaultGroup && lower(RANK, defaultGroup.oldValue, defaultGroup.newValue) ? defaultGroup : null;
      const scope = changed(p, 'DlpPolicyType');
      const scopeNarrowed = scope && lower(SCOPE, scope.oldValue, scope.newValue) ? scope : null;
      if (!deleted && loosened.length === 0 && !defaultLoosened && !scopeNarrowed) return [];
      const parts = [
        ...(defaultLoosened ? [`default group ${defaultLoosened.oldValue} → ${defaultLoosened.newValue}`] : []),
        ...(scopeNarrowed ? [`scope ${scopeNarrowed.oldValue} → ${scopeNarrowed.newValue}`] : []),
        ...loosened.map((c) => `${c.name ?? c.id}: ${c.previous} → ${c.current}`),
      ];
      const what = deleted ? 'deleted' : `weakened (${parts.join(', ')})`;
      return [
        {
          dedupeKey: e.id,
          title: `DLP policy ${p.policyId ?? ''} ${what} by ${e.userId}`.replace('  ', ' '),
          eventIds: [e.id],
          detail: {
            user: e.userId,
            policyId: p.policyId,
            policyType: p.policyType,
            operation: e.operation,
            connectorChanges: loosened,
            defaultConnectorClassification: defaultLoosened ? { previous: defaultLoosened.oldValue, current: defaultLoosened.newValue } : null,
            scope: scopeNarrowed ? { previous: scopeNarrowed.oldValue, current: scopeNarrowed.newValue } : null,
          },
        },
      ];
    }),
};
