import type { Kysely } from 'kysely';

/**
 * Findings lifecycle (issue 6): suppressions with a reason, an author and an optional expiry, and the history of each
 * finding (opened, resolved, reopened, suppressed, unsuppressed, suppression expired). Existing findings get an
 * `opened` entry at their first-seen time (and `resolved` when they are resolved). Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('finding_suppressions')
    .addColumn('finding_id', 'varchar(64)', (c) => c.primaryKey().references('findings.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('author', 'varchar(320)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('finding_history')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('finding_id', 'varchar(64)', (c) => c.notNull().references('findings.id').onDelete('cascade'))
    .addColumn('at', 'varchar(32)', (c) => c.notNull())
    .addColumn('event', 'varchar(32)', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('finding_history_finding_idx').on('finding_history').columns(['finding_id', 'at']).execute();
  const rows = (await db.selectFrom('findings').select(['id', 'first_seen_at', 'status', 'resolved_at']).execute()) as {
    id: string;
    first_seen_at: string;
    status: string;
    resolved_at: string | null;
  }[];
  let n = 0;
  const history = rows.flatMap((f) => [
    { id: `fhe_migrated_${String(++n).padStart(10, '0')}`, finding_id: f.id, at: f.first_seen_at, event: 'opened', detail: null },
    ...(f.status === 'resolved' && f.resolved_at
      ? [{ id: `fhe_migrated_${String(++n).padStart(10, '0')}`, finding_id: f.id, at: f.resolved_at, event: 'resolved', detail: null }]
      : []),
  ]);
  for (let i = 0; i < history.length; i += 500)
    await db
      .insertInto('finding_history')
      .values(history.slice(i, i + 500))
      .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('finding_history').execute();
  await db.schema.dropTable('finding_suppressions').execute();
}
