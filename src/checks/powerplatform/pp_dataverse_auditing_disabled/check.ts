import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails environments with Dataverse whose auditing is off (`organization.isauditenabled` false): no create, update,
 * delete or permission change on Dataverse data is recorded. The retention (`auditretentionperiodv2`, days, -1 =
 * forever) is reported in the detail. Not evaluated per {@link evaluateEnvironmentSettings}.
 * Source: Microsoft Learn "Manage Dataverse auditing" (power-platform/admin/manage-dataverse-auditing).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['auditEnabled'], (s) => {
    const detail = { auditEnabled: s.auditEnabled, retentionDays: s.auditRetentionDays };
    return s.auditEnabled
      ? {
          status: 'pass',
          reason: `Auditing is on${s.auditRetentionDays === -1 ? ', logs kept forever' : s.auditRetentionDays !== null ? `, logs kept ${s.auditRetentionDays} days` : ''}.`,
          detail,
        }
      : { status: 'fail', reason: 'Dataverse auditing is off: changes to data, records and permissions are not recorded.', detail };
  });
