import { promisify } from 'node:util';
import { brotliCompress, constants } from 'node:zlib';
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Audit storage built for volume (issue 5's 50,000 records/s):
 * - raw records move out of the event rows into compressed segments (`audit_raw_segments`: one content blob's text
 *   as received, Brotli quality 1), and each event keeps `raw_segment_id` + `raw_index`;
 * - the event key becomes (integration_id, creation_time, id): records arrive roughly in time order, so the key index
 *   grows at its end instead of at a random GUID position (the random key cost one page write per row on SQLite). A
 *   duplicate delivery is the same record, so it has the same `CreationTime` and `Id`, and is still dropped;
 * - one more index, (integration_id, ingested_at), for the detections over newly stored events. Queries by time (and
 *   by operation or user within a time range) use the key; an index per operation cost ≈ 15 % of the insert rate;
 * - `audit_user_ips`: the client IPs each user's activity came from (first and last seen), kept by the detection
 *   runner so "an IP never seen for the user" does not rescan the history;
 * - `detection_watermarks`: per integration, the `ingested_at` up to which the detections have evaluated events, so
 *   events stored by a run whose detections never ran (crash, stop) are evaluated by the next one.
 * Rows of 0004 are carried over (their raw text becomes segments of up to 500 records). Frozen.
 */

const compress = promisify(brotliCompress);
const BATCH = 500;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema
    .createTable('audit_raw_segments')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('content_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('content_id', 'text')
    .addColumn('codec', 'varchar(16)', (c) => c.notNull())
    .addColumn('records', 'integer', (c) => c.notNull())
    .addColumn('data', binary, (c) => c.notNull())
    .addColumn('stored_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_raw_segments_pk', ['integration_id', 'id'])
    .execute();

  await db.schema
    .createTable('audit_user_ips')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('user_key', 'varchar(320)', (c) => c.notNull())
    .addColumn('client_ip', 'varchar(64)', (c) => c.notNull())
    .addColumn('first_seen', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_user_ips_pk', ['integration_id', 'user_key', 'client_ip'])
    .execute();

  await db.schema
    .createTable('detection_watermarks')
    .addColumn('integration_id', 'varchar(64)', (c) => c.primaryKey().references('integrations.id').onDelete('cascade'))
    .addColumn('evaluated_through', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit_events_v2')
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
    .addColumn('raw_segment_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('raw_index', 'integer', (c) => c.notNull())
    .addColumn('ingested_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_events_key', ['integration_id', 'creation_time', 'id'])
    .execute();

  // Carry 0004's rows over, raw text into segments of up to BATCH records.
  const now = new Date().toISOString();
  let after: { integration_id: string; id: string } | undefined;
  let n = 0;
  for (;;) {
    let q = db.selectFrom('audit_events').selectAll().orderBy('integration_id').orderBy('id').limit(BATCH);
    if (after) {
      const a = after;
      q = q.where((eb) => eb.or([eb('integration_id', '>', a.integration_id), eb.and([eb('integration_id', '=', a.integration_id), eb('id', '>', a.id)])]));
    }
    const rows = (await q.execute()) as Record<string, unknown>[];
    if (rows.length === 0) break;
    after = rows.at(-1) as { integration_id: string; id: string };
    const byIntegration = new Map<string, Record<string, unknown>[]>();
    for (const r of rows) byIntegration.set(r.integration_id as string, [...(byIntegration.get(r.integration_id as string) ?? []), r]);
    for (const [integrationId, list] of byIntegration) {
      const segmentId = `seg_migrated_${String(++n).padStart(8, '0')}`;
      const text = `[${list.map((r) => r.raw as string).join(',')}]`;
      const data = await compress(Buffer.from(text, 'utf8'), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
      await db
        .insertInto('audit_raw_segments')
        .values({
          integration_id: integrationId,
          id: segmentId,
          content_type: list[0]!.content_type,
          content_id: null,
          codec: 'br',
          records: list.length,
          data,
          stored_at: now,
        })
        .execute();
      await db
        .insertInto('audit_events_v2')
        .values(list.map(({ raw: _raw, ...r }, i) => ({ ...r, raw_segment_id: segmentId, raw_index: i })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }
  await db.schema.dropTable('audit_events').execute();
  await db.schema.alterTable('audit_events_v2').renameTo('audit_events').execute();
  await db.schema.createIndex('audit_events_ingested_idx').on('audit_events').columns(['integration_id', 'ingested_at']).execute();
  // The IPs of the history carried over (the runner keeps the table from here on).
  await sql`insert into audit_user_ips (integration_id, user_key, client_ip, first_seen, last_seen)
    select integration_id, lower(user_id), client_ip, min(creation_time), max(creation_time) from audit_events
    where user_id is not null and client_ip is not null group by integration_id, lower(user_id), client_ip`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(_db: Kysely<any>): Promise<void> {
  throw new Error('Migration 0005_audit_segments cannot be reverted: raw audit records now live in compressed segments. Restore a backup taken before it.');
}
