import type { RunStatus, SliceStatus } from '../../core/types.ts';
import type { Executor } from '../db.ts';
import type { CheckpointsTable, CollectionRunsTable } from '../schema.ts';

/** Collection runs and their checkpoints per (stream, slice). */
export type RunRow = CollectionRunsTable;
export type CheckpointRow = CheckpointsTable;

/** Inserts a run in status `running`. */
export async function insertRun(db: Executor, row: Pick<RunRow, 'id' | 'integration_id' | 'started_at' | 'owner_host' | 'owner_pid'>): Promise<void> {
  await db
    .insertInto('collection_runs')
    .values({
      ...row,
      status: 'running',
      heartbeat_at: row.started_at,
      attempts: 1,
      finished_at: null,
      duration_ms: null,
      counts: null,
      errors: null,
      http_stats: null,
    })
    .execute();
}

/** The run of an integration still marked `running`, if any. */
export async function findRunningRun(db: Executor, integrationId: string): Promise<RunRow | undefined> {
  return db
    .selectFrom('collection_runs')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('status', '=', 'running')
    .orderBy('started_at', 'desc')
    .executeTakeFirst();
}

/** Takes over a run left `running` by a dead process: new owner, attempt count + 1. */
export async function claimRun(db: Executor, runId: string, ownerHost: string, ownerPid: number, at: string): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set((eb) => ({ owner_host: ownerHost, owner_pid: ownerPid, heartbeat_at: at, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', runId)
    .execute();
}

/** Gives up ownership of a running run so that any process may resume it at once. */
export async function releaseRun(db: Executor, runId: string): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set({ owner_host: null, owner_pid: null, heartbeat_at: new Date(0).toISOString() })
    .where('id', '=', runId)
    .execute();
}

/** Records that the run's owner is alive. */
export async function heartbeat(db: Executor, runId: string, at: string): Promise<void> {
  await db.updateTable('collection_runs').set({ heartbeat_at: at }).where('id', '=', runId).execute();
}

/** Closes a run with its outcome. */
export async function finishRun(
  db: Executor,
  runId: string,
  outcome: { status: RunStatus; finishedAt: string; durationMs: number; counts: unknown; errors: unknown; httpStats: unknown },
): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set({
      status: outcome.status,
      finished_at: outcome.finishedAt,
      duration_ms: outcome.durationMs,
      counts: JSON.stringify(outcome.counts),
      errors: JSON.stringify(outcome.errors),
      http_stats: JSON.stringify(outcome.httpStats),
    })
    .where('id', '=', runId)
    .execute();
}

/** A run by id. */
export async function getRun(db: Executor, runId: string): Promise<RunRow | undefined> {
  return db.selectFrom('collection_runs').selectAll().where('id', '=', runId).executeTakeFirst();
}

/** Integrations that have a run still marked `running` (interrupted, or in progress elsewhere). */
export async function integrationsWithRunningRuns(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('collection_runs').select('integration_id').distinct().where('status', '=', 'running').execute();
  return rows.map((r) => r.integration_id);
}

/** The latest finished run (any status but `running`) of an integration. */
export async function latestFinishedRun(db: Executor, integrationId: string): Promise<RunRow | undefined> {
  return db
    .selectFrom('collection_runs')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('status', '!=', 'running')
    .orderBy('started_at', 'desc')
    .executeTakeFirst();
}

/** Runs of an integration, newest first. */
export async function listRuns(db: Executor, integrationId: string, limit = 20): Promise<RunRow[]> {
  return db.selectFrom('collection_runs').selectAll().where('integration_id', '=', integrationId).orderBy('started_at', 'desc').limit(limit).execute();
}

/** All checkpoints of a run. */
export async function listCheckpoints(db: Executor, runId: string): Promise<CheckpointRow[]> {
  return db.selectFrom('checkpoints').selectAll().where('run_id', '=', runId).execute();
}

/**
 * How a slice is read: `full` — everything from the start, so a complete round may mark what it did not see as
 * deleted — or `delta` — only the changes since the stored delta link (removals arrive as ids).
 */
