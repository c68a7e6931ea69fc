import type { CheckFunction } from '../../types.ts';
import { inspectionFindingsByUser } from '../shared.ts';

/**
 * Fails each user whose Copilot interactions held personal data — payment card numbers (Luhn-valid), national
 * identifiers, IBANs, e-mail addresses in bulk — as found by content inspection; one tenant pass when none did.
 */
export const check: CheckFunction = (ctx) => inspectionFindingsByUser(ctx, 'personal', 'personal data');
