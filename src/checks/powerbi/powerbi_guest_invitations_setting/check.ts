import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `ExternalSharingV2` is enabled for the entire organisation; passes when disabled or enabled only for security groups. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'ExternalSharingV2',
    'offOrScoped',
    'any user can add an external person to the directory as a guest by sharing a Power BI item with them.',
  );
