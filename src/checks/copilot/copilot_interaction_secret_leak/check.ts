import { evaluateGrouped } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails each user whose Microsoft 365 Copilot interactions (prompts or responses) held a secret — a key, token,
 * private key or password — as found by content inspection at collection time; one tenant pass when none did.
 * Only redacted excerpts are shown.
 */
export const check: CheckFunction = (ctx) =>
  evaluateGrouped(
    ctx,
    'copilotInteractions',
    'user',
    (i) => (i.attrs.inspection.secrets > 0 ? i.attrs.userId : null),
    (userId, rows) => {
      const user = ctx.inventory.directoryUsers.get(userId);
      const types = [...new Set(rows.flatMap((r) => r.attrs.inspection.types))].sort();
      return {
        status: 'fail',
        name: user?.user_principal_name ?? null,
        reason: `${rows.length} Copilot interaction(s) of ${user?.user_principal_name ?? userId} contained secrets (${types.join(', ')}).`,
        detail: { interactions: rows.slice(0, 20).map((r) => r.id), types, excerpts: rows.flatMap((r) => r.attrs.inspection.excerpts).slice(0, 5) },
      };
    },
    { passReason: 'No secret found in collected Copilot interactions.' },
  );
