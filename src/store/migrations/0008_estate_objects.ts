import type { Kysely } from 'kysely';

/**
 * The whole estate (issue 6): one table for every inventory stream beyond the first six (Power Apps, flows,
 * connectors, connections, DLP policies, tenant settings, bot components, channels, external connections, Teams app
 * installations, Copilot interactions, Power BI workspaces/reports/datasets, Foundry accounts/projects/deployments).
 * Rows are keyed by (integration, stream, id); `slice_key` holds the parent the row was read under (an environment,
 * a user, `*`) so a completed slice can mark what it no longer returns; `attrs` is the JSON of the normalised fields
 * checks read; `raw` the upstream object. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('estate_objects')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'varchar(64)', (c) => c.notNull())
    .addColumn('id', 'varchar(512)', (c) => c.notNull())
    .addColumn('slice_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('attrs', 'text', (c) => c.notNull())
    .addColumn('raw', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_run', 'varchar(64)', (c) => c.notNull())
    .addColumn('deleted_at', 'varchar(32)')
    .addPrimaryKeyConstraint('estate_objects_pk', ['integration_id', 'stream', 'id'])
    .execute();
  await db.schema.createIndex('estate_objects_slice').on('estate_objects').columns(['integration_id', 'stream', 'slice_key']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('estate_objects').execute();
}
