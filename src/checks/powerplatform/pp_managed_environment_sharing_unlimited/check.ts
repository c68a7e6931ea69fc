import { evaluateGovernance } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Managed Environments whose canvas app sharing is not limited: `extendedSettings.limitSharingMode` not
 * `excludeSharingToSecurityGroups` (compared case-insensitively; `noLimit` or absent = makers can share with security
 * groups and Everyone), or limited to individuals with no cap (`maxLimitUserSharing` -1 or absent). Environments that
 * are not managed are left out (`pp_environment_not_managed` reports them). Not evaluated per
 * {@link evaluateGovernance}. Source: Microsoft Learn "Limit sharing" (power-platform/admin/managed-environment-sharing-limits).
 */
export const check: CheckFunction = (ctx) =>
  evaluateGovernance(ctx, (g) => {
    if (!g.managed) return null;
    const detail = { limitSharingMode: g.limitSharingMode, maxLimitUserSharing: g.maxLimitUserSharing };
    if (g.limitSharingMode?.toLowerCase() !== 'excludesharingtosecuritygroups')
      return {
        status: 'fail',
        reason: `Canvas apps can be shared with security groups and Everyone (sharing limit ${g.limitSharingMode ?? 'not set'}).`,
        detail,
      };
    if (g.maxLimitUserSharing === null || g.maxLimitUserSharing < 0)
      return { status: 'fail', reason: 'Sharing with security groups is excluded, but apps can be shared with any number of individuals.', detail };
    return { status: 'pass', reason: `Apps can be shared with at most ${g.maxLimitUserSharing} individuals and no security group.`, detail };
  });
