import type { AuditEvent } from '../core/audit.ts';

/** Helpers shared by detections. */

/** True when the user is a guest: UserType 10, or an Entra guest UPN (`…#EXT#@…`). */
export function isGuest(e: AuditEvent): boolean {
  return e.userType === 10 || /#EXT#/i.test(e.userId ?? '');
}
