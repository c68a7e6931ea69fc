import type { CheckFunction } from '../../types.ts';
import { evaluateTenantSetting } from '../shared.ts';

/** Fails while the Fabric tenant setting `PublishToWeb` is enabled (for the organisation or for groups). Not evaluated when the settings could not be read or lack it. */
export const check: CheckFunction = (ctx) =>
  evaluateTenantSetting(ctx, 'PublishToWeb', 'off', 'its users can publish reports to a public URL that anyone can open without signing in.');
