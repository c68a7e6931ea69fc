import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `AllowGuestUserToAccessSharedContent` is enabled for the entire organisation; passes when disabled or enabled only for security groups. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'AllowGuestUserToAccessSharedContent',
    'offOrScoped',
    'every Microsoft Entra B2B guest of the tenant can open the Fabric and Power BI content shared with them.',
  );
