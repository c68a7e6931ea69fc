import type { Kysely } from 'kysely';

/**
 * Outbox of events for the SIEM sinks (webhook, syslog): one row per (event, sink), written in the same transaction
 * as the finding or alert change it reports and delivered after commit; a row stays pending (retried at the next
 * delivery) until its sink accepts it, so an event is never lost to a sink that is down. `payload` is the OCSF JSON
 * of the event as it stood when written. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sink_outbox')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('sink', 'varchar(16)', (c) => c.notNull())
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('event_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('subject_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_attempt_at', 'varchar(32)')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'varchar(32)')
    .execute();
  await db.schema.createIndex('sink_outbox_pending').on('sink_outbox').columns(['sink', 'delivered_at', 'created_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sink_outbox').execute();
}
