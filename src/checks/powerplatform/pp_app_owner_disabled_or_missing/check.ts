import { evaluateEstate, ownerVerdict } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per Power App: follows the owner's Microsoft Entra object id (`properties.owner.id`) to the directory users. Fails
 * when the owner no longer exists in the directory or is disabled (`accountEnabled: false`); passes an active owner.
 * Not evaluated for an app whose owner carries no object id, for unreadable environments, and for the tenant when the
 * `powerApps` or `users` stream did not run. (An owner that is not a user — a service principal — is not in the
 * directory users and is reported as gone.)
 * Source: Microsoft Learn "Manage orphaned resources" (power-platform/admin/manage-orphaned-resources).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'powerApps', 'app', (app) => ownerVerdict(ctx, app.attrs.owner.id, 'owner'), { requires: ['users'] });
