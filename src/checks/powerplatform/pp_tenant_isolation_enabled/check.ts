import { evaluateTenant } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';
import { tenantIsolationOf } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.3.1: Power Platform tenant isolation is on. Passes when the tenant isolation policy
 * exists and is not disabled (`isDisabled: false`); fails when no policy exists (the API answered 404) or it is
 * disabled; not evaluated when the `tenantSettings` stream did not run or held no isolation object.
 * Source: Microsoft Learn "Cross-tenant inbound and outbound restrictions" (power-platform/admin/cross-tenant-restrictions).
 */
export const check: CheckFunction = (ctx) =>
  evaluateTenant(ctx, ['tenantSettings'], () => {
    const iso = tenantIsolationOf(ctx);
    if (!iso) return { status: 'not_evaluated', reason: 'The tenant isolation policy was not in the collected inventory.' };
    if (iso.enabled) return { status: 'pass', reason: 'Tenant isolation is on.', detail: { allowedTenants: iso.allowedTenants.length } };
    return {
      status: 'fail',
      reason: iso.exists
        ? 'Tenant isolation is turned off: connections to and from any tenant are allowed.'
        : 'No tenant isolation policy exists: connections to and from any tenant are allowed.',
      detail: { exists: iso.exists },
    };
  });
