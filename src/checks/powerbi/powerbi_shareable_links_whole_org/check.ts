import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `ShareLinkToEntireOrg` is enabled for the entire organisation; passes when disabled or enabled only for security groups. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'ShareLinkToEntireOrg',
    'offOrScoped',
    'any user can create a "People in your organization" link that opens the item to every employee.',
  );
