import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `AllowServicePrincipalsCreateAndUseProfiles` is enabled for the entire organisation; passes when disabled or enabled only for security groups. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'AllowServicePrincipalsCreateAndUseProfiles',
    'offOrScoped',
    'any service principal can create service principal profiles and act through them.',
  );
