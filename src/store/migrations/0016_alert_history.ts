import type { Kysely } from 'kysely';

/**
 * Alert history (issue 21, triage): every status change of an alert — who (`actor`, the person or API key named to
 * Vigil, null for a change made outside a caller), when, from which status to which. A bulk change writes one row per
 * alert, as single changes do. Alerts raised before this migration have no rows (their history starts at the next
 * change). Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('alert_history')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('alert_id', 'varchar(64)', (c) => c.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('at', 'varchar(32)', (c) => c.notNull())
    .addColumn('from_status', 'varchar(32)', (c) => c.notNull())
    .addColumn('to_status', 'varchar(32)', (c) => c.notNull())
    .addColumn('actor', 'varchar(320)')
    .execute();
  await db.schema.createIndex('alert_history_alert').on('alert_history').columns(['alert_id', 'at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('alert_history').execute();
}
