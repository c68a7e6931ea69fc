import { isVigilError, VigilError } from '../core/errors.ts';
import { getIntegration, type IntegrationDeps } from '../integration/index.ts';
import { ingestAndDetect } from './audit.ts';
import { latestFinishedRun } from '../store/repositories/runs.ts';
import { collectAndEvaluate, type CollectAndEvaluateOptions } from './run.ts';
import type { CollectionJob } from '../jobs/queue.ts';

/** Settings of the audit cycle a job runs after the collection (`VIGIL_PUBLISHER_ID`, `VIGIL_AUDIT_CONCURRENCY`). */
export interface JobAuditSettings {
  /** false: the job stops after the collection. @default true */
  enabled?: boolean;
  publisherId?: string;
  concurrency?: number;
}

/**
 * The collection job handler shared by `vigil worker` and the in-process workers of `vigil serve`: collect (or
 * resume) one integration, evaluate its checks, then ingest its audit feed and run the detections. A failed
 * collection throws, so the queue retries it with backoff; an integration removed meanwhile, or whose credentials
 * were refused (recorded on it, fixed by a rotation), completes the job without retry. An audit cycle that fails
 * is logged and left to the next job: its cursors did not move, so nothing is skipped.
 */
export function collectionJobHandler(
  deps: IntegrationDeps & Pick<CollectAndEvaluateOptions, 'grantAccess'> & { audit?: JobAuditSettings },
): (job: CollectionJob) => Promise<void> {
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
    // A retry of a job whose first attempt outlived its expiry: that attempt started after the job was enqueued and
    // finished the collection, so this attempt has nothing to do.
    const last = await latestFinishedRun(deps.db, row.id);
    if (job.enqueuedAt && last && last.status !== 'failed' && last.started_at >= job.enqueuedAt) {
      deps.logger.info({ jobId: job.id, integrationId: row.id, runId: last.id }, 'collection job already done by an earlier attempt');
      return;
    }
    deps.logger.info({ jobId: job.id, integrationId: row.id }, 'collection job started');
    let run;
    try {
      // Every page stored and every check evaluated is progress: the job's expiry counts from the last one, so a
      // collection that moves on is never cut, and one stuck (or whose worker died) is retried.
      ({ run } = await collectAndEvaluate(deps, row.id, {
        signal: job.signal,
        grantAccess: deps.grantAccess,
        onProgress: () => job.progress(),
        onCheck: () => job.progress(),
      }));
    } catch (e) {
      // Refused credentials are recorded on the integration; retrying cannot help until they are rotated.
      if (isVigilError(e, 'authentication')) {
        deps.logger.error({ jobId: job.id, integrationId: row.id, code: e.code }, 'collection stopped: credentials refused');
        return;
      }
      throw e;
    }
    if (run.status === 'failed') {
      throw new VigilError('COLLECTION_FAILED', `Collection ${run.runId} failed: ${run.errors[0]?.message ?? 'unknown error'}`);
    }
    if (job.signal?.aborted || deps.audit?.enabled === false) return;
    try {
      const { ingest, detections } = await ingestAndDetect(deps, row.id, {
        publisherId: deps.audit?.publisherId,
        concurrency: deps.audit?.concurrency,
        onProgress: () => job.progress(),
        onDetect: () => job.progress(),
        // Stopped with the job: its requests and throttled waits end, the cursors stay at the last stored window.
        signal: job.signal,
      });
      const stored = Object.values(ingest.contentTypes).reduce((n, o) => n + o.stored, 0);
      deps.logger.info(
        { jobId: job.id, integrationId: row.id, stored, dataLossAlerts: ingest.dataLossAlerts.length, alertsRaised: detections.alertsRaised },
        'audit cycle finished',
      );
    } catch (e) {
      if (job.signal.aborted) {
        deps.logger.warn({ jobId: job.id, integrationId: row.id }, 'audit cycle stopped; the next job resumes from the stored cursors');
        return;
      }
      deps.logger.error(
        { jobId: job.id, integrationId: row.id, error: (e as Error).message },
        'audit cycle failed; the next job resumes from the stored cursors',
      );
    }
  };
}
