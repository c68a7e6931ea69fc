import type { Kysely } from 'kysely';

/**
 * Incremental collection (issue 6): the delta link of each delta-capable stream slice (Graph `users/delta`,
 * `groups/delta`), saved with the last page of a complete round and used as the start of the next one. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stream_states')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'varchar(64)', (c) => c.notNull())
    .addColumn('slice_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('delta_link', 'text', (c) => c.notNull())
    .addColumn('run_id', 'varchar(64)')
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('stream_states_pk', ['integration_id', 'stream', 'slice_key'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stream_states').execute();
}
