import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails environments with Dataverse that do not log user access (`organization.isuseraccessauditenabled` false), or
 * whose auditing as a whole is off (`isauditenabled` false: access logging then records nothing). Not evaluated per
 * {@link evaluateEnvironmentSettings}. Source: Microsoft Learn "Manage Dataverse auditing" ("Log access").
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['auditEnabled', 'userAccessAuditEnabled'], (s) => {
    const detail = { auditEnabled: s.auditEnabled, userAccessAuditEnabled: s.userAccessAuditEnabled };
    if (!s.auditEnabled) return { status: 'fail', reason: 'Auditing is off, so user access to the environment is not logged.', detail };
    return s.userAccessAuditEnabled
      ? { status: 'pass', reason: 'User access logging is on.', detail }
      : { status: 'fail', reason: "User access logging ('Log access') is off: who signed in to the environment, and when, is not recorded.", detail };
  });
