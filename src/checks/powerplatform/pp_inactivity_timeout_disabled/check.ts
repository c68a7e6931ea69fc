import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/** Longest idle time accepted before sign-out, minutes (a policy choice of this check, stated in its metadata). */
const MAX_IDLE_MINUTES = 120;

/**
 * Fails environments with Dataverse that never sign idle users out (`organization.inactivitytimeoutenabled` false, the
 * platform default) or whose idle limit exceeds two hours (`inactivitytimeoutinmins`). Not evaluated per
 * {@link evaluateEnvironmentSettings}, and when the timeout is on but its minutes were not returned.
 * Source: Microsoft Learn "Security and session settings" (power-platform/admin/user-session-management: inactivity
 * timeout off by default).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['inactivityTimeoutEnabled'], (s) => {
    const detail = { inactivityTimeoutEnabled: s.inactivityTimeoutEnabled, inactivityTimeoutMinutes: s.inactivityTimeoutMinutes };
    if (!s.inactivityTimeoutEnabled) return { status: 'fail', reason: 'Idle sessions are never signed out (inactivity timeout off).', detail };
    if (s.inactivityTimeoutMinutes === null)
      return { status: 'not_evaluated', reason: 'The inactivity timeout is on but its length was not returned.', detail };
    return s.inactivityTimeoutMinutes > MAX_IDLE_MINUTES
      ? { status: 'fail', reason: `Idle sessions are signed out only after ${s.inactivityTimeoutMinutes} minutes (more than ${MAX_IDLE_MINUTES}).`, detail }
      : { status: 'pass', reason: `Idle sessions are signed out after ${s.inactivityTimeoutMinutes} minutes.`, detail };
  });
