import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { sqliteHandle, type Executor } from '../db.ts';
import { likePattern } from './queries.ts';
import { storableText } from '../text.ts';
import type { AgentStepsTable, Database, ProtectionEndpointsTable, ProtectionPoliciesTable } from '../schema.ts';

/**
 * Runtime protection's storage (migration 0014): the Copilot Studio threat-detection endpoints of integrations, the
 * organization's protection policies, and the agent steps answered (`agent_steps`), with the reads the snapshot of an
 * integration's estate needs. SQL only; the use cases live in src/protection/.
 */

export type ProtectionEndpointRow = ProtectionEndpointsTable;
export type ProtectionPolicyRow = ProtectionPoliciesTable;
export type AgentStepRow = AgentStepsTable;

/** Inserts an endpoint. Fails on a second endpoint for the same integration (unique `integration_id`). */
export async function insertProtectionEndpoint(db: Executor, row: ProtectionEndpointRow): Promise<void> {
  await db.insertInto('protection_endpoints').values(row).execute();
}

/** An endpoint by its public id, or undefined. */
export async function getProtectionEndpoint(db: Executor, id: string): Promise<ProtectionEndpointRow | undefined> {
  return db.selectFrom('protection_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The endpoint of an integration, or undefined. */
export async function getProtectionEndpointOfIntegration(db: Executor, integrationId: string): Promise<ProtectionEndpointRow | undefined> {
  return db.selectFrom('protection_endpoints').selectAll().where('integration_id', '=', integrationId).executeTakeFirst();
}

/** The endpoints of an organization (or every one when `organizationId` is undefined), oldest first. */
export async function listProtectionEndpoints(db: Executor, organizationId?: string): Promise<ProtectionEndpointRow[]> {
  let q = db.selectFrom('protection_endpoints').selectAll();
  if (organizationId !== undefined) q = q.where('organization_id', '=', organizationId);
  return q.orderBy('created_at').orderBy('id').execute();
}

/** Changes an endpoint's application and audiences (JSON array text). @returns false when no such endpoint. */
export async function updateProtectionEndpoint(db: Executor, id: string, change: { app_id: string | null; audiences: string }, at: string): Promise<boolean> {
  const r = await db
    .updateTable('protection_endpoints')
    .set({ ...change, updated_at: at })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Records a successful `validate` call at `at`. */
export async function markProtectionValidated(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('protection_endpoints').set({ validated_at: at }).where('id', '=', id).execute();
}

/** Records an answered `analyze-tool-execution` call at `at` (sets the first analysis time once). */
export async function markProtectionAnalysis(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('protection_endpoints').set({ last_analysis_at: at }).where('id', '=', id).execute();
  await db.updateTable('protection_endpoints').set({ first_analysis_at: at }).where('id', '=', id).where('first_analysis_at', 'is', null).execute();
}

/** Counts a call refused for its token: `reason` is the rejection's reason word, never the token. */
export async function recordProtectionAuthFailure(db: Executor, id: string, reason: string, at: string, count = 1): Promise<void> {
  await db
    .updateTable('protection_endpoints')
    .set((eb) => ({ auth_failures: eb('auth_failures', '+', count), last_auth_failure_at: at, last_auth_failure_reason: reason }))
    .where('id', '=', id)
    .execute();
}

/** The columns of `agent_steps` in the order of {@link STEP_INSERT}'s parameters. */
const STEP_COLUMNS = [
  'id',
  'organization_id',
  'integration_id',
  'endpoint_id',
  'received_at',
  'correlation_id',
  'environment_id',
  'agent_id',
  'agent_name',
  'user_id',
  'conversation_id',
  'message_id',
  'plan_id',
  'plan_step_id',
  'channel_id',
  'tool_id',
  'tool_name',
  'tool_type',
  'block_action',
  'would_block',
  'mode',
  'reason_code',
  'reason',
  'decided_by',
  'verdicts',
  'policy_ids',
  'latency_ms',
  'engine_ms',
  'timed_out',
  'client_ip',
] as const satisfies readonly (keyof AgentStepRow)[];
const STEP_INSERT = `insert into agent_steps (${STEP_COLUMNS.join(', ')}) values (${STEP_COLUMNS.map(() => '?').join(', ')})`;
const stepStatements = new WeakMap<object, { run(values: unknown[]): unknown }>();

/**
 * Stores answered steps inside the caller's transaction `trx`. On SQLite through one prepared statement reused for every
 * row (as audit events are: store/repositories/audit.ts; the query builder's compile-and-prepare per statement was most
 * of a step's write cost under load); on PostgreSQL as multi-row inserts of 200 rows (30 columns each).
 * `root` is the store itself (its SQLite connection); the statements run in `trx`, which holds that connection.
 */
export async function insertAgentSteps(root: Kysely<Database>, trx: Executor, rows: readonly AgentStepRow[]): Promise<void> {
  const handle = sqliteHandle(root);
  if (handle) {
    let stmt = stepStatements.get(handle);
    if (!stmt) stepStatements.set(handle, (stmt = handle.prepare(STEP_INSERT)));
    // U+0000 as U+FFFD, as the query builder's plugin stores it (store/text.ts).
    for (const r of rows) stmt.run(STEP_COLUMNS.map((c) => storableText(r[c])));
    return;
  }
  for (let i = 0; i < rows.length; i += 200)
    await trx
      .insertInto('agent_steps')
      .values(rows.slice(i, i + 200))
      .execute();
}

/** Filters of {@link listAgentSteps}; every one optional. Times are ISO 8601 UTC. */
export interface AgentStepQuery {
  /** Steps of these integrations only (an empty list reads nothing). */
  integrationIds?: readonly string[];
  organizationId?: string;
  agentId?: string;
  environmentId?: string;
  conversationId?: string;
  /**
   * Only blocked steps (`block_action` = 1); only those that block mode would have blocked (`would_block` = 1); the
   * decisions (either); the steps whose decision ran out of time (`timed_out` = 1); or those allowed without objection
   * (none of the three).
   */
  outcome?: 'blocked' | 'would-block' | 'decision' | 'timeout' | 'allowed';
  /** The detector that decided the step (`decided_by`). */
  decidedBy?: string;
  /** Text in the tool's name or the reason (case-insensitive, LIKE's wildcards taken literally). */
  q?: string;
  /** Received at or after. */
  from?: string;
  /** Received before. */
  to?: string;
  /** Keyset cursor: the last step of the previous page (in the order asked). */
  after?: { receivedAt: string; id: string };
  /** By time received: `desc` newest first (the default) or `asc` oldest first; ties by id the same way. */
  order?: 'asc' | 'desc';
  /** At most this many (default 100). */
  limit?: number;
}

/** `q` narrowed by the filters of `query` other than its cursor and limit. */
function whereSteps<O>(q: SelectQueryBuilder<Database, 'agent_steps', O>, query: AgentStepQuery): SelectQueryBuilder<Database, 'agent_steps', O> {
  if (query.integrationIds) q = q.where('integration_id', 'in', [...query.integrationIds]);
  if (query.organizationId !== undefined) q = q.where('organization_id', '=', query.organizationId);
  if (query.agentId !== undefined) q = q.where('agent_id', '=', query.agentId);
  if (query.environmentId !== undefined) q = q.where('environment_id', '=', query.environmentId);
  if (query.conversationId !== undefined) q = q.where('conversation_id', '=', query.conversationId);
  if (query.decidedBy !== undefined) q = q.where('decided_by', '=', query.decidedBy);
  if (query.outcome === 'blocked') q = q.where('block_action', '=', 1);
  if (query.outcome === 'would-block') q = q.where('would_block', '=', 1);
  if (query.outcome === 'decision') q = q.where((eb) => eb.or([eb('block_action', '=', 1), eb('would_block', '=', 1)]));
  if (query.outcome === 'timeout') q = q.where('timed_out', '=', 1);
  if (query.outcome === 'allowed') q = q.where('block_action', '=', 0).where('would_block', '=', 0).where('timed_out', '=', 0);
  if (query.from !== undefined) q = q.where('received_at', '>=', query.from);
  if (query.to !== undefined) q = q.where('received_at', '<', query.to);
  if (query.q) {
    const p = likePattern(query.q.toLowerCase());
    q = q.where(sql<boolean>`(lower(coalesce(tool_name, '')) like ${p} escape '\\' or lower(reason) like ${p} escape '\\')`);
  }
  return q;
}

/** Steps matching the filters, newest first (`received_at` desc, then `id` desc; or both asc), in keyset pages. */
export async function listAgentSteps(db: Executor, query: AgentStepQuery): Promise<AgentStepRow[]> {
  if (query.integrationIds && query.integrationIds.length === 0) return [];
  let q = whereSteps(db.selectFrom('agent_steps').selectAll(), query);
  const after = query.after;
  const order = query.order ?? 'desc';
  const past = order === 'desc' ? '<' : '>';
  if (after)
    q = q.where((eb) => eb.or([eb('received_at', past, after.receivedAt), eb.and([eb('received_at', '=', after.receivedAt), eb('id', past, after.id)])]));
  return q
    .orderBy('received_at', order)
    .orderBy('id', order)
    .limit(query.limit ?? 100)
    .execute();
}

/** How many steps match the filters of `query` (its cursor and limit ignored). */
export async function countAgentSteps(db: Executor, query: AgentStepQuery): Promise<number> {
  if (query.integrationIds && query.integrationIds.length === 0) return 0;
  const r = await whereSteps(
    db.selectFrom('agent_steps').select((eb) => eb.fn.countAll<number | string>().as('n')),
    query,
  ).executeTakeFirst();
  return Number(r?.n ?? 0);
}

/**
 * Steps by disjoint outcome: `blocked` (block_action), `would_block` (monitor mode's, not blocked), `timed_out` (ran
 * out of time and neither of those) and `allowed` (none of the three); `total` is their sum.
 */
export interface OutcomeCounts {
  total: number;
  blocked: number;
  would_block: number;
  timed_out: number;
  allowed: number;
}

/** The SQL sums of {@link OutcomeCounts} (integer flags 0/1, both dialects). */
const OUTCOME_SUMS = {
  total: sql<number | string>`count(*)`,
  blocked: sql<number | string>`sum(case when block_action = 1 then 1 else 0 end)`,
  would_block: sql<number | string>`sum(case when block_action = 0 and would_block = 1 then 1 else 0 end)`,
  timed_out: sql<number | string>`sum(case when block_action = 0 and would_block = 0 and timed_out = 1 then 1 else 0 end)`,
  allowed: sql<number | string>`sum(case when block_action = 0 and would_block = 0 and timed_out = 0 then 1 else 0 end)`,
};

/** The {@link OUTCOME_SUMS} as selected columns, each under its own name. */
const outcomeColumns = () =>
  [
    OUTCOME_SUMS.total.as('total'),
    OUTCOME_SUMS.blocked.as('blocked'),
    OUTCOME_SUMS.would_block.as('would_block'),
    OUTCOME_SUMS.timed_out.as('timed_out'),
    OUTCOME_SUMS.allowed.as('allowed'),
  ] as const;

function outcomeCounts(r: Record<keyof OutcomeCounts, number | string | null>): OutcomeCounts {
  return {
    total: Number(r.total ?? 0),
    blocked: Number(r.blocked ?? 0),
    would_block: Number(r.would_block ?? 0),
    timed_out: Number(r.timed_out ?? 0),
    allowed: Number(r.allowed ?? 0),
  };
}

/** Per integration of `integrationIds`, its steps received at or after `from` (ISO 8601 UTC) by outcome; integrations without any are absent. */
export async function stepOutcomesByIntegration(db: Executor, integrationIds: readonly string[], from: string): Promise<Map<string, OutcomeCounts>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('agent_steps')
    .select(['integration_id', ...outcomeColumns()])
    .where('integration_id', 'in', [...integrationIds])
    .where('received_at', '>=', from)
    .groupBy('integration_id')
    .execute();
  return new Map(rows.map((r) => [r.integration_id, outcomeCounts(r)]));
}

/**
 * The steps of `integrationIds` received at or after `from` by outcome per period: `bucket` `hour` groups by the
 * first 13 characters of `received_at` (`YYYY-MM-DDTHH`), `day` by the first 10 (`YYYY-MM-DD`); periods without
 * steps are absent. Oldest first.
 */
export async function stepOutcomesOverTime(
  db: Executor,
  integrationIds: readonly string[],
  from: string,
  bucket: 'hour' | 'day',
): Promise<(OutcomeCounts & { period: string })[]> {
  if (integrationIds.length === 0) return [];
  const period = sql<string>`substr(received_at, 1, ${sql.lit(bucket === 'hour' ? 13 : 10)})`;
  const rows = await db
    .selectFrom('agent_steps')
    .select([period.as('period'), ...outcomeColumns()])
    .where('integration_id', 'in', [...integrationIds])
    .where('received_at', '>=', from)
    .groupBy(period)
    .orderBy(period)
    .execute();
  return rows.map((r) => ({ period: String(r.period), ...outcomeCounts(r) }));
}

/**
 * Per integration and deciding detector (`decided_by`), the steps received at or after `from` that it blocked or
 * would have blocked, most first.
 */
export async function decisionsByDetector(
  db: Executor,
  integrationIds: readonly string[],
  from: string,
): Promise<{ integration_id: string; detector: string; decisions: number }[]> {
  if (integrationIds.length === 0) return [];
  const rows = await db
    .selectFrom('agent_steps')
    .select((eb) => ['integration_id', 'decided_by', eb.fn.countAll<number | string>().as('decisions')])
    .where('integration_id', 'in', [...integrationIds])
    .where('received_at', '>=', from)
    .where('decided_by', 'is not', null)
    .where((eb) => eb.or([eb('block_action', '=', 1), eb('would_block', '=', 1)]))
    .groupBy(['integration_id', 'decided_by'])
    .execute();
  return rows
    .map((r) => ({ integration_id: r.integration_id, detector: r.decided_by!, decisions: Number(r.decisions) }))
    .sort((a, b) => b.decisions - a.decisions || a.detector.localeCompare(b.detector));
}

/**
 * The values an integration's steps take for the step list's filters, each with its number of steps: the deciding
 * detectors, the agents (with the latest name recorded) and the environments (null ids left out).
 */
export async function stepFacets(
  db: Executor,
  integrationId: string,
): Promise<{
  detectors: { value: string; steps: number }[];
  agents: { value: string; name: string | null; steps: number }[];
  environments: { value: string; steps: number }[];
}> {
  const base = db.selectFrom('agent_steps').where('integration_id', '=', integrationId);
  const detectors = await base
    .select((eb) => ['decided_by', eb.fn.countAll<number | string>().as('steps')])
    .where('decided_by', 'is not', null)
    .groupBy('decided_by')
    .orderBy('decided_by')
    .execute();
  const agents = await base
    .select((eb) => ['agent_id', eb.fn.max('agent_name').as('name'), eb.fn.countAll<number | string>().as('steps')])
    .where('agent_id', 'is not', null)
    .groupBy('agent_id')
    .orderBy('agent_id')
    .execute();
  const environments = await base
    .select((eb) => ['environment_id', eb.fn.countAll<number | string>().as('steps')])
    .where('environment_id', 'is not', null)
    .groupBy('environment_id')
    .orderBy('environment_id')
    .execute();
  return {
    detectors: detectors.map((r) => ({ value: r.decided_by!, steps: Number(r.steps) })),
    agents: agents.map((r) => ({ value: r.agent_id!, name: r.name, steps: Number(r.steps) })),
    environments: environments.map((r) => ({ value: r.environment_id!, steps: Number(r.steps) })),
  };
}

/** A conversation's steps in the order they happened (oldest first), at most `limit` (default 1,000). */
export async function conversationTimeline(db: Executor, integrationId: string, conversationId: string, limit = 1000): Promise<AgentStepRow[]> {
  return db
    .selectFrom('agent_steps')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('conversation_id', '=', conversationId)
    .orderBy('received_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Every policy of an organization (all scopes), ordered by id. */
export async function listProtectionPolicies(db: Executor, organizationId: string): Promise<ProtectionPolicyRow[]> {
  return db.selectFrom('protection_policies').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute();
}

/**
 * Stores a policy: replaces the one of the same organization and scope (integration, environment, agent, nulls equal),
 * else inserts `row`. @returns the stored policy's id (the existing one's when replaced).
 */
export async function upsertProtectionPolicy(db: Executor, row: ProtectionPolicyRow): Promise<string> {
  let q = db.selectFrom('protection_policies').select('id').where('organization_id', '=', row.organization_id);
  for (const col of ['integration_id', 'environment_id', 'agent_id'] as const) q = row[col] === null ? q.where(col, 'is', null) : q.where(col, '=', row[col]);
  const existing = await q.executeTakeFirst();
  if (existing) {
    await db
      .updateTable('protection_policies')
      .set({ policy: row.policy, updated_by: row.updated_by, updated_at: row.updated_at })
      .where('id', '=', existing.id)
      .execute();
    return existing.id;
  }
  await db.insertInto('protection_policies').values(row).execute();
  return row.id;
}

/**
 * Per environment of an integration, the analyses recorded: how many, from how many agents, the first and the last (ISO 8601 UTC). Steps
 * without an environment id are grouped under null.
 */
export async function stepsByEnvironment(
  db: Executor,
  integrationId: string,
): Promise<{ environment_id: string | null; calls: number; agents: number; first_at: string; last_at: string }[]> {
  const rows = await db
    .selectFrom('agent_steps')
    .select((eb) => [
      'environment_id',
      eb.fn.countAll<number | string>().as('calls'),
      eb.fn.count<number | string>('agent_id').distinct().as('agents'),
      eb.fn.min('received_at').as('first_at'),
      eb.fn.max('received_at').as('last_at'),
    ])
    .where('integration_id', '=', integrationId)
    .groupBy('environment_id')
    .orderBy('environment_id')
    .execute();
  return rows.map((r) => ({
    environment_id: r.environment_id,
    calls: Number(r.calls),
    agents: Number(r.agents),
    first_at: String(r.first_at),
    last_at: String(r.last_at),
  }));
}

/** Deletes a policy of an organization. @returns false when the organization has no such policy. */
export async function deleteProtectionPolicy(db: Executor, organizationId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('protection_policies').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * User principal names and mail addresses of an integration's live member users (not guests), for the tenant's
 * e-mail domains, in keyset pages of `pageSize` by id.
 */
export async function* memberAddressPages(db: Executor, integrationId: string, pageSize = 5000): AsyncGenerator<{ upn: string | null; mail: string | null }[]> {
  for (let after: string | null = null; ;) {
    let q = db
      .selectFrom('directory_users')
      .select(['id', 'user_principal_name', 'mail'])
      .where('integration_id', '=', integrationId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('user_type', '=', 'Member'), eb('user_type', 'is', null)]));
    if (after !== null) q = q.where('id', '>', after);
    const rows = await q.orderBy('id').limit(pageSize).execute();
    if (rows.length > 0) yield rows.map((r) => ({ upn: r.user_principal_name, mail: r.mail }));
    if (rows.length < pageSize) return;
    after = rows.at(-1)!.id;
  }
}
