import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per Power App: fails an app shared with everyone in the tenant (a role assignment whose principal type is
 * `Tenant`, attrs `sharedWithTenant: true`); passes when its permissions were read and hold no such assignment; not
 * evaluated for an app whose permissions were not returned (`sharedWithTenant: null`), for an environment whose
 * apps could not be read, and for the tenant when the `powerApps` stream did not run.
 * Source: Microsoft Learn "Share a canvas app" (power-apps/maker/canvas-apps/share-app) and
 * "Secure the default environment — limit sharing with everyone".
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'powerApps', 'app', (app) => {
    if (app.attrs.sharedWithTenant === null)
      return { status: 'not_evaluated', reason: 'The app was listed without its permissions: whether it is shared with everyone is unknown.' };
    return app.attrs.sharedWithTenant
      ? {
          status: 'fail',
          reason: 'The app is shared with everyone in the organisation, guests included.',
          detail: { owner: app.attrs.owner.userPrincipalName ?? app.attrs.owner.id },
        }
      : { status: 'pass', reason: null };
  });
