import type { CheckFunction } from '../../types.ts';
import { inspectionFindingsByUser } from '../shared.ts';

/**
 * Fails each user whose Microsoft 365 Copilot interactions (prompts or responses) held a secret — a key, token,
 * private key or password — as found by content inspection at collection time; one tenant pass when none did.
 * Only redacted excerpts are shown.
 */
export const check: CheckFunction = (ctx) => inspectionFindingsByUser(ctx, 'secrets', 'secrets');
