import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `RScriptVisual` is enabled (for the organisation or for groups). Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(ctx, 'RScriptVisual', 'off', 'reports can run R and Python scripts whose code nobody reviewed.');
