import type { Kysely } from 'kysely';

/**
 * Collection schedules (next due time with a random jitter per integration) and shared upstream throttling
 * budgets (a token bucket per tenant and API, shared by every worker through the database). Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('collection_schedules')
    .addColumn('integration_id', 'varchar(64)', (c) => c.primaryKey().references('integrations.id').onDelete('cascade'))
    .addColumn('jitter_seconds', 'integer', (c) => c.notNull())
    .addColumn('next_due_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_enqueued_at', 'varchar(32)')
    .execute();

  await db.schema
    .createTable('upstream_budgets')
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('api', 'varchar(32)', (c) => c.notNull())
    .addColumn('tokens', 'double precision', (c) => c.notNull())
    .addColumn('updated_ms', 'bigint', (c) => c.notNull())
    .addColumn('blocked_until_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('upstream_budgets_pk', ['tenant_id', 'api'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upstream_budgets').execute();
  await db.schema.dropTable('collection_schedules').execute();
}
