import { sql } from 'kysely';
import type { ParentRow } from '../../core/inventory.ts';
import type { ParentStream, StreamName, StreamRecords } from '../../sources/index.ts';
import type { Executor } from '../db.ts';
import type { InventoryTable } from '../schema.ts';
import { isEstateStream, mappingOf, type TableMapping } from '../stream-tables.ts';

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

/** Rows per INSERT statement: keeps bound parameters far below SQLite's 32,766 and PostgreSQL's 65,535. */
const CHUNK = 200;

/**
 * Upserts records of one stream, stamping `last_seen_run` and clearing `deleted_at`; `first_seen_at` is kept.
 * Records repeated inside one batch (an upstream page overlap) keep the last copy.
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
  const mapping = mappingOf(stream);
  const byKey = new Map<string, Record<string, unknown>>();
  for (const r of records) {
    const row = {
      integration_id: integrationId,
      ...mapping.toRow(r),
      raw: JSON.stringify(r.raw),
      first_seen_at: now,
      last_seen_at: now,
      last_seen_run: runId,
      deleted_at: null,
    };
    byKey.set(mapping.key.map((k) => String(row[k as keyof typeof row])).join('\u0000'), row);
  }
  const rows = [...byKey.values()];
  const updateColumns = Object.keys(rows[0]!).filter((c) => c !== 'integration_id' && c !== 'first_seen_at' && !mapping.key.includes(c));
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      .insertInto(mapping.table as any)
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc
          .columns(['integration_id', ...mapping.key] as never)
          .doUpdateSet(Object.fromEntries(updateColumns.map((c) => [c, sql.ref(`excluded.${c}`)])) as never),
      )
      .execute();
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
 * small parents (groups' ids, environments, agents) in one page.
 */
export async function* parentPages(db: Executor, integrationId: string, parent: ParentStream, pageSize = 5000): AsyncGenerator<ParentRow[]> {
  if (isEstateStream(parent) || parent === 'users') {
    for (let after: string | null = null; ;) {
      const page: ParentRow[] = await parentPage(db, integrationId, parent, after, pageSize);
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

/** One keyset page of users or estate-object parents after `afterId`. */
async function parentPage(db: Executor, integrationId: string, parent: ParentStream, afterId: string | null, limit: number): Promise<ParentRow[]> {
  if (parent === 'users') {
    let q = db
      .selectFrom('directory_users')
      .select(['id', 'display_name', 'user_principal_name', 'user_type', 'account_enabled', 'raw'])
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