export type ReadMode = 'full' | 'delta';

/**
 * Writes a checkpoint (insert or replace) with how the slice is read (`readMode`; null for a slice never read: a
 * stream skipped for a missing permission or a failed parent). `addRecords` is added to the stored count. Call it
 * in the transaction that stores the page, so the cursor, the records and the read mode can never disagree.
 */
export async function saveCheckpoint(
  db: Executor,
  cp: {
    runId: string;
    stream: string;
    sliceKey: string;
    status: SliceStatus;
    cursor: string | null;
    readMode: ReadMode | null;
    addRecords: number;
    errorCode?: string | null;
    errorMessage?: string | null;
    at: string;
  },
): Promise<void> {
  await db
    .insertInto('checkpoints')
    .values({
      run_id: cp.runId,
      stream: cp.stream,
      slice_key: cp.sliceKey,
      status: cp.status,
      cursor: cp.cursor,
      records: cp.addRecords,
      error_code: cp.errorCode ?? null,
      error_message: cp.errorMessage ?? null,
      updated_at: cp.at,
      read_mode: cp.readMode,
    })
    .onConflict((oc) =>
      oc.columns(['run_id', 'stream', 'slice_key']).doUpdateSet((eb) => ({
        status: cp.status,
        cursor: cp.cursor,
        records: eb('checkpoints.records', '+', cp.addRecords),
        error_code: cp.errorCode ?? null,
        error_message: cp.errorMessage ?? null,
        updated_at: cp.at,
        read_mode: cp.readMode,
      })),
    )
    .execute();
}

/** The delta link a stream slice starts its next round from, if a complete round issued one. */
export async function getDeltaLink(db: Executor, integrationId: string, stream: string, sliceKey: string): Promise<string | undefined> {
  return (
    await db
      .selectFrom('stream_states')
      .select('delta_link')
      .where('integration_id', '=', integrationId)
      .where('stream', '=', stream)
      .where('slice_key', '=', sliceKey)
      .executeTakeFirst()
  )?.delta_link;
}

/** Saves the delta link of a complete round (call in the transaction that stores the round's last page). */
export async function saveDeltaLink(
  db: Executor,
  integrationId: string,
  stream: string,
  sliceKey: string,
  deltaLink: string,
  runId: string,
  at: string,
): Promise<void> {
  await db
    .insertInto('stream_states')
    .values({ integration_id: integrationId, stream, slice_key: sliceKey, delta_link: deltaLink, run_id: runId, updated_at: at })
    .onConflict((oc) => oc.columns(['integration_id', 'stream', 'slice_key']).doUpdateSet({ delta_link: deltaLink, run_id: runId, updated_at: at }))
    .execute();
}

/** Forgets a delta link (the upstream no longer knows its state: the next round is a full one). */
export async function clearDeltaLink(db: Executor, integrationId: string, stream: string, sliceKey: string): Promise<void> {
  await db.deleteFrom('stream_states').where('integration_id', '=', integrationId).where('stream', '=', stream).where('slice_key', '=', sliceKey).execute();
}

/**
 * When a stream was last read completely: the start (ISO 8601 UTC) of the latest finished run in which the stream
 * has checkpoints and every one of them is `done`, or undefined. Runs where the stream was reused hold no checkpoint
 * for it and are passed over.
 */
export async function lastCompleteRead(db: Executor, integrationId: string, stream: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('collection_runs as r')
    .innerJoin('checkpoints as c', 'c.run_id', 'r.id')
    .select(['r.started_at'])
    .where('r.integration_id', '=', integrationId)
    .where('r.status', 'in', ['succeeded', 'partial'])
    .where('c.stream', '=', stream)
    .groupBy(['r.id', 'r.started_at'])
    .having((eb) => eb.fn.sum<number>(eb.case().when('c.status', '!=', 'done').then(1).else(0).end()), '=', 0)
    .orderBy('r.started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.started_at;
}
