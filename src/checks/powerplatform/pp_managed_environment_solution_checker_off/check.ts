import { evaluateGovernance } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Managed Environments that do not run the solution checker on solution imports
 * (`extendedSettings.solutionCheckerMode` `none` or absent); `warn` and `block` pass (the reason says which).
 * Environments that are not managed are left out. Not evaluated per {@link evaluateGovernance}.
 * Source: Microsoft Learn "Solution checker enforcement in Managed Environments"
 * (power-platform/admin/managed-environment-solution-checker).
 */
export const check: CheckFunction = (ctx) =>
  evaluateGovernance(ctx, (g) => {
    if (!g.managed) return null;
    const mode = g.solutionCheckerMode;
    const detail = { solutionCheckerMode: mode };
    if (mode === 'block') return { status: 'pass', reason: 'Solution imports with critical solution checker findings are blocked.', detail };
    if (mode === 'warn') return { status: 'pass', reason: 'Solution imports are checked and critical findings are reported (not blocked).', detail };
    return { status: 'fail', reason: `Solution imports are not checked (solution checker enforcement ${mode ?? 'not set'}).`, detail };
  });
