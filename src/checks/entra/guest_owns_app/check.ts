import { evaluateEstate, guestVerdict } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per Power App: fails an app whose owner (`properties.owner.id`) is a guest in the directory (`userType` Guest, or
 * an `#EXT#` user principal name); passes other owners (an owner missing from the directory is left to
 * pp_app_owner_disabled_or_missing). Not evaluated for an owner without an object id, unreadable environments, and
 * the tenant when the `powerApps` or `users` stream did not run.
 * Source: Microsoft Learn "Properties of a Microsoft Entra B2B collaboration user" (entra/external-id/user-properties).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'powerApps', 'app', (app) => guestVerdict(ctx, app.attrs.owner.id, 'owner'), { requires: ['users'] });
