import { evaluateTenant } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';
import { tenantFlagVerdict } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.1.2: trial environment creation restricted to admins. Passes when `listTenantSettings`
 * returns `disableTrialEnvironmentCreationByNonAdminUsers: true`, fails when false, and is not evaluated when the
 * `tenantSettings` stream did not run or the body lacks the field.
 * Source: Microsoft Learn "Control who can create and manage environments" (power-platform/admin/control-environment-creation).
 */
export const check: CheckFunction = (ctx) =>
  evaluateTenant(ctx, ['tenantSettings'], () =>
    tenantFlagVerdict(
      ctx,
      'disableTrialEnvironmentCreationByNonAdminUsers',
      'Any user can create trial environments (disableTrialEnvironmentCreationByNonAdminUsers is false).',
    ),
  );
