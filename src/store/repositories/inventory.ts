import { CompiledQuery, sql } from 'kysely';
import type { ParentRow } from '../../core/inventory.ts';
import type { ParentStream, StreamName, StreamRecords } from '../../sources/index.ts';
import type { Executor } from '../db.ts';
import type { InventoryTable } from '../schema.ts';
import { isEstateStream, mappingOf, type TableMapping } from '../stream-tables.ts';
import { storableText } from '../text.ts';

/**
 * Inventory repositories: idempotent bulk upserts stamped with the run that saw each object, marking of objects a
 * complete run did not see (kept as history with `deleted_at`), and the reads checks use.
 * Model: cloudquery plugin-sdk `delete-stale` (stamp a run id, then mark what was not seen).
 */

const PARENT_TABLES: Record<'groups' | 'environments' | 'users' | 'agents', InventoryTable> = {
  groups: 'directory_groups',
  environments: 'environments',
  users: 'directory_users',
  agents: 'agents',
};

/**
 * Rows per INSERT statement: a batch is written in statements of these sizes, largest first (a 999-record page: four
 * of 200, four of 40, four of 8 and seven of 1), so each table has at most four statement texts and SQLite reuses
 * their prepared statements (store/db.ts `cachingStatements`). 200 rows keep bound parameters far below SQLite's
 * 32,766 and PostgreSQL's 65,535.
 */
const CHUNKS = [200, 40, 8, 1] as const;

/** Columns an upsert writes after the mapping's own: the raw record and the run stamps. */
const STAMP_COLUMNS = ['raw', 'first_seen_at', 'last_seen_at', 'last_seen_run', 'deleted_at'];

/** Upsert statement texts by dialect, table and row count (built once each; estate streams share theirs). */
const upsertSql = new Map<string, string>();

/**
 * The text of the upsert of `rows` rows into a mapping's table: `insert … values (…), (…) on conflict (integration_id,
 * key…) do update set` every column but integration_id, the key and `first_seen_at` to the new row's value.
 * Placeholders are `?` (SQLite) or `$1, $2 …` (PostgreSQL). Source: sqlite.org/lang_upsert.html,
 * postgresql.org/docs/current/sql-insert.html (ON CONFLICT, EXCLUDED).
 */
function upsertStatement(mapping: TableMapping<unknown>, rows: number, numbered: boolean): string {
  const id = `${numbered ? 'pg' : 'sqlite'}\u0000${mapping.table}\u0000${rows}`;
  let text = upsertSql.get(id);
  if (text === undefined) {
    const columns = ['integration_id', ...mapping.columns, ...STAMP_COLUMNS];
    let p = 0;
    const row = () => `(${columns.map(() => (numbered ? `$${++p}` : '?')).join(', ')})`;
    const values = Array.from({ length: rows }, row).join(', ');
    const updates = columns
      .filter((c) => c !== 'integration_id' && c !== 'first_seen_at' && !mapping.key.includes(c))
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    text = `insert into ${mapping.table} (${columns.join(', ')}) values ${values} on conflict (${['integration_id', ...mapping.key].join(', ')}) do update set ${updates}`;
    upsertSql.set(id, text);
  }
  return text;
}

/** Whether an executor's dialect numbers its placeholders (PostgreSQL `$1`) rather than writing `?` (SQLite). */
const numberedPlaceholders = new WeakMap<Executor, boolean>();

function numbered(db: Executor): boolean {
  let v = numberedPlaceholders.get(db);
  if (v === undefined) numberedPlaceholders.set(db, (v = sql`${0}`.compile(db).sql !== '?'));
  return v;
}

/** The last copy of each key among `records`, in their order. */
function lastCopies<R>(mapping: TableMapping<R>, records: R[]): R[] {
  const last = new Map<string, number>();
  const keys: string[] = [];
  for (let i = 0; i < records.length; i++) last.set((keys[i] = mapping.keyOf(records[i]!)), i);
  return last.size === records.length ? records : records.filter((_, i) => last.get(keys[i]!) === i);
}

/**
 * Upserts records of one stream, stamping `last_seen_run` and clearing `deleted_at`; `first_seen_at` is kept.
 * Records repeated inside one batch (an upstream page overlap) keep the last copy. Statements of at most 200 rows,
 * their text built once per table and size and their parameters bound by position (no row objects; on SQLite the
 * prepared statements are reused, see store/db.ts `cachingStatements`). Text columns get U+0000 as U+FFFD
 * ({@link storableText}: the parameters do not pass Kysely's StorableTextPlugin); `raw` is `JSON.stringify(raw)`, which
 * holds no U+0000 (JSON writes it `\u0000`).
 */
