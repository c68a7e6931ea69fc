import type { Kysely } from 'kysely';

/**
 * Posture history (issue 21, the dashboard's posture score and its trend): `check_results` holds only each check's
 * latest results, so every evaluation also records its counts for the day (UTC) it ran in `posture_days`, one row per
 * integration and day, the day's last evaluation winning: `passed`, `failed` and `not_evaluated` results (check ×
 * resource or scope), and `evaluated_at` (ISO 8601 UTC).
 * Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('posture_days')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('passed', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('not_evaluated', 'integer', (c) => c.notNull())
    .addColumn('evaluated_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('posture_days_pk', ['integration_id', 'day'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('posture_days').execute();
}
