import { evaluateTenant } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';
import { tenantIsolationOf } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.3.2 (manual there): cross-tenant connections are limited to an allowlist of named
 * tenants. Semantics chosen here:
 * - pass: tenant isolation is on and no allowlist entry is `*` (any tenant); an empty allowlist passes (ScubaGear:
 *   "the allowlist may be empty" when no cross-tenant collaboration is needed);
 * - fail: isolation is on but an entry allows `*` in some direction (an allowlist that lists everyone is none), or
 *   isolation is off or absent (then every tenant is allowed in both directions — the rules are not enforced);
 * - not evaluated: the `tenantSettings` stream did not run or held no isolation object.
 * Source: Microsoft Learn "Cross-tenant inbound and outbound restrictions" (power-platform/admin/cross-tenant-restrictions).
 */
export const check: CheckFunction = (ctx) =>
  evaluateTenant(ctx, ['tenantSettings'], () => {
    const iso = tenantIsolationOf(ctx);
    if (!iso) return { status: 'not_evaluated', reason: 'The tenant isolation policy was not in the collected inventory.' };
    if (!iso.enabled)
      return {
        status: 'fail',
        reason: 'Tenant isolation is off, so no allowlist is enforced: every tenant is allowed inbound and outbound.',
        detail: { exists: iso.exists },
      };
    const any = iso.allowedTenants.filter((t) => t.tenantId === '*' && (t.inbound || t.outbound));
    if (any.length > 0) {
      const directions = [any.some((t) => t.inbound) ? 'inbound' : null, any.some((t) => t.outbound) ? 'outbound' : null].filter(Boolean).join(' and ');
      return { status: 'fail', reason: `The allowlist allows any tenant (*) ${directions}.`, detail: { directions } };
    }
    return {
      status: 'pass',
      reason: `${iso.allowedTenants.length} named tenant(s) allowed.`,
      detail: { allowedTenants: iso.allowedTenants.map((t) => t.tenantId) },
    };
  });
