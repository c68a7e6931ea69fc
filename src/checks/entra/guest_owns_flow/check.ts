import { evaluateEstate, guestVerdict } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per cloud flow: fails a flow whose creator (`properties.creator.objectId`) is a guest in the directory (`userType`
 * Guest, or an `#EXT#` user principal name); passes other creators (a creator missing from the directory is left to
 * pp_flow_owner_disabled_or_missing). Not evaluated for a creator without an object id, unreadable environments, and
 * the tenant when the `flows` or `users` stream did not run.
 * Source: Microsoft Learn "Properties of a Microsoft Entra B2B collaboration user" (entra/external-id/user-properties).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'flows', 'flow', (flow) => guestVerdict(ctx, flow.attrs.creator.objectId, 'creator'), { requires: ['users'] });
