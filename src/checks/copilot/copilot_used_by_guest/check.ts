import { evaluateGrouped } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails each guest user (`userType` Guest) with Microsoft 365 Copilot interaction history; one tenant pass when no
 * guest has any. Not evaluated without directory users or interaction history.
 */
export const check: CheckFunction = (ctx) =>
  evaluateGrouped(
    ctx,
    'copilotInteractions',
    'user',
    (i) => (ctx.inventory.directoryUsers.get(i.attrs.userId)?.user_type === 'Guest' ? i.attrs.userId : null),
    (state: { count: number; last: string } | undefined, i) => {
      const at = i.attrs.createdDateTime ?? '';
      return { count: (state?.count ?? 0) + 1, last: state && state.last > at ? state.last : at };
    },
    (userId, { count, last }) => {
      const user = ctx.inventory.directoryUsers.get(userId);
      return {
        status: 'fail',
        name: user?.user_principal_name ?? null,
        reason: `Guest ${user?.user_principal_name ?? userId} used Microsoft 365 Copilot (${count} interaction(s), last ${last || 'unknown'}).`,
      };
    },
    { requires: ['users'], passReason: 'No guest has Copilot interaction history.' },
  );
