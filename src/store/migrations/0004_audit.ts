import type { Kysely } from 'kysely';

/**
 * Audit ingestion: normalised audit events (Office 365 Management Activity API common schema + raw record), the
 * cursor per (integration, content type), and alerts (data loss now; detections later) with their lifecycle. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('content_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('record_type', 'integer')
    .addColumn('creation_time', 'varchar(32)', (c) => c.notNull())
    .addColumn('operation', 'varchar(200)')
    .addColumn('workload', 'varchar(100)')
    .addColumn('user_id', 'varchar(320)')
    .addColumn('user_type', 'integer')
    .addColumn('client_ip', 'varchar(64)')
    .addColumn('object_id', 'text')
    .addColumn('organization_id', 'varchar(64)')
    .addColumn('raw', 'text', (c) => c.notNull())
    .addColumn('ingested_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_events_pk', ['integration_id', 'id'])
    .execute();
  await db.schema.createIndex('audit_events_time_idx').on('audit_events').columns(['integration_id', 'creation_time']).execute();
  await db.schema.createIndex('audit_events_operation_idx').on('audit_events').columns(['integration_id', 'operation']).execute();

  await db.schema
    .createTable('audit_cursors')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('content_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('cursor_time', 'varchar(32)', (c) => c.notNull())
    .addColumn('subscription', 'varchar(32)')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_cursors_pk', ['integration_id', 'content_type'])
    .execute();

  await db.schema
    .createTable('alerts')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('rule_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('window_start', 'varchar(32)')
    .addColumn('window_end', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addUniqueConstraint('alerts_dedupe_uq', ['integration_id', 'rule_id', 'dedupe_key'])
    .execute();

  await db.schema
    .createTable('alert_events')
    .addColumn('alert_id', 'varchar(64)', (c) => c.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_events_pk', ['alert_id', 'event_id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['alert_events', 'alerts', 'audit_cursors', 'audit_events']) await db.schema.dropTable(t).execute();
}
