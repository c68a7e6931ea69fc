import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `BlockResourceKeyAuthentication` is disabled. Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(
    ctx,
    'BlockResourceKeyAuthentication',
    'on',
    'anyone holding a streaming dataset push URL (it carries the key) can write data into it without a Microsoft Entra token.',
  );
