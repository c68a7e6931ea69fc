import { sql, type RawBuilder } from 'kysely';
import type { StreamName } from '../../sources/index.ts';
import type { Executor } from '../db.ts';
import { listedTableOf, type ListedTable } from '../stream-tables.ts';

/**
 * Read queries of the API and portal: inventory tables, findings, alerts and events, each filtered to a set of
 * integrations (the caller's organization's) and read in keyset pages (no OFFSET: page N costs what page 1 costs).
 * Model: GitHub REST API cursor pagination (`after` cursor, `per_page`).
 */

/**
 * One live inventory object as the API lists it; `attributes` holds the estate object's normalised fields, or a core
 * table's own columns in camelCase; `environmentName` the display name of its environment (the same integration's
 * `environments` row; null when not collected or the kind has no environment).
 */
export interface InventoryItem {
  integrationId: string;
  id: string;
  name: string | null;
  environmentId: string | null;
  environmentName: string | null;
  attributes: Record<string, unknown>;
  firstSeenAt: string;
  lastSeenAt: string;
  /** The stored upstream object (JSON text) of a core table's row (an environment's BAP object), null for estate objects. */
  raw: string | null;
}

/** The orders the inventory list offers (the API's `sort`). */
export const INVENTORY_SORTS = ['name', 'environment', 'firstSeenAt', 'lastSeenAt'] as const;
/** One of {@link INVENTORY_SORTS}. */
export type InventorySort = (typeof INVENTORY_SORTS)[number];

/** Filters of {@link pageInventory} and {@link countInventory}. */
export interface InventoryFilterQuery {
  integrationIds: string[];
  environmentId?: string | undefined;
  /** Case-insensitive substring of the name or the id (a picker shows the name of the id it holds). */
  q?: string | undefined;
}

/** Filters, order and position of {@link pageInventory}. */
export interface InventoryQuery extends InventoryFilterQuery {
  /** @default 'name' */
  sort?: InventorySort | undefined;
  /** @default 'asc' */
  order?: 'asc' | 'desc' | undefined;
  /** Keyset position: the sort value, integration id and id of the last item of the previous page. */
  after?: { v: string; integrationId: string; id: string } | undefined;
  limit: number;
}

const INTERNAL = new Set([
  'integration_id',
  'raw',
  'first_seen_at',
  'last_seen_at',
  'last_seen_run',
  'deleted_at',
  'attrs',
  'stream',
  'slice_key',
  'id',
  'sort_value',
  'environment_name',
]);

/** The listed table of a stream as `t`, its live rows of `query`'s integrations, environment and name filter. */
function filteredInventory(db: Executor, m: ListedTable, query: InventoryFilterQuery) {
  // The table is chosen from a fixed map, never from input: the dynamic reference is safe.
  let q = db
    .selectFrom(`${m.table} as t` as 'estate_objects as t')
    .where('t.integration_id', 'in', query.integrationIds)
    .where('t.deleted_at', 'is', null);
  if (m.stream) q = q.where('t.stream', '=', m.stream);
  if (query.environmentId && m.environment) q = q.where(sql.ref(`t.${m.environment}`), '=', query.environmentId);
  if (query.q) {
    // The name or the id: a picker shows the name of an id it was given (a filter kept in a URL).
    const p = likePattern(query.q.toLowerCase());
    q = q.where(sql<boolean>`(lower(${sql.ref(`t.${m.name}`)}) like ${p} escape '\\' or lower(t.id) like ${p} escape '\\')`);
  }
  return q;
}

/**
 * The value each order of the inventory list sorts on (over the listed table `t` and its environment `e`), never
 * null so that keyset comparisons hold: the name ignoring case (unnamed objects first), the environment's name (else
 * its id) ignoring case, the first and last time a collection saw the object.
 */
function inventorySortValue(sort: InventorySort, m: ListedTable): RawBuilder<string> {
  switch (sort) {
    case 'name':
      return sql<string>`lower(coalesce(${sql.ref(`t.${m.name}`)}, ''))`;
    case 'environment':
      return m.environment ? sql<string>`lower(coalesce(e.display_name, ${sql.ref(`t.${m.environment}`)}, ''))` : sql<string>`''`;
    case 'firstSeenAt':
      return sql<string>`t.first_seen_at`;
    case 'lastSeenAt':
      return sql<string>`t.last_seen_at`;
  }
}

