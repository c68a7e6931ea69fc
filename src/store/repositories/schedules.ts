import type { Executor } from '../db.ts';
import type { CollectionSchedulesTable } from '../schema.ts';

/** Collection schedules per integration. */
export type ScheduleRow = CollectionSchedulesTable;

/** Schedules of every integration, with integrations that have none yet (schedule null). */
export async function listSchedules(db: Executor): Promise<{ integrationId: string; schedule: ScheduleRow | null }[]> {
  const rows = await db
    .selectFrom('integrations')
    .leftJoin('collection_schedules', 'collection_schedules.integration_id', 'integrations.id')
    .select([
      'integrations.id as integrationId',
      'collection_schedules.jitter_seconds',
      'collection_schedules.next_due_at',
      'collection_schedules.last_enqueued_at',
    ])
    .orderBy('integrations.id')
    .execute();
  return rows.map((r) => ({
    integrationId: r.integrationId,
    schedule:
      r.next_due_at === null
        ? null
        : { integration_id: r.integrationId, jitter_seconds: r.jitter_seconds!, next_due_at: r.next_due_at, last_enqueued_at: r.last_enqueued_at },
  }));
}

/** Creates a schedule; returns false when another scheduler created it first. */
export async function createSchedule(db: Executor, row: ScheduleRow): Promise<boolean> {
  const r = await db
    .insertInto('collection_schedules')
    .values(row)
    .onConflict((oc) => oc.column('integration_id').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Moves a schedule to its next slot if it is still at `expectedDue` (compare-and-set, so that of several schedulers
 * exactly one enqueues a slot). Returns true when this caller won.
 */
export async function advanceSchedule(db: Executor, integrationId: string, expectedDue: string, nextDue: string, enqueuedAt: string): Promise<boolean> {
  const r = await db
    .updateTable('collection_schedules')
    .set({ next_due_at: nextDue, last_enqueued_at: enqueuedAt })
    .where('integration_id', '=', integrationId)
    .where('next_due_at', '=', expectedDue)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0) > 0;
}