export async function upsertRecords<S extends StreamName>(
  db: Executor,
  stream: S,
  integrationId: string,
  runId: string,
  records: StreamRecords[S][],
  now: string,
): Promise<void> {
  if (records.length === 0) return;
  const mapping = mappingOf(stream) as TableMapping<StreamRecords[S]>;
  const pg = numbered(db);
  // SQLite applies a statement's rows in order, a later copy updating the row an earlier one inserted; PostgreSQL
  // refuses a statement that would update a row twice ("ON CONFLICT DO UPDATE command cannot affect row a second
  // time"): it gets the last copy of each key only.
  const rows = pg ? lastCopies(mapping, records) : records;
  let at = 0;
  for (const size of CHUNKS) {
    const text = upsertStatement(mapping as TableMapping<unknown>, size, pg);
    for (; rows.length - at >= size; at += size) {
      const params: unknown[] = [];
      for (let i = at; i < at + size; i++) {
        const r = rows[i]!;
        params.push(integrationId);
        const first = params.length;
        mapping.write(r, params);
        for (let k = first; k < params.length; k++) params[k] = storableText(params[k]);
        params.push(JSON.stringify(r.raw), now, now, runId, null);
      }
      await db.executeQuery(CompiledQuery.raw(text, params));
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function liveRows(db: Executor, mapping: TableMapping<unknown>, integrationId: string, now: string): any {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const q = (db as any).updateTable(mapping.table).set({ deleted_at: now }).where('integration_id', '=', integrationId).where('deleted_at', 'is', null);
  return mapping.discriminator ? q.where('stream', '=', mapping.discriminator) : q;
}

/**
 * Marks as deleted the live rows of a stream that run `runId` did not see. For child streams, only within the
 * given completed slices (parent keys), plus rows whose parent is itself gone (`parent` names the parent stream of
 * an estate stream; the first six know theirs). Returns the number of rows marked.
 */
export async function markUnseen(
  db: Executor,
  stream: StreamName,
  integrationId: string,
  runId: string,
  completedSlices: string[] | 'all',
  now: string,
  parent?: ParentStream,
): Promise<number> {
  const mapping = mappingOf(stream) as TableMapping<unknown>;
  let marked = 0;
  const base = () => liveRows(db, mapping, integrationId, now);
  if (completedSlices === 'all' || !mapping.sliceColumn) {
    const r = await base().where('last_seen_run', '!=', runId).executeTakeFirst();
    return Number(r.numUpdatedRows ?? 0);
  }
  for (let i = 0; i < completedSlices.length; i += 500) {
    const r = await base()
      .where('last_seen_run', '!=', runId)
      .where(mapping.sliceColumn, 'in', completedSlices.slice(i, i + 500))
      .executeTakeFirst();
    marked += Number(r.numUpdatedRows ?? 0);
  }
  if (parent && isEstateStream(parent)) {
    // Rows whose estate parent is gone (or deleted).
    const r = await base()
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      .where(mapping.sliceColumn, 'not in', (qb: any) =>
        qb.selectFrom('estate_objects').select('id').where('integration_id', '=', integrationId).where('stream', '=', parent).where('deleted_at', 'is', null),
      )
      .executeTakeFirst();
    return marked + Number(r.numUpdatedRows ?? 0);
  }
  const parentTable = mapping.parentTable ?? (parent ? PARENT_TABLES[parent as keyof typeof PARENT_TABLES] : undefined);
  if (parentTable) {
    const r = await base()
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      .where(mapping.sliceColumn, 'not in', (qb: any) =>
        qb.selectFrom(parentTable).select('id').where('integration_id', '=', integrationId).where('deleted_at', 'is', null),
      )
      .executeTakeFirst();
    marked += Number(r.numUpdatedRows ?? 0);
  }
  return marked;
}

/**
 * Marks rows deleted by id (a delta round's `@removed` entries); history is kept. Memberships, keyed (group, member),
 * take `{groupId}/{memberId}` for one removed member and `{groupId}` alone for a deleted group (all its members).
 * @returns how many live rows were marked.
 */
export async function markDeleted(db: Executor, stream: StreamName, integrationId: string, ids: string[], now: string): Promise<number> {
  const mapping = mappingOf(stream) as TableMapping<unknown>;
  let marked = 0;
  if (stream === 'memberships') {
    const groups = ids.filter((id) => !id.includes('/'));
    const pairs = ids.filter((id) => id.includes('/')).map((id) => id.split('/', 2) as [string, string]);
    for (let i = 0; i < groups.length; i += 500) {
      const r = await liveRows(db, mapping, integrationId, now)
        .where('group_id', 'in', groups.slice(i, i + 500))
        .executeTakeFirst();
      marked += Number(r.numUpdatedRows ?? 0);
    }
    for (let i = 0; i < pairs.length; i += 200) {
      const chunk = pairs.slice(i, i + 200);
      const r = await liveRows(db, mapping, integrationId, now)
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        .where((eb: any) => eb.or(chunk.map(([g, m]) => eb.and([eb('group_id', '=', g), eb('member_id', '=', m)]))))
        .executeTakeFirst();
      marked += Number(r.numUpdatedRows ?? 0);
    }
    return marked;
  }
  for (let i = 0; i < ids.length; i += 500) {
    const r = await liveRows(db, mapping, integrationId, now)
      .where('id', 'in', ids.slice(i, i + 500))
      .executeTakeFirst();
    marked += Number(r.numUpdatedRows ?? 0);
  }
  return marked;
}

/**
 * Number of live (not deleted) rows of each of these streams (the registry's names: `STREAM_RUN_ORDER`), in their order.
 */
export async function countLive<S extends StreamName>(db: Executor, integrationId: string, streams: readonly S[]): Promise<Record<S, number>> {
  const out = {} as Record<S, number>;
  for (const stream of streams) out[stream] = 0;
  for (const stream of streams) {
    if (isEstateStream(stream)) continue;
    const mapping = mappingOf(stream);
    const row = await db
      .selectFrom(mapping.table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('integration_id', '=', integrationId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    out[stream] = Number(row?.n ?? 0);
  }
  const estate = await db
    .selectFrom('estate_objects')
    .select(['stream', (eb) => eb.fn.countAll<number>().as('n')])
    .where('integration_id', '=', integrationId)
    .where('deleted_at', 'is', null)
    .groupBy('stream')
    .execute();
  for (const r of estate) if (Object.hasOwn(out, r.stream) && isEstateStream(r.stream)) out[r.stream as S] = Number(r.n);
  return out;
}

/** Live environments of an integration with these ids (any case); ids not stored (or deleted) are absent. */
export async function getEnvironments(db: Executor, integrationId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('environments')
    .select(['id', 'display_name', 'sku'])
    .where('integration_id', '=', integrationId)
    .where('deleted_at', 'is', null)
    .where('id', 'in', [...new Set(ids)].slice(0, 500))
    .execute();
}

/** Live environments of an integration. */
export async function listEnvironments(db: Executor, integrationId: string) {
  return db.selectFrom('environments').selectAll().where('integration_id', '=', integrationId).where('deleted_at', 'is', null).orderBy('id').execute();
}

/** Live groups' ids of an integration (slices of the memberships stream). */
async function listGroupIds(db: Executor, integrationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('directory_groups')
    .select('id')
    .where('integration_id', '=', integrationId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Live agents of an integration. */
export async function listAgents(db: Executor, integrationId: string) {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('deleted_at', 'is', null)
    .orderBy('environment_id')
    .orderBy('id')
    .execute();
}

/** Live Dataverse users of an integration. */
export async function listDataverseUsers(db: Executor, integrationId: string) {
  return db.selectFrom('dataverse_users').selectAll().where('integration_id', '=', integrationId).where('deleted_at', 'is', null).execute();
}

/**
 * Parent rows a child stream is sliced by: groups (ids), environments, users, agents, or the live objects of an
 * estate stream (`display_name` = its name, `raw` = its attrs JSON), ordered by id, page by page: users and estate
 * objects in keyset pages of `pageSize` (a 50,000-user directory is never held whole with its Graph JSON); the
 * small parents (groups' ids, environments, agents) in one page. `options.raw` false reads users without their Graph
 * JSON (`raw`), for slices built from their keys alone.
 */
export async function* parentPages(
  db: Executor,
  integrationId: string,
  parent: ParentStream,
  pageSize = 5000,
  options: { raw?: boolean } = {},
): AsyncGenerator<ParentRow[]> {
  if (isEstateStream(parent) || parent === 'users') {
    for (let after: string | null = null; ;) {
      const page: ParentRow[] = await parentPage(db, integrationId, parent, after, pageSize, options.raw ?? true);
      if (page.length > 0) yield page;
      if (page.length < pageSize) return;
      after = page.at(-1)!.id;
    }
  }
  switch (parent as 'groups' | 'environments' | 'agents') {
    case 'groups':
      yield (await listGroupIds(db, integrationId)).map((id) => ({ id }));
      return;
    case 'environments':
      yield await listEnvironments(db, integrationId);
      return;
    case 'agents': {
      const envs = new Map((await listEnvironments(db, integrationId)).map((e) => [e.id, e.dataverse_url]));
      yield (await listAgents(db, integrationId)).map((a) => ({
        id: a.id,
        display_name: a.name,
        environment_id: a.environment_id,
        dataverse_url: envs.get(a.environment_id) ?? null,
      }));
    }
  }
}

/** One keyset page of users or estate-object parents after `afterId`; users without their Graph JSON unless `raw`. */
async function parentPage(
  db: Executor,
  integrationId: string,
  parent: ParentStream,
  afterId: string | null,
  limit: number,
  raw: boolean,
): Promise<ParentRow[]> {
  if (parent === 'users') {
    let q = db
      .selectFrom('directory_users')
      .select(
        raw
          ? ['id', 'display_name', 'user_principal_name', 'user_type', 'account_enabled', 'raw']
          : ['id', 'display_name', 'user_principal_name', 'user_type', 'account_enabled'],
      )
      .where('integration_id', '=', integrationId)
      .where('deleted_at', 'is', null);
    if (afterId !== null) q = q.where('id', '>', afterId);
    return q.orderBy('id').limit(limit).execute();
  }
  let q = db
    .selectFrom('estate_objects')
    .select(['id', 'name', 'attrs'])
    .where('integration_id', '=', integrationId)
    .where('stream', '=', parent)
    .where('deleted_at', 'is', null);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return (await q.orderBy('id').limit(limit).execute()).map((r) => ({ id: r.id, display_name: r.name, raw: r.attrs }));
}

/**
 * Live objects of one estate stream, `attrs` parsed, ordered by id.
 * @returns `{ id, sliceKey, name, attrs, firstSeenAt, lastSeenAt }` rows (timestamps ISO 8601 UTC).
 */
export async function listEstateObjects<A extends object = Record<string, unknown>>(db: Executor, integrationId: string, stream: string) {
  return (await estateQuery(db, integrationId, stream).execute()).map((r) => estateRow<A>(r));
}

/**
 * One page of the live objects of an estate stream, ordered by id: the objects after `afterId` (null: from the
 * start), at most `limit` of them. Keyset paging, so a large stream is read without holding it (checks' `paged`).
 */
export async function pageEstateObjects<A extends object = Record<string, unknown>>(
  db: Executor,
  integrationId: string,
  stream: string,
  afterId: string | null,
  limit: number,
) {
  let q = estateQuery(db, integrationId, stream);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return (await q.limit(limit).execute()).map((r) => estateRow<A>(r));
}

/**
 * Live objects of one estate stream with these ids (any slice), `attrs` parsed; ids not stored (or deleted) are
 * absent. Reads at most 500 ids per query.
 */
export async function getEstateObjects<A extends object = Record<string, unknown>>(db: Executor, integrationId: string, stream: string, ids: string[]) {
  const out: ReturnType<typeof estateRow<A>>[] = [];
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    out.push(
      ...(
        await estateQuery(db, integrationId, stream)
          .where('id', 'in', unique.slice(i, i + 500))
          .execute()
      ).map((r) => estateRow<A>(r)),
    );
  }
  return out;
}

function estateQuery(db: Executor, integrationId: string, stream: string) {
  return db
    .selectFrom('estate_objects')
    .select(['id', 'slice_key', 'name', 'attrs', 'first_seen_at', 'last_seen_at'])
    .where('integration_id', '=', integrationId)
    .where('stream', '=', stream)
    .where('deleted_at', 'is', null)
    .orderBy('id');
}

function estateRow<A>(r: { id: string; slice_key: string; name: string | null; attrs: string; first_seen_at: string; last_seen_at: string }) {
  return { id: r.id, sliceKey: r.slice_key, name: r.name, attrs: JSON.parse(r.attrs) as A, firstSeenAt: r.first_seen_at, lastSeenAt: r.last_seen_at };
}

/** Every live directory user of an integration (the fields checks read). */
export async function listAllUsers(db: Executor, integrationId: string) {
  return db
    .selectFrom('directory_users')
    .select(['id', 'display_name', 'user_principal_name', 'account_enabled', 'user_type'])
    .where('integration_id', '=', integrationId)
    .where('deleted_at', 'is', null)
    .execute();
}
