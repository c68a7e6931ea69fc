import { evaluateGovernance } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/** Environment types judged: the ones that carry the organisation's production data and makers' default work. */
const IN_SCOPE = new Set(['production', 'default']);

/**
 * Fails Production and Default environments that are not Managed Environments (BAP
 * `governanceConfiguration.protectionLevel` not `Standard`): sharing limits, solution checker enforcement, the IP
 * firewall and cookie binding, usage insights and data policy views are then unavailable. Other types (Sandbox,
 * Developer, Trial, Teams) are left out. Not evaluated per {@link evaluateGovernance}.
 * Source: Microsoft Learn "Managed Environments overview" (power-platform/admin/managed-environment-overview).
 */
export const check: CheckFunction = (ctx) =>
  evaluateGovernance(
    ctx,
    (g) =>
      g.managed
        ? { status: 'pass', reason: 'The environment is a Managed Environment.' }
        : {
            status: 'fail',
            reason: `The environment is not a Managed Environment (protection level ${g.protectionLevel ?? 'not set'}): sharing limits, the IP firewall and cookie binding cannot be applied.`,
          },
    (env) => env.is_default === 1 || IN_SCOPE.has((env.sku ?? '').toLowerCase()),
  );