/** How many live objects of an inventory kind the filters of `query` select. */
export async function countInventory(db: Executor, listed: { stream: StreamName; environment: boolean }, query: InventoryFilterQuery): Promise<number> {
  if (query.integrationIds.length === 0) return 0;
  const row = await filteredInventory(db, listedTableOf(listed.stream, listed.environment), query)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * One page of live objects of an inventory kind in the order asked (by name, A to Z, by default), ties broken by
 * integration id then id in the same direction, each with its environment's name (a left join on the same
 * integration's `environments` row, so an organization never sees another's names).
 * @param listed the stream the kind lists, and whether its objects belong to an environment (`INVENTORY`, `sources/index.ts`).
 * @returns the items, whether more follow, and the sort value of the last item (the next cursor's).
 * @throws Error when the stream's table cannot be listed (see `listedTableOf`).
 */
export async function pageInventory(
  db: Executor,
  listed: { stream: StreamName; environment: boolean },
  query: InventoryQuery,
): Promise<{ items: InventoryItem[]; more: boolean; lastValue: string | null }> {
  if (query.integrationIds.length === 0) return { items: [], more: false, lastValue: null };
  const m = listedTableOf(listed.stream, listed.environment);
  const value = inventorySortValue(query.sort ?? 'name', m);
  const dir = query.order ?? 'asc';
  const cmp = dir === 'desc' ? '<' : '>';
  let q = filteredInventory(db, m, query).selectAll('t').select(value.as('sort_value'));
  if (m.environment) {
    const env = m.environment;
    q = q
      .leftJoin('environments as e', (j) => j.onRef('e.integration_id', '=', 't.integration_id').on(sql<boolean>`e.id = ${sql.ref(`t.${env}`)}`))
      .select('e.display_name as environment_name') as unknown as typeof q;
  }
  if (query.after) {
    const a = query.after;
    q = q.where((eb) =>
      eb.or([
        eb(value, cmp, a.v),
        eb.and([eb(value, '=', a.v), eb('t.integration_id', cmp, a.integrationId)]),
        eb.and([eb(value, '=', a.v), eb('t.integration_id', '=', a.integrationId), eb('t.id', cmp, a.id)]),
      ]),
    );
  }
  const rows = (await q
    .orderBy(value, dir)
    .orderBy('t.integration_id', dir)
    .orderBy('t.id', dir)
    .limit(query.limit + 1)
    .execute()) as unknown as Record<string, unknown>[];
  const more = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  return {
    more,
    lastValue: page.length ? String(page.at(-1)!.sort_value) : null,
    items: page.map((r) => {
      const attributes: Record<string, unknown> = m.table === 'estate_objects' ? (JSON.parse(r.attrs as string) as Record<string, unknown>) : {};
      if (m.table !== 'estate_objects') for (const [k, v] of Object.entries(r)) if (!INTERNAL.has(k)) attributes[camel(k)] = v;
      const env = m.environment ? (r[m.environment] as string | null) : ((attributes.environmentId as string | undefined) ?? null);
      return {
        integrationId: r.integration_id as string,
        id: r.id as string,
        name: (r[m.name] as string | null) ?? null,
        environmentId: env && env !== '*' ? env : null,
        environmentName: (r.environment_name as string | null | undefined) ?? null,
        attributes,
        firstSeenAt: r.first_seen_at as string,
        lastSeenAt: r.last_seen_at as string,
        raw: m.table === 'estate_objects' ? null : ((r.raw as string | null) ?? null),
      };
    }),
  };
}

/** `%text%` with LIKE's wildcards in `text` escaped by a backslash (used with `escape '\\'`, both dialects). */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function camel(column: string): string {
  return column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The orders the findings list offers (the API's `sort`). */
export const FINDING_SORTS = ['severity', 'check', 'resource', 'status', 'firstSeenAt', 'lastSeenAt'] as const;
/** One of {@link FINDING_SORTS}. */
export type FindingSort = (typeof FINDING_SORTS)[number];

/**
 * The value each order of the findings list sorts on (over `findings as f` left-joined to its active suppression
 * `s`). Severity sorts by weight (critical 4 … info and unknown 0, so descending is most severe first); status by how
 * pressing it is (open 0, suppressed 1, resolved 2); a resource by its name, or its id when it has none, ignoring case.
 */
const FINDING_SORT_VALUE: Record<FindingSort, RawBuilder<string | number>> = {
  severity: sql<number>`case f.severity when 'critical' then 4 when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end`,
  check: sql<string>`f.check_id`,
  resource: sql<string>`lower(coalesce(f.resource_name, f.resource_id))`,
  status: sql<number>`case when s.finding_id is not null then 1 when f.status = 'open' then 0 else 2 end`,
  firstSeenAt: sql<string>`f.first_seen_at`,
  lastSeenAt: sql<string>`f.last_seen_at`,
};

/** Filters, order and position of {@link pageFindings}. */
export interface FindingQuery {
  integrationIds: string[];
  severity?: string | undefined;
  /** `open` (and not suppressed), `resolved`, `suppressed` (an active suppression), or all. */
  status?: 'open' | 'resolved' | 'suppressed' | undefined;
  /**
   * With an active suppression (true) or without (false), whatever the status says of it: `status` open with
   * `suppressed` true lists the open findings that are suppressed. Absent: as `status` says.
   */
  suppressed?: boolean | undefined;
  checkId?: string | undefined;
  resourceId?: string | undefined;
  /** Findings on any of these resources. */
  resourceIds?: string[] | undefined;
  /**
   * Findings of this Power Platform environment: the environment itself (resource type `environment`) or a resource
   * whose detail names it (`"environmentId":"<id>"`, as the checks write it for agents).
   */
  environmentId?: string | undefined;
  /**
   * Case-insensitive text in the check id, resource name or id, the detail (the check's reason) or the suppression's
   * reason; findings of the checks in `qCheckIds` (those whose title matches, from the catalogue) match too.
   */
  q?: string | undefined;
  qCheckIds?: string[] | undefined;
  /** Findings first seen at or after this instant (ISO 8601 UTC, as stored: compared as text). */
  since?: string | undefined;
  /** Findings first seen before this instant (ISO 8601 UTC; exclusive). */
  until?: string | undefined;
  /** @default 'severity' */
  sort?: FindingSort | undefined;
  /** @default 'desc' */
  order?: 'asc' | 'desc' | undefined;
  /** Keyset position: the sort value and id of the last item of the previous page. */
  after?: { v: string | number; id: string } | undefined;
  limit: number;
  /** The instant suppressions are judged at (ISO 8601 UTC). */
  at: string;
}

/** The filters of a {@link FindingQuery}, without its order and position. */
export type FindingFilterQuery = Omit<FindingQuery, 'sort' | 'order' | 'after' | 'limit'>;

/** Findings with their active suppression, narrowed by the filters of `query` (not its order or position). */
function filteredFindings(db: Executor, query: FindingFilterQuery) {
  let q = db
    .selectFrom('findings as f')
    .leftJoin('finding_suppressions as s', (j) =>
      j.onRef('s.finding_id', '=', 'f.id').on((eb) => eb.or([eb('s.expires_at', 'is', null), eb('s.expires_at', '>', query.at)])),
    )
    .where('f.integration_id', 'in', query.integrationIds);
  if (query.severity) q = q.where('f.severity', '=', query.severity);
  if (query.checkId) q = q.where('f.check_id', '=', query.checkId);
  if (query.resourceId) q = q.where('f.resource_id', '=', query.resourceId);
  if (query.since) q = q.where('f.first_seen_at', '>=', query.since);
  if (query.until) q = q.where('f.first_seen_at', '<', query.until);
  if (query.resourceIds) q = query.resourceIds.length ? q.where('f.resource_id', 'in', query.resourceIds) : q.where(sql<boolean>`1 = 0`);
  if (query.status === 'open') q = q.where('f.status', '=', 'open');
  if (query.status === 'resolved') q = q.where('f.status', '=', 'resolved');
  const suppressed = query.suppressed ?? (query.status === 'open' ? false : query.status === 'suppressed' ? true : undefined);
  if (query.status === 'suppressed' && query.suppressed === false) q = q.where(sql<boolean>`1 = 0`);
  if (suppressed === true) q = q.where('s.finding_id', 'is not', null);
  if (suppressed === false) q = q.where('s.finding_id', 'is', null);
  if (query.environmentId) {
    const env = query.environmentId;
    const named = likePattern(`${JSON.stringify('environmentId')}:${JSON.stringify(env)}`);
    q = q.where((eb) =>
      eb.or([eb.and([eb('f.resource_type', '=', 'environment'), eb('f.resource_id', '=', env)]), sql<boolean>`f.detail like ${named} escape '\\'`]),
    );
  }
  if (query.q) {
    const p = likePattern(query.q.toLowerCase());
    const titled = query.qCheckIds?.length ? query.qCheckIds : null;
    q = q.where((eb) =>
      eb.or([
        sql<boolean>`lower(f.check_id) like ${p} escape '\\'`,
        sql<boolean>`lower(coalesce(f.resource_name, '')) like ${p} escape '\\'`,
        sql<boolean>`lower(f.resource_id) like ${p} escape '\\'`,
        sql<boolean>`lower(coalesce(f.detail, '')) like ${p} escape '\\'`,
        sql<boolean>`lower(coalesce(s.reason, '')) like ${p} escape '\\'`,
        ...(titled ? [eb('f.check_id', 'in', titled)] : []),
      ]),
    );
  }
  return q;
}

/** How many findings the filters of `query` select (its order and position aside). */
export async function countFindings(db: Executor, query: FindingFilterQuery): Promise<number> {
  if (query.integrationIds.length === 0) return 0;
  const row = await filteredFindings(db, query)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * One page of findings in the order asked (most severe first by default), ties broken by id in the same direction,
 * each with its active suppression.
 * @returns rows with `sort_value`, the value the next cursor holds.
 */
export async function pageFindings(db: Executor, query: FindingQuery) {
  if (query.integrationIds.length === 0) return { items: [], more: false };
  const value = FINDING_SORT_VALUE[query.sort ?? 'severity'];
  const dir = query.order ?? 'desc';
  const cmp = dir === 'desc' ? '<' : '>';
  let q = filteredFindings(db, query)
    .selectAll('f')
    .select([
      's.reason as s_reason',
      's.author as s_author',
      's.expires_at as s_expires_at',
      's.created_at as s_created_at',
      's.finding_id as s_finding_id',
      value.as('sort_value'),
    ]);
  if (query.after) {
    const a = query.after;
    q = q.where((eb) => eb.or([eb(value, cmp, a.v), eb.and([eb(value, '=', a.v), eb('f.id', cmp, a.id)])]));
  }
  const rows = await q
    .orderBy(value, dir)
    .orderBy('f.id', dir)
    .limit(query.limit + 1)
    .execute();
  const more = rows.length > query.limit;
  return {
    more,
    items: rows.slice(0, query.limit).map(({ s_reason, s_author, s_expires_at, s_created_at, s_finding_id, ...f }) => ({
      ...f,
      suppression: s_finding_id ? { reason: s_reason!, author: s_author!, expires_at: s_expires_at ?? null, created_at: s_created_at! } : null,
    })),
  };
}

/**
 * Open findings by severity at the end of each of the last `days` days (UTC), from the findings' history: opened
 * and reopened steps add one, resolved steps take one away.
 * @returns `days` entries, oldest first, `date` as YYYY-MM-DD.
 */
export async function openFindingsByDay(
  db: Executor,
  integrationIds: string[],
  days: number,
  now = new Date(),
): Promise<{ date: string; counts: Record<string, number> }[]> {
  const dates: string[] = [];
  for (let i = days - 1; i >= 0; i--) dates.push(new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10));
  const running: Record<string, number> = {};
  const out = dates.map((date) => ({ date, counts: {} as Record<string, number> }));
  if (integrationIds.length > 0) {
    const day = sql<string>`substr(h.at, 1, 10)`;
    const rows = await db
      .selectFrom('finding_history as h')
      .innerJoin('findings as f', 'f.id', 'h.finding_id')
      .select([day.as('day'), 'f.severity', 'h.event', (eb) => eb.fn.countAll<number>().as('n')])
      .where('f.integration_id', 'in', integrationIds)
      .where('h.event', 'in', ['opened', 'reopened', 'resolved'])
      .groupBy([day, 'f.severity', 'h.event'])
      .orderBy(day)
      .execute();
    let i = 0;
    for (const entry of out) {
      for (; i < rows.length && rows[i]!.day <= entry.date; i++) {
        const r = rows[i]!;
        running[r.severity] = (running[r.severity] ?? 0) + (r.event === 'resolved' ? -1 : 1) * Number(r.n);
      }
      entry.counts = { ...running };
    }
  }
  return out;
}

/** Result counts of a day or a check: check × resource (or scope) results by status. */
export interface ResultCounts {
  passed: number;
  failed: number;
  notEvaluated: number;
}

/**
 * The organization's posture per day (UTC) over the last `days` days, oldest first: for each day, the sum over
 * `integrationIds` of each integration's latest recorded counts on or before that day (table `posture_days`, written
 * by every evaluation); null on a day before any integration was evaluated.
 */
export async function postureByDay(
  db: Executor,
  integrationIds: string[],
  days: number,
  now = new Date(),
): Promise<{ date: string; counts: ResultCounts | null }[]> {
  const dates: string[] = [];
  for (let i = days - 1; i >= 0; i--) dates.push(new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10));
  if (integrationIds.length === 0) return dates.map((date) => ({ date, counts: null }));
  const rows = await db
    .selectFrom('posture_days')
    .select(['integration_id', 'day', 'passed', 'failed', 'not_evaluated'])
    .where('integration_id', 'in', integrationIds)
    .where('day', '<=', dates.at(-1)!)
    .orderBy('day')
    .execute();
  const latest = new Map<string, ResultCounts>();
  let i = 0;
  return dates.map((date) => {
    for (; i < rows.length && rows[i]!.day <= date; i++) {
      const r = rows[i]!;
      latest.set(r.integration_id, { passed: Number(r.passed), failed: Number(r.failed), notEvaluated: Number(r.not_evaluated) });
    }
    if (latest.size === 0) return { date, counts: null };
    const sum: ResultCounts = { passed: 0, failed: 0, notEvaluated: 0 };
    for (const c of latest.values()) {
      sum.passed += c.passed;
      sum.failed += c.failed;
      sum.notEvaluated += c.notEvaluated;
    }
    return { date, counts: sum };
  });
}

/** The latest results of `integrationIds` counted per check: passed, failed and not evaluated. */
export async function resultsByCheck(db: Executor, integrationIds: string[]): Promise<Map<string, ResultCounts>> {
  const out = new Map<string, ResultCounts>();
  if (integrationIds.length === 0) return out;
  const rows = await db
    .selectFrom('check_results')
    .select(['check_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('integration_id', 'in', integrationIds)
    .groupBy(['check_id', 'status'])
    .execute();
  for (const r of rows) {
    const c = out.get(r.check_id) ?? { passed: 0, failed: 0, notEvaluated: 0 };
    if (r.status === 'pass') c.passed += Number(r.n);
    else if (r.status === 'fail') c.failed += Number(r.n);
    else c.notEvaluated += Number(r.n);
    out.set(r.check_id, c);
  }
  return out;
}

/** A resource a check could not evaluate (one of the first few of its group). */
export interface NotEvaluatedResource {
  resourceType: string;
  resourceId: string;
  resourceName: string | null;
}

/** Resources listed per group by {@link notEvaluated}; the count covers them all. */
export const NOT_EVALUATED_SAMPLE = 10;

/**
 * What checks could not evaluate in their latest evaluation, per integration, check and reason (the reason names the
 * gap: stream, slice, upstream code): the number of resources and the first {@link NOT_EVALUATED_SAMPLE} of them by
 * name. Results are stored with status `not_evaluated` (core `CheckStatus`).
 */
export async function notEvaluated(
  db: Executor,
  integrationIds: string[],
): Promise<{ integrationId: string; checkId: string; reason: string | null; resources: number; sample: NotEvaluatedResource[] }[]> {
  if (integrationIds.length === 0) return [];
  const rows = await db
    .selectFrom('check_results')
    .select(['integration_id', 'check_id', 'reason', (eb) => eb.fn.countAll<number>().as('n')])
    .where('integration_id', 'in', integrationIds)
    .where('status', '=', 'not_evaluated')
    .groupBy(['integration_id', 'check_id', 'reason'])
    .orderBy('integration_id')
    .orderBy('check_id')
    .orderBy('reason')
    .execute();
  const ranked = db
    .selectFrom('check_results')
    .select(['integration_id', 'check_id', 'reason', 'resource_type', 'resource_id', 'resource_name'])
    .select((eb) =>
      eb.fn
        .agg<number>('row_number')
        .over((ob) => ob.partitionBy(['integration_id', 'check_id', 'reason']).orderBy('resource_name').orderBy('resource_id'))
        .as('rn'),
    )
    .where('integration_id', 'in', integrationIds)
    .where('status', '=', 'not_evaluated')
    .as('ranked');
  const sampled = await db.selectFrom(ranked).selectAll().where('rn', '<=', NOT_EVALUATED_SAMPLE).orderBy('rn').execute();
  const key = (i: string, c: string, r: string | null) => `${i}\u0000${c}\u0000${r ?? '\u0001'}`;
  const samples = new Map<string, NotEvaluatedResource[]>();
  for (const r of sampled) {
    const k = key(r.integration_id, r.check_id, r.reason);
    samples.set(k, [...(samples.get(k) ?? []), { resourceType: r.resource_type, resourceId: r.resource_id, resourceName: r.resource_name }]);
  }
  return rows.map((r) => ({
    integrationId: r.integration_id,
    checkId: r.check_id,
    reason: r.reason,
    resources: Number(r.n),
    sample: samples.get(key(r.integration_id, r.check_id, r.reason)) ?? [],
  }));
}

/** The orders the alerts list offers (the API's `sort`). */
export const ALERT_SORTS = ['createdAt', 'severity', 'status', 'ruleId', 'title'] as const;
/** One of {@link ALERT_SORTS}. */
export type AlertSort = (typeof ALERT_SORTS)[number];

/**
 * The value each order sorts on. Severity and status sort by weight, not by name: descending severity is critical
 * first (critical 4 … info and unknown 0); ascending status is the lifecycle's order (new 0, acknowledged 1, closed 2).
 */
const ALERT_SORT_VALUE: Record<AlertSort, RawBuilder<string | number>> = {
  createdAt: sql<string>`created_at`,
  severity: sql<number>`case severity when 'critical' then 4 when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end`,
  status: sql<number>`case status when 'new' then 0 when 'acknowledged' then 1 when 'closed' then 2 else 3 end`,
  ruleId: sql<string>`rule_id`,
  title: sql<string>`title`,
};

/** Filters, order and position of {@link pageAlerts}. */
export interface AlertQuery {
  integrationIds: string[];
  status?: string | undefined;
  ruleId?: string | undefined;
  severity?: string | undefined;
  /** Alerts whose detail names this environment (`"environmentId":"<id>"`, as the detections write it). */
  environmentId?: string | undefined;
  /** Case-insensitive text in the title, rule id or detail. */
  q?: string | undefined;
  /** Alerts created at or after this instant (ISO 8601 UTC, as stored: compared as text). */
  since?: string | undefined;
  /** Alerts created before this instant (ISO 8601 UTC; exclusive). */
  until?: string | undefined;
  /** @default 'createdAt' */
  sort?: AlertSort | undefined;
  /** @default 'desc' */
  order?: 'asc' | 'desc' | undefined;
  /** Keyset position: the sort value, created_at and id of the last item of the previous page. */
  after?: { v: string | number; at: string; id: string } | undefined;
  limit: number;
}

/** The alerts of the integrations that the filters of {@link AlertQuery} select (no order, no position). */
function filteredAlerts(db: Executor, query: AlertQuery) {
  let q = db.selectFrom('alerts').where('integration_id', 'in', query.integrationIds);
  if (query.status) q = q.where('status', '=', query.status);
  if (query.ruleId) q = q.where('rule_id', '=', query.ruleId);
  if (query.severity) q = q.where('severity', '=', query.severity);
  if (query.since) q = q.where('created_at', '>=', query.since);
  if (query.until) q = q.where('created_at', '<', query.until);
  if (query.environmentId)
    q = q.where(sql<boolean>`detail like ${likePattern(`${JSON.stringify('environmentId')}:${JSON.stringify(query.environmentId)}`)} escape '\\'`);
  if (query.q) {
    const p = likePattern(query.q.toLowerCase());
    q = q.where(sql<boolean>`(lower(title) like ${p} escape '\\' or lower(rule_id) like ${p} escape '\\' or lower(detail) like ${p} escape '\\')`);
  }
  return q;
}

/** How many alerts the filters of {@link AlertQuery} select, over all pages (order and position ignored). */
export async function countAlerts(db: Executor, query: Omit<AlertQuery, 'sort' | 'order' | 'after' | 'limit'>): Promise<number> {
  if (query.integrationIds.length === 0) return 0;
  const row = await filteredAlerts(db, { ...query, limit: 0 })
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * One page of alerts in the order asked (newest first by default), ties broken by creation time then id in the same
 * direction. Rows carry `sort_value`, the value the next cursor holds.
 */
export async function pageAlerts(db: Executor, query: AlertQuery) {
  if (query.integrationIds.length === 0) return { items: [], more: false };
  const value = ALERT_SORT_VALUE[query.sort ?? 'createdAt'];
  const dir = query.order ?? 'desc';
  const cmp = dir === 'desc' ? '<' : '>';
  let q = filteredAlerts(db, query).selectAll().select(value.as('sort_value'));
  if (query.after) {
    const a = query.after;
    q = q.where((eb) =>
      eb.or([
        eb(value, cmp, a.v),
        eb.and([eb(value, '=', a.v), eb('created_at', cmp, a.at)]),
        eb.and([eb(value, '=', a.v), eb('created_at', '=', a.at), eb('id', cmp, a.id)]),
      ]),
    );
  }
  const rows = await q
    .orderBy(value, dir)
    .orderBy('created_at', dir)
    .orderBy('id', dir)
    .limit(query.limit + 1)
    .execute();
  return { items: rows.slice(0, query.limit), more: rows.length > query.limit };
}

/** Filters and position of {@link pageEvents}. */
export interface EventQuery {
  integrationIds: string[];
  /** Events at or after this instant (ISO 8601 UTC). */
  since?: string | undefined;
  /** Events before this instant (ISO 8601 UTC). */
  until?: string | undefined;
  operation?: string | undefined;
  userId?: string | undefined;
  objectId?: string | undefined;
  /** Only these record `Id`s (an alert's events). */
  ids?: string[] | undefined;
  before?: { at: string; id: string } | undefined;
  limit: number;
}

/**
 * The stored events {@link EventQuery}'s filters select (no position, no order), or null when they can select none
 * (no integration in scope, or an empty list of ids).
 */
function eventsWhere(db: Executor, query: Omit<EventQuery, 'before' | 'limit'>) {
  if (query.integrationIds.length === 0 || query.ids?.length === 0) return null;
  let q = db.selectFrom('audit_events').where('integration_id', 'in', query.integrationIds);
  if (query.since) q = q.where('creation_time', '>=', query.since);
  if (query.until) q = q.where('creation_time', '<', query.until);
  if (query.ids) q = q.where('id', 'in', query.ids);
  if (query.operation) q = q.where('operation', '=', query.operation);
  if (query.userId) q = q.where('user_id', '=', query.userId);
  if (query.objectId) q = q.where('object_id', '=', query.objectId);
  return q;
}

/** One page of normalised audit events (no raw record), newest first. */
export async function pageEvents(db: Executor, query: EventQuery) {
  const where = eventsWhere(db, query);
  if (!where) return { items: [], more: false };
  let q = where.selectAll();
  if (query.before) {
    const b = query.before;
    q = q.where((eb) => eb.or([eb('creation_time', '<', b.at), eb.and([eb('creation_time', '=', b.at), eb('id', '<', b.id)])]));
  }
  const rows = await q
    .orderBy('creation_time', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return { items: rows.slice(0, query.limit), more: rows.length > query.limit };
}

/** The most events {@link countEventsUpTo} counts for a list's total: past it, the total says "more than". */
export const EVENT_COUNT_CAP = 10_000;

/**
 * How many stored events the filters select, counted up to `cap` + 1 and no further (a filter over millions of audit
 * records costs at most `cap` + 1 index or row visits, as a page that finds few matches already may).
 * @returns the count, at most `cap` + 1: more than `cap` means "more than `cap`".
 */
export async function countEventsUpTo(db: Executor, query: Omit<EventQuery, 'before' | 'limit'>, cap = EVENT_COUNT_CAP): Promise<number> {
  const where = eventsWhere(db, query);
  if (!where) return 0;
  const row = await db
    .selectFrom(
      where
        .select(sql<number>`1`.as('one'))
        .limit(cap + 1)
        .as('matched'),
    )
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One live agent of an integration with its raw Dataverse row, or undefined. */
export async function findAgent(db: Executor, integrationId: string, agentId: string) {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('id', '=', agentId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Live estate objects of one stream whose `attrs` hold `key` = `value` (e.g. the components of a bot). `attrs` is
 * written by JSON.stringify, so the pair appears as the exact text `"key":"value"`; the parsed value is checked too.
 */
export async function estateObjectsWhere(db: Executor, integrationId: string, stream: string, key: string, value: string, limit = 500) {
  const rows = await db
    .selectFrom('estate_objects')
    .select(['id', 'name', 'attrs'])
    .where('integration_id', '=', integrationId)
    .where('stream', '=', stream)
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`attrs like ${likePattern(`${JSON.stringify(key)}:${JSON.stringify(value)}`)} escape '\\'`)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, name: r.name, attrs: JSON.parse(r.attrs) as Record<string, unknown> })).filter((r) => r.attrs[key] === value);
}

/** Display names of environments by id. */
export async function environmentNames(db: Executor, integrationId: string, ids: string[]): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('environments').select(['id', 'display_name']).where('integration_id', '=', integrationId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.display_name]));
}

/** Dataverse system users by id (an agent's owner is one), with their Entra object id. */
export async function dataverseUser(db: Executor, integrationId: string, environmentId: string, id: string) {
  return db
    .selectFrom('dataverse_users')
    .select(['id', 'full_name', 'aad_object_id'])
    .where('integration_id', '=', integrationId)
    .where('environment_id', '=', environmentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Latest check results per check and status (`pass`, `fail`, `not_evaluated`) over `integrationIds`: the number of
 * resources in each (check_results holds each resource's latest result).
 */
export async function checkResultCounts(db: Executor, integrationIds: string[]): Promise<{ checkId: string; status: string; n: number }[]> {
  if (integrationIds.length === 0) return [];
  const rows = await db
    .selectFrom('check_results')
    .select(['check_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('integration_id', 'in', integrationIds)
    .groupBy(['check_id', 'status'])
    .execute();
  return rows.map((r) => ({ checkId: r.check_id, status: r.status, n: Number(r.n) }));
}

/** Alerts not closed (`new`, `acknowledged`) per detection over `integrationIds`. */
export async function openAlertCounts(db: Executor, integrationIds: string[]): Promise<{ ruleId: string; n: number }[]> {
  if (integrationIds.length === 0) return [];
  const rows = await db
    .selectFrom('alerts')
    .select(['rule_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('integration_id', 'in', integrationIds)
    .where('status', '!=', 'closed')
    .groupBy('rule_id')
    .execute();
  return rows.map((r) => ({ ruleId: r.rule_id, n: Number(r.n) }));
}

/**
 * The names of inventory objects by id within `integrationIds` (agents, environments, and every other stream's
 * objects in `estate_objects`: flows, apps, connectors, connections…; deleted ones too), keyed `integrationId\u0000id`,
 * for naming the object an audit event acted on. Ids with no named object are absent.
 */
export async function objectNames(db: Executor, integrationIds: string[], ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (!integrationIds.length || !ids.length) return names;
  // The tables come from this fixed list, never from input: the dynamic references are safe. Deleted objects name
  // their events too (a flow's DeleteFlow names the flow).
  for (const [table, column] of [
    ['agents', 'name'],
    ['environments', 'display_name'],
    ['estate_objects', 'name'],
  ] as const) {
    const rows = await db
      .selectFrom(table as 'estate_objects')
      .select(['integration_id', 'id', sql<string | null>`${sql.ref(column)}`.as('name')])
      .where('integration_id', 'in', integrationIds)
      .where('id', 'in', ids)
      .execute();
    for (const r of rows) if (r.name && !names.has(`${r.integration_id}\u0000${r.id}`)) names.set(`${r.integration_id}\u0000${r.id}`, r.name);
  }
  return names;
}

/**
 * Display names of environments and agents of `integrationIds`, keyed `integrationId\u0000id` (null when the
 * inventory holds the object without a name); objects the inventory does not hold are absent.
 */
export async function environmentAndAgentNames(db: Executor, integrationIds: string[], ids: { environmentIds: string[]; agentIds: string[] }) {
  const environments = new Map<string, string | null>();
  const agents = new Map<string, string | null>();
  if (integrationIds.length && ids.environmentIds.length)
    for (const e of await db
      .selectFrom('environments')
      .select(['integration_id', 'id', 'display_name'])
      .where('integration_id', 'in', integrationIds)
      .where('id', 'in', ids.environmentIds)
      .execute())
      environments.set(`${e.integration_id}\u0000${e.id}`, e.display_name);
  if (integrationIds.length && ids.agentIds.length)
    for (const g of await db
      .selectFrom('agents')
      .select(['integration_id', 'id', 'name'])
      .where('integration_id', 'in', integrationIds)
      .where('id', 'in', ids.agentIds)
      .execute())
      agents.set(`${g.integration_id}\u0000${g.id}`, g.name);
  return { environments, agents };
}
