import type { Executor } from '../db.ts';
import type { SinkOutboxTable } from '../schema.ts';

/**
 * The sink outbox (table `sink_outbox`, migration 0009): events written with the change they report, delivered
 * after commit, marked when a sink accepted them (see `src/sinks/outbox.ts`).
 */

/** Inserts outbox rows (200 a statement). */
export async function insertOutboxRows(db: Executor, rows: SinkOutboxTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto('sink_outbox')
      .values(rows.slice(i, i + 200))
      .execute();
}

/** The oldest `limit` undelivered rows of one sink, in delivery order. */
export async function pendingOutboxRows(db: Executor, sink: string, limit: number): Promise<SinkOutboxTable[]> {
  return db
    .selectFrom('sink_outbox')
    .selectAll()
    .where('sink', '=', sink)
    .where('delivered_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Marks rows delivered at `at` (ISO 8601 UTC), counting the attempt. */
export async function markOutboxDelivered(db: Executor, ids: string[], at: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .updateTable('sink_outbox')
      .set((eb) => ({ delivered_at: at, last_attempt_at: at, last_error: null, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
  }
}

/** Records a failed attempt on one row (the error never holds a secret). */
export async function markOutboxFailed(db: Executor, id: string, error: string, at: string): Promise<void> {
  await db
    .updateTable('sink_outbox')
    .set((eb) => ({ last_attempt_at: at, last_error: error, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Number of undelivered rows of one sink. */
export async function countPendingOutbox(db: Executor, sink: string): Promise<number> {
  const row = await db
    .selectFrom('sink_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('sink', '=', sink)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
