import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per connection: fails a connection shared with other users, groups or everyone (any role assignment besides
 * `Owner`, attrs `isShared` / `sharedWithTenant`) that authenticates with the maker's own delegated OAuth sign-in
 * (`authenticationType: 'oauth'`): everyone it is shared with acts with the maker's identity and access. Passes
 * connections not shared, or shared but using a service principal, key or other non-delegated authentication.
 * Not evaluated for unreadable environments and when the `connections` stream did not run.
 * Source: Microsoft Learn "Share canvas app resources" (power-apps/maker/canvas-apps/share-app-resources) and
 * "Manage connections in canvas apps" (power-apps/maker/canvas-apps/add-manage-connections).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'connections', 'connection', (c) => {
    const shared = c.attrs.isShared || c.attrs.sharedWithTenant;
    if (!shared || c.attrs.authenticationType !== 'oauth') return { status: 'pass', reason: null };
    const who = c.attrs.sharedWithTenant ? 'everyone in the organisation' : `${c.attrs.sharedWith.length} user(s) or group(s)`;
    const account = c.attrs.accountName ?? c.attrs.createdBy.userPrincipalName ?? c.attrs.createdBy.id ?? 'its maker';
    return {
      status: 'fail',
      reason: `Shared with ${who} and runs on ${account}'s own credentials (${c.attrs.connectorId ?? 'unknown connector'}).`,
      detail: { connectorId: c.attrs.connectorId, sharedWithTenant: c.attrs.sharedWithTenant, sharedWith: c.attrs.sharedWith },
    };
  });
