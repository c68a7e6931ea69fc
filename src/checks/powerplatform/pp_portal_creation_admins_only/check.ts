import { evaluateTenant } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';
import { tenantFlagVerdict } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.5.1: Power Pages site creation restricted to admins. Passes when `listTenantSettings`
 * returns `disablePortalsCreationByNonAdminUsers: true`, fails when false, and is not evaluated when the
 * `tenantSettings` stream did not run or the body lacks the field.
 * Source: Microsoft Learn "Control Power Pages site creation" (power-pages/admin/control-portal-creation).
 */
export const check: CheckFunction = (ctx) =>
  evaluateTenant(ctx, ['tenantSettings'], () =>
    tenantFlagVerdict(ctx, 'disablePortalsCreationByNonAdminUsers', 'Any user can create Power Pages sites (disablePortalsCreationByNonAdminUsers is false).'),
  );
