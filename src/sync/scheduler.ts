import { Cron } from 'croner';
import type { Kysely } from 'kysely';
import { VigilError } from '../core/errors.ts';
import type { Logger } from '../platform/log/index.ts';
import { integrationsWithRunningRuns, listRuns } from '../store/repositories/runs.ts';
import { advanceSchedule, createSchedule, listSchedules } from '../store/repositories/schedules.ts';
import type { Database } from '../store/schema.ts';
import type { IntegrationRow } from '../store/repositories/integrations.ts';
import { requireCollectable } from './run.ts';
import type { JobQueue } from '../jobs/queue.ts';

/**
 * The scheduler: on every tick, enqueues the collection of each integration whose slot has come. Slots follow one
 * cron expression (UTC) shifted by a random jitter per integration, so that hundreds of tenants do not all start
 * at the same second (limits-and-practices.md, practice 5). A new integration is due at once, unless it already has
 * a run (collected by hand before the first tick): then at its first slot. A tick only enqueues;
 * workers collect.
 */

/** Options of {@link tick}. */
export interface SchedulerOptions {
  /** Cron expression of collection slots, UTC. @default '0 * * * *' (hourly) */
  cron: string;
  /** Largest jitter, seconds. @default 900 */
  jitterSeconds: number;
  logger: Logger;
  now?: Date;
  random?: () => number;
  /**
   * Also enqueue integrations with an unfinished run (the first tick after a restart): a collection stopped by a
   * shutdown resumes at once instead of at its next slot. A run still owned by a live process makes the job wait
   * and retry.
   */
  resumeInterrupted?: boolean;
}

/**
 * Validates a cron expression.
 * @throws VigilError `configuration` naming VIGIL_COLLECT_CRON.
 */
export function parseCron(expression: string): Cron {
  try {
    return new Cron(expression, { timezone: 'UTC', paused: true });
  } catch (e) {
    throw new VigilError('CRON_INVALID', `VIGIL_COLLECT_CRON '${expression}' is not a cron expression: ${(e as Error).message}`, {
      field: 'VIGIL_COLLECT_CRON',
    });
  }
}

/** The next due time after `from`: the next cron slot plus the integration's jitter, ISO 8601 UTC. */
function nextDue(cron: Cron, from: Date, jitterSeconds: number): string {
  const slot = cron.nextRun(from) ?? new Date(from.getTime() + 86_400_000);
  return new Date(slot.getTime() + jitterSeconds * 1000).toISOString();
}

/**
 * One scheduler tick. Returns the integrations enqueued.
 */
export async function tick(db: Kysely<Database>, queue: JobQueue, options: SchedulerOptions): Promise<string[]> {
  const now = options.now ?? new Date();
  const random = options.random ?? Math.random;
  const cron = parseCron(options.cron);
  const enqueued: string[] = [];
  if (options.resumeInterrupted) {
    for (const integrationId of await integrationsWithRunningRuns(db)) {
      const jobId = await queue.enqueueCollection(integrationId);
      options.logger.info({ integrationId, jobId }, 'interrupted collection enqueued to resume');
      if (jobId) enqueued.push(integrationId);
    }
  }
  for (const { integrationId, schedule } of await listSchedules(db)) {
    let row = schedule;
    if (!row) {
      const jitter = Math.floor(random() * options.jitterSeconds);
      // New to the scheduler: due at once, unless it was already collected (a user queued or ran it by hand before
      // the first tick) or is being collected — then its first slot is the next one, not a second collection now.
      const collected = (await listRuns(db, integrationId, 1)).length > 0;
      row = {
        integration_id: integrationId,
        jitter_seconds: jitter,
        next_due_at: collected ? nextDue(cron, new Date(now.getTime() - jitter * 1000), jitter) : now.toISOString(),
        last_enqueued_at: null,
      };
      if (!(await createSchedule(db, row))) continue; // another scheduler created it; it will enqueue
    }
    if (Date.parse(row.next_due_at) > now.getTime()) continue;
    // Slot boundaries come from the cron; subtracting the jitter keeps the integration on its own offset.
    const next = nextDue(cron, new Date(now.getTime() - row.jitter_seconds * 1000), row.jitter_seconds);
    if (!(await advanceSchedule(db, integrationId, row.next_due_at, next, now.toISOString()))) continue;
    const jobId = await queue.enqueueCollection(integrationId);
    options.logger.info({ integrationId, jobId, nextDue: next }, jobId ? 'collection enqueued' : 'collection already queued');
    if (jobId) enqueued.push(integrationId);
  }
  return enqueued;
}

/**
 * Queues a collection of one integration now, outside its schedule (`vigil jobs enqueue`, `POST …/runs`).
 * @returns the job id, or null when one is already queued (one per integration).
 * @throws VigilError `CREDENTIALS_EXPIRED` when the integration's credentials were refused (see requireCollectable).
 */
export async function enqueueNow(
  queue: Pick<JobQueue, 'enqueueCollection'>,
  row: Pick<IntegrationRow, 'id' | 'name' | 'credential_state' | 'credential_error'>,
): Promise<string | null> {
  requireCollectable(row);
  return queue.enqueueCollection(row.id);
}
