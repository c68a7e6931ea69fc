import { isVigilError, VigilError } from '../core/errors.ts';
import { getIntegration, type OnboardingDeps } from '../onboarding/integrations.ts';
import { collectAndEvaluate } from '../sync/run.ts';
import type { CollectionJob } from './queue.ts';

/**
 * The collection job handler shared by `vigil worker` and the in-process workers of `vigil serve`: collect (or
 * resume) one integration, then evaluate its checks. A failed collection throws, so the queue retries it with
 * backoff; an integration removed meanwhile, or whose credentials were refused (recorded on it, fixed by a
 * rotation), completes the job without retry.
 */
export function collectionJobHandler(deps: OnboardingDeps & { autoGrantAccess?: boolean }): (job: CollectionJob) => Promise<void> {
  return async (job) => {
    let row;
    try {
      row = await getIntegration(deps.db, job.integrationId);
    } catch (e) {
      if (isVigilError(e, 'not-found')) {
        deps.logger.warn({ jobId: job.id, integrationId: job.integrationId }, 'integration removed; job dropped');
        return;
      }
      throw e;
    }
    deps.logger.info({ jobId: job.id, integrationId: row.id }, 'collection job started');
    let run;
    try {
      ({ run } = await collectAndEvaluate(deps, row.id, { signal: job.signal, autoGrantAccess: deps.autoGrantAccess }));
    } catch (e) {
      // Refused credentials are recorded on the integration; retrying cannot help until they are rotated.
      if (isVigilError(e, 'authentication')) {
        deps.logger.error({ jobId: job.id, integrationId: row.id, code: e.code }, 'collection stopped: credentials refused');
        return;
      }
      throw e;
    }
    if (run.status === 'failed') {
      throw new VigilError('upstream', 'COLLECTION_FAILED', `Collection ${run.runId} failed: ${run.errors[0]?.message ?? 'unknown error'}`);
    }
  };
}
