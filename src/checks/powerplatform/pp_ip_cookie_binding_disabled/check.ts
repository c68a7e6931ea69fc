import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails environments with Dataverse whose session cookies are not bound to the client's IP address
 * (`organization.enableipbasedcookiebinding` false, the default). Not evaluated per {@link evaluateEnvironmentSettings}.
 * Source: Microsoft Learn "Safeguard Dataverse sessions with IP cookie binding"
 * (power-platform/admin/block-cookie-replay-attack; a Managed Environments feature).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['ipCookieBindingEnabled'], (s) =>
    s.ipCookieBindingEnabled
      ? { status: 'pass', reason: 'Session cookies are bound to the IP address they were issued to.', detail: { ipCookieBindingEnabled: true } }
      : {
          status: 'fail',
          reason: 'IP address-based cookie binding is off: a stolen session cookie works from any address.',
          detail: { ipCookieBindingEnabled: false },
        },
  );
