import type { Kysely } from 'kysely';

/**
 * Durable incremental state (issue 14): each checkpoint records how its slice is being read, `full` (everything, from
 * the start) or `delta` (only the changes since the stored delta link), written in the transaction that stores the
 * page. Only a complete `full` round may mark unseen rows deleted; before this, a resumed run forgot that a slice done
 * before the crash was a delta round and marked every row it did not see — the whole directory — deleted.
 *
 * The stored delta links are dropped as well, so that every integration's next round of users, groups, memberships
 * and Power BI workspaces is a full one: it brings back the rows an interrupted run of an earlier version marked
 * deleted (a delta round would never return them, as nothing changed upstream). Rows of checkpoints written before
 * this migration hold no mode (null): the engine takes them as `full` for streams without delta and as unknown — never
 * marking anything deleted, restarting an unfinished slice from its start — for delta streams. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('checkpoints').addColumn('read_mode', 'varchar(8)').execute();
  await db.deleteFrom('stream_states').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('checkpoints').dropColumn('read_mode').execute();
}
