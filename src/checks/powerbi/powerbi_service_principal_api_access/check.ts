import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `ServicePrincipalAccessPermissionAPIs` is enabled for the entire organisation; passes when disabled or enabled only for security groups. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'ServicePrincipalAccessPermissionAPIs',
    'offOrScoped',
    'any application registered in the tenant can call the Fabric and Power BI APIs with the access it is granted.',
  );
