import { evaluateGrouped } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails each user whose Copilot interactions held personal data — payment card numbers (Luhn-valid), national
 * identifiers, IBANs, e-mail addresses in bulk — as found by content inspection; one tenant pass when none did.
 */
export const check: CheckFunction = (ctx) =>
  evaluateGrouped(
    ctx,
    'copilotInteractions',
    'user',
    (i) => (i.attrs.inspection.personal > 0 ? i.attrs.userId : null),
    (userId, rows) => {
      const user = ctx.inventory.directoryUsers.get(userId);
      const types = [...new Set(rows.flatMap((r) => r.attrs.inspection.types))].sort();
      return {
        status: 'fail',
        name: user?.user_principal_name ?? null,
        reason: `${rows.length} Copilot interaction(s) of ${user?.user_principal_name ?? userId} contained personal data (${types.join(', ')}).`,
        detail: { interactions: rows.slice(0, 20).map((r) => r.id), types, excerpts: rows.flatMap((r) => r.attrs.inspection.excerpts).slice(0, 5) },
      };
    },
    { passReason: 'No personal data found in collected Copilot interactions.' },
  );
