import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/** The platform's default maximum session length, minutes (24 hours). */
const DEFAULT_SESSION_MINUTES = 24 * 60;

/**
 * Fails environments with Dataverse whose custom session timeout lets a session live longer than the platform default
 * of 24 hours (`organization.sessiontimeoutenabled` true and `sessiontimeoutinmins` above 1440). Without a custom
 * value (`sessiontimeoutenabled` false) the 24-hour default applies: a pass. Not evaluated per
 * {@link evaluateEnvironmentSettings}, and when the custom value is on but its minutes were not returned.
 * Source: Microsoft Learn "Security and session settings" (power-platform/admin/user-session-management: default
 * 24 hours, custom up to 30 days).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['sessionTimeoutEnabled'], (s) => {
    const detail = { sessionTimeoutEnabled: s.sessionTimeoutEnabled, sessionTimeoutMinutes: s.sessionTimeoutMinutes };
    if (!s.sessionTimeoutEnabled) return { status: 'pass', reason: 'The default maximum session length (24 hours) applies.', detail };
    if (s.sessionTimeoutMinutes === null)
      return { status: 'not_evaluated', reason: 'A custom session timeout is set but its length was not returned.', detail };
    return s.sessionTimeoutMinutes > DEFAULT_SESSION_MINUTES
      ? {
          status: 'fail',
          reason: `Sessions last up to ${Math.round(s.sessionTimeoutMinutes / 60)} hours before users must sign in again (default 24 hours).`,
          detail,
        }
      : { status: 'pass', reason: `Sessions end after ${s.sessionTimeoutMinutes} minutes.`, detail };
  });
