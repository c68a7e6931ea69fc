import { evaluateTenant } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';
import { tenantFlagVerdict } from '../shared.ts';

/**
 * ScubaGear MS.POWERPLATFORM.6.1: makers cannot share canvas apps with Everyone. Passes when `listTenantSettings`
 * returns `powerPlatform.powerApps.disableShareWithEveryone: true`, fails when false, and is not evaluated when the
 * `tenantSettings` stream did not run or the body lacks the field.
 * Source: Microsoft Learn "Secure the default environment — limit sharing with everyone"
 * (power-platform/guidance/adoption/secure-default-environment).
 */
export const check: CheckFunction = (ctx) =>
  evaluateTenant(ctx, ['tenantSettings'], () =>
    tenantFlagVerdict(ctx, 'disableShareWithEveryone', 'Makers can share canvas apps with everyone in the organisation (disableShareWithEveryone is false).'),
  );
