import { evaluateGrouped } from '../helpers.ts';
import type { CheckContext, CheckResult } from '../types.ts';

/**
 * Shared by the content-inspection checks: fails each user whose Copilot interactions hold findings of one kind
 * (`secrets` or `personal`, counted by content inspection at collection time), with the types and up to five redacted
 * excerpts; one tenant pass when none does. Not evaluated without the interaction history.
 */
export function inspectionFindingsByUser(ctx: CheckContext, kind: 'secrets' | 'personal', what: string): Promise<CheckResult[]> {
  return evaluateGrouped(
    ctx,
    'copilotInteractions',
    'user',
    (i) => (i.attrs.inspection[kind] > 0 ? i.attrs.userId : null),
    (state: { count: number; interactions: string[]; types: Set<string>; excerpts: string[] } | undefined, i) => {
      const s = state ?? { count: 0, interactions: [], types: new Set<string>(), excerpts: [] };
      s.count++;
      if (s.interactions.length < 20) s.interactions.push(i.id);
      for (const t of i.attrs.inspection.types) s.types.add(t);
      for (const e of i.attrs.inspection.excerpts) if (s.excerpts.length < 5) s.excerpts.push(e);
      return s;
    },
    (userId, s) => {
      const user = ctx.inventory.directoryUsers.get(userId);
      const types = [...s.types].sort();
      return {
        status: 'fail',
        name: user?.user_principal_name ?? null,
        reason: `${s.count} Copilot interaction(s) of ${user?.user_principal_name ?? userId} contained ${what} (${types.join(', ')}).`,
        detail: { interactions: s.interactions, types, excerpts: s.excerpts },
      };
    },
    { passReason: `No ${what} found in collected Copilot interactions.` },
  );
}
