import { streamsNotEvaluated } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * One result per environment: pass when its agents were read, fail with the reason when they were not (Vigil has no
 * access there: an integration-health finding), and not evaluated for the whole tenant when environments could not be
 * listed. Environments without Dataverse have no agents and pass.
 */
export const check: CheckFunction = (ctx) => {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments']);
  if (notEvaluated) return notEvaluated;
  return ctx.inventory.environments.map((env) => {
    const gap = env.dataverse_url ? ctx.coverage.sliceGap('agents', env.id) : null;
    return gap
      ? {
          resourceType: 'environment' as const,
          resourceId: env.id,
          resourceName: env.display_name,
          status: 'fail' as const,
          reason: gap.message,
          detail: { code: gap.code },
        }
      : {
          resourceType: 'environment' as const,
          resourceId: env.id,
          resourceName: env.display_name,
          status: 'pass' as const,
          reason: env.dataverse_url ? null : 'No Dataverse: no agents.',
        };
  });
};
