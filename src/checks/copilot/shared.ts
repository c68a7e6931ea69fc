import { evaluateGrouped } from '../helpers.ts';
import type { CheckContext, CheckResult } from '../types.ts';

/**
 * Shared by the content-inspection checks: fails each user whose Copilot interactions hold findings of one kind
 * (`secrets` or `personal`, counted by content inspection at collection time), with the types and up to five redacted
 * excerpts; one tenant pass when none does. Not evaluated without the interaction history.
 */
export function inspectionFindingsByUser(ctx: CheckContext, kind: 'secrets' | 'personal', what: string): CheckResult[] {
  return evaluateGrouped(
    ctx,
    'copilotInteractions',
    'user',
    (i) => (i.attrs.inspection[kind] > 0 ? i.attrs.userId : null),
    (userId, rows) => {
      const user = ctx.inventory.directoryUsers.get(userId);
      const types = [...new Set(rows.flatMap((r) => r.attrs.inspection.types))].sort();
      return {
        status: 'fail',
        name: user?.user_principal_name ?? null,
        reason: `${rows.length} Copilot interaction(s) of ${user?.user_principal_name ?? userId} contained ${what} (${types.join(', ')}).`,
        detail: { interactions: rows.slice(0, 20).map((r) => r.id), types, excerpts: rows.flatMap((r) => r.attrs.inspection.excerpts).slice(0, 5) },
      };
    },
    { passReason: `No ${what} found in collected Copilot interactions.` },
  );
}
