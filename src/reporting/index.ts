import type { Kysely } from 'kysely';
import { integrationOf, integrationsInScope, notFound, requireOwned, requireRole, scopeIntegrations } from '../access/scope.ts';
import { actorOf, type Caller } from '../access/index.ts';
import { loadCheckMetadata } from '../checks/loader.ts';
import { rankAgents } from '../checks/risk.ts';
import type { CheckMetadata } from '../checks/types.ts';
import type { Alert, AlertDetail, Event, EventDetail } from '../contract/alerts.ts';
import type { Page } from '../contract/common.ts';
import type { Dashboard, Finding, FindingDetail, RankedAgent } from '../contract/findings.ts';
import type { AgentDetail, InventoryItem } from '../contract/inventory.ts';
import type { Run, RunDetail, RunEvent, RunProgress } from '../contract/runs.ts';
import type { InventoryKind } from '../sources/index.ts';
import { type ErrorText, VigilError } from '../core/errors.ts';
import { SEVERITIES, type Severity } from '../core/types.ts';
import { findingExportView, renderFindings, type FindingExportFormat } from '../exports/findings.ts';
import { listIntegrations } from '../store/repositories/integrations.ts';
import type { Database } from '../store/schema.ts';
import { inTransaction, type Executor } from '../store/db.ts';
import { alertEventIds, alertHistory, getAlert, setAlertStatus as storeAlertStatus, ALERT_STATUSES } from '../store/repositories/audit.ts';
import { withRaw } from '../store/repositories/auditRaw.ts';
import {
  findingHistory,
  getFinding,
  hasResultsOfRun,
  suppressFinding as storeSuppression,
  unsuppressFinding as liftStoredSuppression,
  type FindingWithSuppression,
} from '../store/repositories/findings.ts';
import { findRunningRun, getRun, latestFinishedRun, listCheckpoints, listRuns, type RunRow } from '../store/repositories/runs.ts';
import * as q from '../store/repositories/queries.ts';
import type { AlertSort, FindingSort, InventorySort } from '../store/repositories/queries.ts';
import { inventorySummary } from './inventorySummary.ts';

/**
 * The use cases of the API, the portal and the CLI, one function per operation, each taking the caller: inventory
 * tables, findings with suppression, alerts, events, runs with their live progress, agents ranked by risk, the
 * dashboard and the agent page; and the decisions people take on them (suppress a finding, set an alert's status).
 * The API passes the signed-in user or API key, the CLI an operator (src/access `operator`): both are scoped by
 * organization (src/access/scope.ts) and go through the same checks, and both print the view returned here, so
 * `vigil … --json` equals the API's JSON for the same object. Lists are keyset-paged with an opaque cursor. Each
 * returns the type inferred from its response schema in `contract/` (the API contract), so a view that drifts from
 * what the API declares fails to compile.
 */

/** The page and live-event shapes of these views, re-exported for their callers (routes, CLI). */
export type { Page, RunEvent };

/** Encodes a keyset position as an opaque cursor (base64url JSON). */
export function encodeCursor(position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeCursor} and checks its shape.
 * @throws VigilError `invalid-input` naming `cursor`.
 */
export function decodeCursor<T extends Record<string, unknown>>(cursor: string | undefined, keys: Record<keyof T, 'string' | 'number'>): T | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const bad = () =>
    new VigilError('INVALID_CURSOR', 'cursor is not one this API issued.', {
      field: 'cursor',
      remediation: 'Pass the nextCursor of the previous page unchanged, or leave cursor out for the first page.',
    });
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (typeof value !== 'object' || value === null) throw bad();
  for (const [k, type] of Object.entries(keys)) if (typeof (value as Record<string, unknown>)[k] !== type) throw bad();
  return value as T;
}

/** Filters and order of {@link listInventory} (the API's query; see `InventoryQuery` in contract/inventory.ts). */
export interface InventoryFilter {
  integrationId?: string | undefined;
  environmentId?: string | undefined;
  /** Case-insensitive part of the name. */
  q?: string | undefined;
  /** @default 'name' */
  sort?: InventorySort | undefined;
  /** @default 'asc' */
  order?: 'asc' | 'desc' | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * Lists one inventory kind (live objects only) in the order asked (by name, A to Z, by default), keyset-paged, with
 * how many the filter selects in all; each object with its environment's name and its kind's summary facts
 * ({@link inventorySummary}). The cursor holds the order it was made for: passed with another, it is refused.
 * @throws VigilError `not-found` for another organization's integration; `invalid-input` / `INVALID_CURSOR`.
 */
export async function listInventory(
  db: Executor,
  caller: Caller,
  kind: InventoryKind,
  filter: InventoryFilter,
): Promise<Page<InventoryItem> & { total: number }> {
  const sort = filter.sort ?? 'name';
  const order = filter.order ?? 'asc';
  const integrationIds = await scopeIntegrations(db, caller, filter.integrationId);
  const after = decodeCursor<{ s: string; v: string; i: string; id: string }>(filter.cursor, { s: 'string', v: 'string', i: 'string', id: 'string' });
  if (after && after.s !== `${sort}:${order}`) throw cursorOfAnotherOrder();
  // The registry (every stream module) is loaded by this use case alone, so the others (`vigil findings`) start without it.
  const [{ INVENTORY }, { environmentGovernance }] = await Promise.all([import('../sources/index.ts'), import('../sources/bap/streams/environments.ts')]);
  const listed = INVENTORY.find((e) => e.kind === kind);
  if (!listed) throw new Error(`no stream declares the inventory kind ${kind}`);
  const query = { integrationIds, environmentId: filter.environmentId, q: filter.q };
  const [{ items, more, lastValue }, total] = await Promise.all([
    q.pageInventory(db, listed, { ...query, sort, order, after: after && { v: after.v, integrationId: after.i, id: after.id }, limit: filter.limit }),
    q.countInventory(db, listed, query),
  ]);
  const managed = (raw: string | null): boolean | null => {
    try {
      return raw ? (environmentGovernance(JSON.parse(raw) as Record<string, unknown>)?.managed ?? null) : null;
    } catch {
      return null;
    }
  };
  const last = items.at(-1);
  return {
    items: items.map(({ raw, ...it }) => ({
      ...it,
      summary: inventorySummary(kind, it.attributes, kind === 'environments' ? managed(raw) : null),
    })),
    nextCursor: more && last ? encodeCursor({ s: `${sort}:${order}`, v: lastValue, i: last.integrationId, id: last.id }) : null,
    total,
  };
}

/** A finding as the API shows it (the contract's `Finding`). */
export type FindingView = Finding;

/** Check catalogue entries by id (titles, risk, remediation). */
export type CheckCatalogue = Map<string, CheckMetadata>;

/** The check catalogue of this installation (every check's metadata, by id), as the API and the CLI show findings with it. */
export async function checkCatalogue(): Promise<CheckCatalogue> {
  return new Map((await loadCheckMetadata()).map((m) => [m.id, m]));
}

/** The Power Platform environment a finding is about: the environment itself, or the one its detail names. */
function environmentOfFinding(f: Pick<FindingWithSuppression, 'resource_type' | 'resource_id' | 'detail'>): string | null {
  if (f.resource_type === 'environment') return f.resource_id;
  const d = f.detail ? (JSON.parse(f.detail) as Record<string, unknown>) : {};
  return textOf(d, 'environmentId');
}

/** Shapes a finding row for the API, with its environment's name from `names` (read by {@link findingViews}). */
function findingView(f: FindingWithSuppression, checks: CheckCatalogue, names: AlertNames['environments']): FindingView {
  const { reason: _, ...base } = findingExportView(f);
  const environmentId = environmentOfFinding(f);
  return {
    ...base,
    severity: f.severity as Severity,
    title: checks.get(f.check_id)?.title ?? null,
    detail: f.detail ? (JSON.parse(f.detail) as Record<string, unknown>) : null,
    environmentId,
    environmentName: (environmentId && names.get(`${f.integration_id}\u0000${environmentId}`)) ?? null,
  };
}

/** Finding views of stored rows, their environments' names read in one pass. */
async function findingViews(db: Executor, rows: FindingWithSuppression[], checks: CheckCatalogue): Promise<FindingView[]> {
  const environmentIds = [...new Set(rows.map(environmentOfFinding).filter((x): x is string => !!x))];
  const { environments } = await q.environmentAndAgentNames(db, [...new Set(rows.map((f) => f.integration_id))], { environmentIds, agentIds: [] });
  return rows.map((f) => findingView(f, checks, environments));
}

/** Filters and order of {@link listFindingsPage} (the API's query; see `FindingsQuery` in contract/findings.ts). */
export interface FindingsFilter {
  integrationId?: string | undefined;
  severity?: Severity | undefined;
  /** open: open and not suppressed; absent or all: every finding. */
  status?: 'open' | 'resolved' | 'suppressed' | 'all' | undefined;
  /** With an active suppression or without, whatever `status` says of it. */
  suppressed?: boolean | undefined;
  checkId?: string | undefined;
  resourceId?: string | undefined;
  environmentId?: string | undefined;
  /** Case-insensitive text in the check's title or id, the resource's name or id, the reason or the suppression's reason. */
  q?: string | undefined;
  /** Findings first seen at or after this instant (parsable by `Date`; the API passes ISO 8601 with an offset). */
  since?: string | undefined;
  /** Findings first seen before this instant (exclusive). */
  until?: string | undefined;
  /** @default 'severity' */
  sort?: FindingSort | undefined;
  /** @default 'desc' */
  order?: 'asc' | 'desc' | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * The store query of a findings filter: the organization's integrations (or the one asked), and the checks whose
 * catalogue title contains the search text (titles live in the catalogue, not in the store).
 */
async function findingQueryOf(db: Executor, caller: Caller, checks: CheckCatalogue, filter: Omit<FindingsFilter, 'cursor' | 'limit'>) {
  const range = timeRangeOf(filter);
  const integrationIds = await scopeIntegrations(db, caller, filter.integrationId);
  const text = filter.q?.trim().toLowerCase() || undefined;
  return {
    integrationIds,
    severity: filter.severity,
    status: filter.status === 'all' ? undefined : filter.status,
    suppressed: filter.suppressed,
    checkId: filter.checkId,
    resourceId: filter.resourceId,
    environmentId: filter.environmentId,
    ...range,
    q: text,
    qCheckIds: text ? [...checks.values()].filter((c) => c.title.toLowerCase().includes(text)).map((c) => c.id) : undefined,
    at: new Date().toISOString(),
  };
}

/**
 * Findings of the organization, filtered, searched, in the order asked (most severe first by default), keyset-paged,
 * with how many the filter selects in all. The cursor holds the order it was made for: passed with another, it is
 * refused.
 * @throws VigilError `not-found` (another organization's integration); `invalid-input` / `INVALID_CURSOR`.
 */
export async function listFindingsPage(
  db: Executor,
  caller: Caller,
  checks: CheckCatalogue,
  filter: FindingsFilter,
): Promise<Page<FindingView> & { total: number }> {
  const sort = filter.sort ?? 'severity';
  const order = filter.order ?? 'desc';
  const numeric = sort === 'severity' || sort === 'status';
  const after = decodeCursor<{ s: string; v: string | number; id: string }>(filter.cursor, { s: 'string', v: numeric ? 'number' : 'string', id: 'string' });
  if (after && after.s !== `${sort}:${order}`) throw cursorOfAnotherOrder();
  const query = await findingQueryOf(db, caller, checks, filter);
  const [{ items, more }, total] = await Promise.all([q.pageFindings(db, { ...query, sort, order, after, limit: filter.limit }), q.countFindings(db, query)]);
  const last = items.at(-1);
  const v = last ? (numeric ? Number(last.sort_value) : String(last.sort_value)) : null;
  return {
    items: await findingViews(db, items, checks),
    nextCursor: more && last ? encodeCursor({ s: `${sort}:${order}`, v, id: last.id }) : null,
    total,
  };
}

/** One finding with its check and history. @throws VigilError `not-found` (absent or another organization's). */
export async function findingDetail(db: Executor, caller: Caller, checks: CheckCatalogue, id: string): Promise<FindingDetail> {
  const f = await requireOwned(db, caller, 'finding', id, await getFinding(db, id), FINDING_IDS);
  const check = checks.get(f.check_id);
  const [view] = await findingViews(db, [f], checks);
  return {
    ...view!,
    check: check ? { title: check.title, risk: check.risk, remediation: check.remediation, references: check.references } : null,
    history: (await findingHistory(db, id)).map((h) => ({
      event: h.event,
      at: h.at,
      detail: h.detail ? (JSON.parse(h.detail) as Record<string, unknown>) : null,
    })),
  };
}

/** Where to look for finding ids, in a not-found error. */
const FINDING_IDS: ErrorText = (_, act) => `To see the findings, ${act({ do: 'listFindings' })}.`;

/** Names of the suppression inputs in the caller's terms: body fields for the API (the default), flags for the CLI. */
export interface SuppressionFields {
  reason: string;
  expiresAt: string;
}

/**
 * Suppresses a finding of the caller's organization (accepted risk), recorded in its history with the caller as the
 * author. Admin only.
 * @param input.expiresAt ISO 8601 date or date-time in the future, or absent for until lifted.
 * @param fields names the inputs in the caller's terms (body fields or flags), for errors.
 * @returns the finding as it now stands.
 * @throws VigilError `not-found` / `FINDING_NOT_FOUND` (absent or another organization's); `invalid-input` naming the
 *   reason or expiry field; `authorization` / `FORBIDDEN_ROLE` for a viewer.
 */
export async function suppressFinding(
  db: Executor,
  caller: Caller,
  checks: CheckCatalogue,
  id: string,
  input: { reason: string; expiresAt?: string | null | undefined },
  fields: SuppressionFields = { reason: 'reason', expiresAt: 'expiresAt' },
  now = new Date(),
): Promise<FindingDetail> {
  requireRole(caller, 'admin');
  await requireOwned(db, caller, 'finding', id, await getFinding(db, id), FINDING_IDS);
  const { reason, expiresAt } = suppressionOf(input, fields, now);
  if (!(await storeSuppression(db, id, { reason, author: actorOf(caller), expiresAt }, now.toISOString()))) throw notFound('finding', id, FINDING_IDS);
  return findingDetail(db, caller, checks, id);
}

/**
 * A suppression's reason (trimmed) and expiry (ISO 8601 UTC, or null for until lifted), checked.
 * @throws VigilError `invalid-input` naming the reason or expiry field.
 */
function suppressionOf(input: { reason: string; expiresAt?: string | null | undefined }, fields: SuppressionFields, now: Date) {
  const reason = input.reason.trim();
  if (!reason || reason.length > 2000)
    throw new VigilError('INVALID_INPUT', `${fields.reason} must be 1 to 2,000 characters.`, {
      field: fields.reason,
      remediation: 'Say why the finding is accepted, e.g. "test environment, no data".',
    });
  let expiresAt: string | null = null;
  if (input.expiresAt) {
    const t = Date.parse(input.expiresAt);
    if (Number.isNaN(t) || t <= now.getTime())
      throw new VigilError('INVALID_INPUT', `${fields.expiresAt} must be a future date (got "${input.expiresAt}").`, {
        field: fields.expiresAt,
        remediation: `Give an ISO 8601 date such as 2027-03-31 or 2027-03-31T17:00:00Z, or leave ${fields.expiresAt} out to suppress until lifted.`,
      });
    expiresAt = new Date(t).toISOString();
  }
  return { reason, expiresAt };
}

/**
 * Lifts the suppression of a finding of the caller's organization, recorded in its history. Admin only.
 * @returns the finding as it now stands.
 * @throws VigilError `not-found` / `FINDING_NOT_FOUND`; `conflict` / `NOT_SUPPRESSED`; `authorization` for a viewer.
 */
export async function unsuppressFinding(db: Executor, caller: Caller, checks: CheckCatalogue, id: string, now = new Date()): Promise<FindingDetail> {
  requireRole(caller, 'admin');
  await requireOwned(db, caller, 'finding', id, await getFinding(db, id), FINDING_IDS);
  if (!(await liftStoredSuppression(db, id, actorOf(caller), now.toISOString())))
    throw new VigilError('NOT_SUPPRESSED', `Finding ${id} is not suppressed.`, { field: 'finding' });
  return findingDetail(db, caller, checks, id);
}

/**
 * Suppresses several findings of the caller's organization at once (accepted risk), each recorded in its finding's
 * history with the caller as the author, as a single suppression is; a finding already suppressed gets the new reason
 * and expiry. All or nothing: when one id is absent or another organization's, nothing changes and the error names the
 * ids field (answered as for one that does not exist). Admin only.
 * @param input.expiresAt ISO 8601 date or date-time in the future, or absent for until lifted.
 * @returns the findings as they now stand, in the order of `ids` (repeated ids once), and how many changed.
 * @throws VigilError `not-found` / `FINDING_NOT_FOUND` naming `ids`; `invalid-input` naming reason or expiresAt;
 *   `authorization` / `FORBIDDEN_ROLE` for a viewer.
 */
export async function suppressFindings(
  db: Executor,
  caller: Caller,
  checks: CheckCatalogue,
  ids: string[],
  input: { reason: string; expiresAt?: string | null | undefined },
  now = new Date(),
): Promise<{ items: FindingView[]; changed: number }> {
  requireRole(caller, 'admin');
  const { reason, expiresAt } = suppressionOf(input, { reason: 'reason', expiresAt: 'expiresAt' }, now);
  return inTransaction(db, async (trx) => {
    const unique = await ownedFindings(trx, caller, ids);
    for (const id of unique) await storeSuppression(trx, id, { reason, author: actorOf(caller), expiresAt }, now.toISOString());
    return { items: await freshFindings(trx, unique, checks, now), changed: unique.length };
  });
}

/**
 * Lifts the suppression of several findings of the caller's organization at once, each recorded in its finding's
 * history as a single lift is. A finding that was not suppressed is left as it is (not counted in `changed`). All or
 * nothing, as {@link suppressFindings}. Admin only.
 * @returns the findings as they now stand, in the order of `ids` (repeated ids once), and how many were lifted.
 * @throws VigilError `not-found` / `FINDING_NOT_FOUND` naming `ids`; `authorization` / `FORBIDDEN_ROLE` for a viewer.
 */
export async function liftFindingSuppressions(
  db: Executor,
  caller: Caller,
  checks: CheckCatalogue,
  ids: string[],
  now = new Date(),
): Promise<{ items: FindingView[]; changed: number }> {
  requireRole(caller, 'admin');
  return inTransaction(db, async (trx) => {
    const unique = await ownedFindings(trx, caller, ids);
    let changed = 0;
    for (const id of unique) if (await liftStoredSuppression(trx, id, actorOf(caller), now.toISOString())) changed++;
    return { items: await freshFindings(trx, unique, checks, now), changed };
  });
}

/** `ids` once each, after checking every one is a finding of the caller's organization. @throws `FINDING_NOT_FOUND` naming `ids`. */
async function ownedFindings(db: Executor, caller: Caller, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  for (const id of unique) {
    try {
      await requireOwned(db, caller, 'finding', id, await getFinding(db, id), FINDING_IDS);
    } catch (e) {
      if (e instanceof VigilError) throw new VigilError('FINDING_NOT_FOUND', e.message, { field: 'ids', remediation: FINDING_IDS });
      throw e;
    }
  }
  return unique;
}

/** The findings of `ids` as they now stand, in that order. */
async function freshFindings(db: Executor, ids: string[], checks: CheckCatalogue, now: Date): Promise<FindingView[]> {
  const rows = await Promise.all(ids.map(async (id) => (await getFinding(db, id, now.toISOString()))!));
  return findingViews(db, rows, checks);
}

/**
 * Every finding a filter of the findings list selects (all pages, in its order), rendered in an export format: the
 * portal's export links pass the filter of the table on screen.
 * @throws VigilError `not-found` (another organization's integration).
 */
export async function exportFindingsOf(
  db: Executor,
  caller: Caller,
  checks: CheckCatalogue,
  filter: Omit<FindingsFilter, 'cursor' | 'limit'> & { format: FindingExportFormat; version: string },
): Promise<{ text: string; count: number }> {
  const query = await findingQueryOf(db, caller, checks, filter);
  const rows: FindingWithSuppression[] = [];
  let after: { v: string | number; id: string } | undefined;
  for (;;) {
    const page = await q.pageFindings(db, { ...query, sort: filter.sort, order: filter.order, after, limit: 500 });
    rows.push(...page.items);
    const last = page.items.at(-1);
    if (!page.more || !last) break;
    after = { v: last.sort_value, id: last.id };
  }
  const tenants = new Map((await listIntegrations(db)).map((i) => [i.id, i.tenant_id]));
  return { text: renderFindings(rows, filter.format, { checks: [...checks.values()], tenants, version: filter.version }), count: rows.length };
}

/** An alert row as stored. */
type AlertRow = NonNullable<Awaited<ReturnType<typeof getAlert>>>;

/** The names an alert view joins: environments and agents by integration and id (`integrationId\u0000id`). */
type AlertNames = Awaited<ReturnType<typeof q.environmentAndAgentNames>>;

/** A non-empty string field of a detail, or null. */
const textOf = (d: Record<string, unknown>, ...keys: string[]): string | null => {
  for (const k of keys) if (typeof d[k] === 'string' && d[k]) return d[k];
  return null;
};

/**
 * The environment and agent an alert's detail names, by the keys the detections and runtime protection write
 * (`environmentId`; `agentId` or `botId`, with `agentName` or `agent` as its name).
 */
function subjectOf(detail: Record<string, unknown> | null) {
  const d = detail ?? {};
  return { environmentId: textOf(d, 'environmentId'), agentId: textOf(d, 'agentId', 'botId'), agentName: textOf(d, 'agentName', 'agent') };
}

/** An alert as the API shows it, with the ids of its audit records and the names of what it is about. */
function alertView(a: AlertRow, eventIds: string[], names: AlertNames): Alert {
  const detail = a.detail ? (JSON.parse(a.detail) as Record<string, unknown>) : null;
  const subject = subjectOf(detail);
  const key = (id: string | null) => `${a.integration_id}\u0000${id}`;
  return {
    id: a.id,
    integrationId: a.integration_id,
    ruleId: a.rule_id,
    severity: a.severity,
    status: a.status,
    title: a.title,
    detail,
    windowStart: a.window_start,
    windowEnd: a.window_end,
    createdAt: a.created_at,
    updatedAt: a.updated_at,
    eventIds,
    environmentId: subject.environmentId,
    environmentName: (subject.environmentId && names.environments.get(key(subject.environmentId))) ?? null,
    agentId: subject.agentId,
    agentName: subject.agentName ?? (subject.agentId && names.agents.get(key(subject.agentId))) ?? null,
  };
}

/** Alert views of stored rows: their audit record ids, environment and agent names read in one pass each. */
async function alertViews(db: Executor, rows: AlertRow[]): Promise<Alert[]> {
  const linked = await alertEventIds(
    db,
    rows.map((a) => a.id),
  );
  const subjects = rows.map((a) => ({ integrationId: a.integration_id, ...subjectOf(a.detail ? (JSON.parse(a.detail) as Record<string, unknown>) : null) }));
  const names: AlertNames = await q.environmentAndAgentNames(db, [...new Set(rows.map((a) => a.integration_id))], {
    environmentIds: [...new Set(subjects.map((x) => x.environmentId).filter((x): x is string => !!x))],
    agentIds: [...new Set(subjects.map((x) => x.agentId).filter((x): x is string => !!x))],
  });
  return rows.map((a) => alertView(a, linked.get(a.id) ?? [], names));
}

/** Filters and order of {@link listAlertsPage} (the API's query; see `AlertsQuery` in contract/alerts.ts). */
export interface AlertsFilter {
  integrationId?: string | undefined;
  status?: string | undefined;
  ruleId?: string | undefined;
  severity?: string | undefined;
  environmentId?: string | undefined;
  q?: string | undefined;
  /** Alerts created at or after this instant (parsable by `Date`; the API passes ISO 8601 with an offset). */
  since?: string | undefined;
  /** Alerts created before this instant (exclusive). */
  until?: string | undefined;
  /** @default 'createdAt' */
  sort?: AlertSort | undefined;
  /** @default 'desc' */
  order?: 'asc' | 'desc' | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * Alerts of the organization, filtered, in the order asked (newest first by default), keyset-paged, with `total`: how
 * many the filters select over all pages. The cursor holds the order it was made for: passed with another order, it
 * is refused.
 * @throws VigilError `not-found` (another organization's integration); `invalid-input` / `INVALID_CURSOR`.
 */
export async function listAlertsPage(db: Executor, caller: Caller, filter: AlertsFilter): Promise<Page<Alert> & { total: number }> {
  const range = timeRangeOf(filter);
  const integrationIds = await scopeIntegrations(db, caller, filter.integrationId);
  const sort = filter.sort ?? 'createdAt';
  const order = filter.order ?? 'desc';
  const numeric = sort === 'severity' || sort === 'status';
  const after = decodeCursor<{ s: string; v: string | number; at: string; id: string }>(filter.cursor, {
    s: 'string',
    v: numeric ? 'number' : 'string',
    at: 'string',
    id: 'string',
  });
  if (after && after.s !== `${sort}:${order}`) throw cursorOfAnotherOrder();
  const query = {
    integrationIds,
    status: filter.status,
    ruleId: filter.ruleId,
    severity: filter.severity,
    environmentId: filter.environmentId,
    q: filter.q,
    ...range,
  };
  const [{ items, more }, total] = await Promise.all([q.pageAlerts(db, { ...query, sort, order, after, limit: filter.limit }), q.countAlerts(db, query)]);
  const last = items.at(-1);
  const v = last ? (numeric ? Number(last.sort_value) : String(last.sort_value)) : null;
  return {
    items: await alertViews(db, items),
    nextCursor: more && last ? encodeCursor({ s: `${sort}:${order}`, v, at: last.created_at, id: last.id }) : null,
    total,
  };
}

/**
 * The bounds of a list's time filter as the store compares them: ISO 8601 UTC with milliseconds, the form every
 * stored timestamp has, so text comparison orders them on SQLite and PostgreSQL alike. `since` is inclusive, `until`
 * exclusive (as the events list always was), so consecutive ranges neither overlap nor leave a gap.
 * @throws VigilError `invalid-input` / `INVALID_INPUT` naming `since` or `until` when it is not a date and time, and
 * naming `since` when it is after `until`.
 */
function timeRangeOf(filter: { since?: string | undefined; until?: string | undefined }): { since: string | undefined; until: string | undefined } {
  const instant = (field: 'since' | 'until') => {
    const raw = filter[field];
    if (raw === undefined || raw === '') return undefined;
    const t = new Date(raw);
    if (Number.isNaN(t.getTime()))
      throw new VigilError('INVALID_INPUT', (name) => `${name(field)} '${raw}' is not a date and time.`, {
        field,
        remediation: 'Give ISO 8601 with an offset, e.g. 2026-11-20T08:00:00Z.',
      });
    return t.toISOString();
  };
  const since = instant('since');
  const until = instant('until');
  if (since !== undefined && until !== undefined && since > until)
    throw new VigilError('INVALID_INPUT', (name) => `${name('since')} (${filter.since}) is after ${name('until')} (${filter.until}).`, {
      field: 'since',
      remediation: (name) => `Give a ${name('since')} at or before ${name('until')}, or leave one of them out.`,
    });
  return { since, until };
}

/** A cursor passed with another order than the one it was made for: VigilError `INVALID_CURSOR` naming `cursor`. */
export const cursorOfAnotherOrder = () =>
  new VigilError('INVALID_CURSOR', 'cursor was made for another order of the list.', {
    field: 'cursor',
    remediation: 'Leave cursor out when you change sort or order; pass nextCursor only with the order it came with.',
  });

/** Where to look for alert ids, in a not-found error. */
const ALERT_IDS: ErrorText = (_, act) => `To see the alerts, ${act({ do: 'listAlerts' })}.`;

/** Checks an alert status; @throws VigilError `invalid-input` naming `status`. */
function alertStatusOf(status: string): (typeof ALERT_STATUSES)[number] {
  if (!(ALERT_STATUSES as readonly string[]).includes(status))
    throw new VigilError('INVALID_INPUT', `status must be one of ${ALERT_STATUSES.join(', ')}.`, {
      field: 'status',
      remediation: 'Use acknowledged while you look into it, closed when done.',
    });
  return status as (typeof ALERT_STATUSES)[number];
}

/**
 * Sets the status of an alert of the caller's organization (new, acknowledged, closed), recording the change in the
 * alert's history with the caller as its author. Admin only.
 * @returns the alert as it now stands.
 * @throws VigilError `not-found` / `ALERT_NOT_FOUND` (absent or another organization's); `invalid-input` naming
 *   `status`; `authorization` / `FORBIDDEN_ROLE` for a viewer.
 */
export async function setAlertStatus(db: Executor, caller: Caller, id: string, status: string, now = new Date()): Promise<Alert> {
  return (await setAlertsStatus(db, caller, [id], status, now, 'id')).items[0]!;
}

/**
 * Sets the status of several alerts of the caller's organization at once, each change recorded in its alert's history
 * as a single change is. All or nothing: when one id is absent or another organization's, nothing changes and the
 * error names that id (answered as for one that does not exist). Admin only.
 * @param field the input field the ids came from, named by a not-found error (`ids` for the API's body).
 * @returns the alerts as they now stand, in the order of `ids` (repeated ids once), and how many changed status.
 * @throws VigilError `not-found` / `ALERT_NOT_FOUND`; `invalid-input` naming `status`; `authorization` for a viewer.
 */
export async function setAlertsStatus(
  db: Executor,
  caller: Caller,
  ids: string[],
  status: string,
  now = new Date(),
  field = 'ids',
): Promise<{ items: Alert[]; changed: number }> {
  requireRole(caller, 'admin');
  const to = alertStatusOf(status);
  const unique = [...new Set(ids)];
  return inTransaction(db, async (trx) => {
    const rows: AlertRow[] = [];
    for (const id of unique) {
      const row = await getAlert(trx, id);
      try {
        rows.push(await requireOwned(trx, caller, 'alert', id, row, ALERT_IDS));
      } catch (e) {
        if (e instanceof VigilError && field !== 'id') throw new VigilError('ALERT_NOT_FOUND', e.message, { field, remediation: ALERT_IDS });
        throw e;
      }
    }
    let changed = 0;
    const at = now.toISOString();
    for (const row of rows)
      if (row.status !== to) {
        await storeAlertStatus(trx, row.id, to, at, actorOf(caller));
        changed++;
      }
    const fresh = await Promise.all(rows.map(async (r) => (await getAlert(trx, r.id))!));
    return { items: await alertViews(trx, fresh), changed };
  });
}

/** Most events an alert's page lists. */
const ALERT_EVENTS_SHOWN = 200;

/**
 * One alert of the caller's organization with the audit events behind it (normalised, newest first), its status
 * history, and the most severe open finding on the agent or resource its detail names (agent, flow, connector,
 * service principal…), when there is one.
 * @throws VigilError `not-found` / `ALERT_NOT_FOUND` (absent or another organization's).
 */
export async function alertDetail(db: Executor, caller: Caller, checks: CheckCatalogue, id: string): Promise<AlertDetail> {
  const row = await requireOwned(db, caller, 'alert', id, await getAlert(db, id), ALERT_IDS);
  const [view] = await alertViews(db, [row]);
  const { items: events } = await q.pageEvents(db, { integrationIds: [row.integration_id], ids: view!.eventIds, limit: ALERT_EVENTS_SHOWN });
  const d = view!.detail ?? {};
  const resources = [
    ...new Set(
      ['agentId', 'botId', 'flowId', 'connectorId', 'appId', 'servicePrincipal', 'reportId']
        .map((k) => d[k])
        .filter((v): v is string => typeof v === 'string' && v !== ''),
    ),
  ];
  const related = resources.length
    ? (await q.pageFindings(db, { integrationIds: [row.integration_id], status: 'open', resourceIds: resources, limit: 1, at: now() })).items[0]
    : undefined;
  return {
    ...view!,
    events: await eventViews(db, events),
    history: (await alertHistory(db, id)).map((h) => ({ at: h.at, from: h.from_status, to: h.to_status, actor: h.actor })),
    relatedFinding: related ? (await findingViews(db, [related], checks))[0]! : null,
  };
}

/** Now, as ISO 8601 UTC. */
const now = () => new Date().toISOString();

/**
 * One audit event of the caller's organization with its raw record as the upstream API sent it.
 * @throws VigilError `not-found` / `EVENT_NOT_FOUND` (absent or another organization's).
 */
export async function eventDetail(db: Executor, caller: Caller, id: string): Promise<EventDetail> {
  const integrationIds = (await integrationsInScope(db, caller)).map((i) => i.id);
  const { items } = await q.pageEvents(db, { integrationIds, ids: [id], limit: 1 });
  if (!items[0]) throw notFound('event', id, (_, act) => `To see the events, ${act({ do: 'listEvents' })}.`);
  const [withRecord] = await withRaw(db, items);
  return { ...(await eventViews(db, items))[0]!, raw: withRecord!.raw };
}

/** Events as the API shows them, each acted-on object named from the inventory in one pass. */
async function eventViews(db: Executor, rows: Parameters<typeof eventView>[0][]): Promise<Event[]> {
  const ids = [...new Set(rows.map((e) => e.object_id).filter((x): x is string => !!x))];
  const names = await q.objectNames(db, [...new Set(rows.map((e) => e.integration_id))], ids);
  return rows.map((e) => eventView(e, names));
}

/** An audit event as the API shows it (normalised columns; the raw record stays in the store). */
function eventView(
  e: {
    id: string;
    integration_id: string;
    content_type: string;
    record_type: number | null;
    creation_time: string;
    operation: string | null;
    workload: string | null;
    user_id: string | null;
    client_ip: string | null;
    object_id: string | null;
  },
  names: ReadonlyMap<string, string> = new Map(),
): Event {
  return {
    id: e.id,
    integrationId: e.integration_id,
    contentType: e.content_type,
    recordType: e.record_type,
    creationTime: e.creation_time,
    operation: e.operation,
    workload: e.workload,
    userId: e.user_id,
    clientIp: e.client_ip,
    objectId: e.object_id,
    objectName: (e.object_id && names.get(`${e.integration_id}\u0000${e.object_id}`)) ?? null,
  };
}

/** Filters of {@link listEventsPage}. */
interface EventsFilter {
  integrationId?: string | undefined;
  /** An instant parsable by `Date` (the API passes ISO 8601 with an offset); events at or after it. */
  since?: string | undefined;
  /** An instant parsable by `Date`; events before it. */
  until?: string | undefined;
  operation?: string | undefined;
  userId?: string | undefined;
  /** The object the event acted on (`ObjectId`: an agent, flow, app…). */
  objectId?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * Audit events of the organization, newest first, with how many the filters select over all pages: exact up to
 * `EVENT_COUNT_CAP` (store/repositories/queries.ts), else that number with `totalIsLowerBound` (an audit feed holds millions of records, and
 * counting them all for a page would cost more than the page).
 * @throws VigilError `not-found` / `invalid-input` (cursor).
 */
export async function listEventsPage(db: Executor, caller: Caller, filter: EventsFilter): Promise<Page<Event> & { total: number; totalIsLowerBound: boolean }> {
  const { items, more, where } = await eventRows(db, caller, filter);
  const counted = await q.countEventsUpTo(db, where);
  const last = items.at(-1);
  return {
    items: await eventViews(db, items),
    nextCursor: more && last ? encodeCursor({ at: last.creation_time, id: last.id }) : null,
    total: Math.min(counted, q.EVENT_COUNT_CAP),
    totalIsLowerBound: counted > q.EVENT_COUNT_CAP,
  };
}

/**
 * Audit events as {@link listEventsPage} lists them, each with its raw record as the upstream API sent it (the CLI's
 * `events --json --raw`; the API serves normalised events only).
 * @throws Error when a raw record is missing (the database was altered outside Vigil).
 */
export async function listEventsWithRaw(db: Executor, caller: Caller, filter: EventsFilter): Promise<(Event & { raw: Record<string, unknown> })[]> {
  const { items } = await eventRows(db, caller, filter);
  const raws = await withRaw(db, items);
  const views = await eventViews(db, items);
  return views.map((e, i) => ({ ...e, raw: raws[i]!.raw }));
}

/** One page of stored event rows within the caller's scope, and the filters that selected them (`where`, to count). */
async function eventRows(db: Executor, caller: Caller, filter: EventsFilter) {
  const range = timeRangeOf(filter);
  const integrationIds = await scopeIntegrations(db, caller, filter.integrationId);
  const before = decodeCursor<{ at: string; id: string }>(filter.cursor, { at: 'string', id: 'string' });
  const where = { integrationIds, ...range, operation: filter.operation, userId: filter.userId, objectId: filter.objectId };
  return { ...(await q.pageEvents(db, { ...where, before, limit: filter.limit })), where };
}

/** A collection run as the API shows it. */
function runView(r: RunRow): Run {
  return {
    id: r.id,
    integrationId: r.integration_id,
    status: r.status,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
    attempts: r.attempts,
    counts: r.counts ? (JSON.parse(r.counts) as Record<string, unknown>) : null,
    errors: r.errors ? (JSON.parse(r.errors) as unknown[]) : null,
    http: r.http_stats ? (JSON.parse(r.http_stats) as Record<string, unknown>) : null,
  };
}

/** Per-stream progress of a run from its checkpoints: slices done and errored, records stored. */
async function runProgress(db: Executor, runId: string): Promise<RunProgress> {
  const streams: RunProgress['streams'] = {};
  const total = { done: 0, errored: 0, records: 0 };
  for (const c of await listCheckpoints(db, runId)) {
    const s = (streams[c.stream] ??= { done: 0, errored: 0, records: 0 });
    for (const t of [s, total]) {
      if (c.status === 'error') t.errored++;
      else if (c.status === 'done') t.done++;
      t.records += c.records;
    }
  }
  return { ...total, streams };
}

/**
 * Follows an integration's collection as it runs, from the store (so whichever process runs it): `progress` every
 * `pollMs` while a run is running; once it ends, `evaluating` until the checks' results stamped with the run are
 * written (evaluation commits in one transaction, after the run row is finished) or `evaluationWaitMs` passes; then
 * `finished`. `idle` when no run starts within `idleMs`. Ends after `finished` or `idle`, or when `stopped()`.
 */
export async function* followRun(
  db: Executor,
  integrationId: string,
  options: { pollMs: number; idleMs: number; evaluationWaitMs: number; stopped: () => boolean },
): AsyncGenerator<RunEvent> {
  const pause = () => new Promise((resolve) => setTimeout(resolve, options.pollMs));
  const started = Date.now();
  let following: string | null = null;
  while (!options.stopped()) {
    const running = await findRunningRun(db, integrationId);
    if (running) {
      following = running.id;
      yield { event: 'progress', data: { run: runView(running), progress: await runProgress(db, running.id) } };
    } else if (following) {
      const done = await getRun(db, following);
      if (!done) return;
      const until = Date.now() + options.evaluationWaitMs;
      let evaluated = done.status !== 'failed' && (await hasResultsOfRun(db, integrationId, done.id));
      while (done.status !== 'failed' && !evaluated && !options.stopped() && Date.now() < until) {
        yield { event: 'evaluating', data: { run: runView(done) } };
        await pause();
        evaluated = await hasResultsOfRun(db, integrationId, done.id);
      }
      yield { event: 'finished', data: { ...runView(done), evaluated } };
      return;
    } else if (Date.now() - started >= options.idleMs) {
      const last = await latestFinishedRun(db, integrationId);
      yield { event: 'idle', data: { lastRun: last ? runView(last) : null } };
      return;
    }
    await pause();
  }
}

/** One run of the organization with its progress and whether its checks were evaluated. @throws VigilError `not-found` (absent or another organization's). */
export async function runDetail(db: Executor, caller: Caller, runId: string): Promise<RunDetail> {
  const run = await requireOwned(db, caller, 'run', runId, await getRun(db, runId), (_, act) => `To see the runs, ${act({ do: 'listRuns' })}.`);
  const evaluated = run.status !== 'running' && run.status !== 'failed' && (await hasResultsOfRun(db, run.integration_id, run.id));
  return { ...runView(run), progress: await runProgress(db, run.id), evaluated };
}

/** Recent runs of one integration of the organization, newest first. @throws VigilError `not-found` for another organization's integration. */
export async function listIntegrationRuns(db: Executor, caller: Caller, integrationId: string, limit = 20): Promise<Run[]> {
  const row = await integrationOf(db, caller, integrationId);
  return (await listRuns(db, row.id, limit)).map(runView);
}

/** The sum of result counts. */
function sumCounts(list: q.ResultCounts[]): q.ResultCounts {
  return list.reduce((a, c) => ({ passed: a.passed + c.passed, failed: a.failed + c.failed, notEvaluated: a.notEvaluated + c.notEvaluated }), {
    passed: 0,
    failed: 0,
    notEvaluated: 0,
  });
}

/** 100 × passed ÷ (passed + failed), one decimal, or null when no result was judged (not evaluated never counts). */
function score(c: q.ResultCounts): number | null {
  const judged = c.passed + c.failed;
  return judged ? Math.round((1000 * c.passed) / judged) / 10 : null;
}

/**
 * The latest results grouped by the keys `keysOf` gives each check of the catalogue (its area, or its frameworks),
 * by key: the checks in the group, their summed counts and score. A check without results counts as a check of its
 * group with no results.
 */
function groupResults(byCheck: Map<string, q.ResultCounts>, checks: CheckCatalogue, keysOf: (c: CheckMetadata) => string[]) {
  const groups = new Map<string, { checks: number; counts: q.ResultCounts[] }>();
  for (const c of checks.values()) {
    for (const key of keysOf(c)) {
      const g = groups.get(key) ?? { checks: 0, counts: [] };
      g.checks++;
      const r = byCheck.get(c.id);
      if (r) g.counts.push(r);
      groups.set(key, g);
    }
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, g]) => {
      const sum = sumCounts(g.counts);
      return [key, { checks: g.checks, score: score(sum), ...sum }] as const;
    });
}

/** Days of history the dashboard's severity chart covers. */
const DASHBOARD_DAYS = 30;

/**
 * The dashboard of an organization: open findings by severity per day (UTC, last {@link DASHBOARD_DAYS} days), the
 * ten riskiest agents, coverage (what checks could not evaluate and why: per integration, check and reason, the count
 * and the first resources by name), and the last collection per integration.
 */
export async function dashboard(db: Kysely<Database>, caller: Caller, checks: CheckCatalogue, now = new Date()): Promise<Dashboard> {
  const integrations = await integrationsInScope(db, caller);
  const ids = integrations.map((i) => i.id);
  const names = new Map(integrations.map((i) => [i.id, i.name]));
  const days = await q.openFindingsByDay(db, ids, DASHBOARD_DAYS, now);
  const byCheck = await q.resultsByCheck(db, ids);
  const current = sumCounts([...byCheck.values()]);
  return {
    posture: {
      ...current,
      score: score(current),
      trend: (await q.postureByDay(db, ids, DASHBOARD_DAYS, now)).map((d) => ({ date: d.date, score: d.counts ? score(d.counts) : null, counts: d.counts })),
    },
    areas: groupResults(byCheck, checks, (c) => [c.area]).map(([area, g]) => ({ area, ...g })),
    frameworks: groupResults(byCheck, checks, (c) => Object.keys(c.frameworks).filter((f) => c.frameworks[f]?.length)).map(([framework, g]) => ({
      framework,
      ...g,
    })),
    severityOverTime: days.map((d) => ({ date: d.date, ...Object.fromEntries(SEVERITIES.map((s) => [s, Math.max(0, d.counts[s] ?? 0)])) })) as ({
      date: string;
    } & Record<Severity, number>)[],
    riskiestAgents: await riskiestAgents(db, caller, { limit: 10 }),
    coverage: (await q.notEvaluated(db, ids)).map((c) => ({
      integrationId: c.integrationId,
      integrationName: names.get(c.integrationId) ?? c.integrationId,
      checkId: c.checkId,
      title: checks.get(c.checkId)?.title ?? c.checkId,
      notEvaluated: c.resources,
      reason: c.reason,
      resources: c.sample,
    })),
    lastCollections: await Promise.all(
      integrations.map(async (i) => {
        const run = await latestFinishedRun(db, i.id);
        return { integrationId: i.id, name: i.name, run: run ? runView(run) : null };
      }),
    ),
  };
}

/**
 * Copilot Studio agents of the organization (or of one of its integrations) ranked by risk, highest score first: open
 * findings weighted by severity, times how far the agent reaches (see `checks/risk.ts`).
 * @param filter.limit at most this many agents.
 * @throws VigilError `not-found` for another organization's integration.
 */
export async function riskiestAgents(
  db: Kysely<Database>,
  caller: Caller,
  filter: { integrationId?: string | undefined; limit: number },
): Promise<RankedAgent[]> {
  const ranked = await rankAgents(db, await scopeIntegrations(db, caller, filter.integrationId));
  return ranked.slice(0, filter.limit).map((a) => ({
    integrationId: a.integrationId,
    agentId: a.agentId,
    environmentId: a.environmentId,
    name: a.name,
    score: a.score,
    openFindings: a.openFindings,
    reach: a.reach,
    reasons: a.reasons,
    touch: a.touch,
  }));
}

/**
 * The agent page: configuration, authentication, sharing (access control policy), components, owner, open and
 * resolved findings on the agent, and recent audit events naming it.
 * @throws VigilError `not-found` for an absent agent or another organization's integration.
 */
export async function agentDetail(db: Executor, caller: Caller, checks: CheckCatalogue, integrationId: string, agentId: string): Promise<AgentDetail> {
  const integration = await integrationOf(db, caller, integrationId);
  const a = await q.findAgent(db, integration.id, agentId);
  if (!a) throw notFound('agent', agentId, 'List the agents with GET /api/v1/inventory/agents.');
  const env = (await q.environmentNames(db, integration.id, [a.environment_id])).get(a.environment_id);
  const owner = a.owner_id ? await q.dataverseUser(db, integration.id, a.environment_id, a.owner_id) : undefined;
  const settings = (await q.estateObjectsWhere(db, integration.id, 'agentSettings', 'botId', a.id, 1))[0];
  const components = await q.estateObjectsWhere(db, integration.id, 'agentComponents', 'botId', a.id);
  const findings = await q.pageFindings(db, { integrationIds: [integration.id], resourceId: a.id, limit: 200, at: new Date().toISOString() });
  const events = await q.pageEvents(db, { integrationIds: [integration.id], objectId: a.id, limit: 50 });
  return {
    agent: {
      id: a.id,
      integrationId: integration.id,
      environmentId: a.environment_id,
      name: a.name,
      schemaName: a.schema_name,
      authenticationMode: a.authentication_mode,
      authenticationTrigger: a.authentication_trigger,
      accessControlPolicy: a.access_control_policy,
      publishedOn: a.published_on,
      modifiedOn: a.modified_on,
      createdOn: a.created_on,
      stateCode: a.state_code,
      statusCode: a.status_code,
      raw: JSON.parse(a.raw) as Record<string, unknown>,
    },
    environment: { id: a.environment_id, name: env ?? null },
    owner: owner
      ? { id: owner.id, name: owner.full_name, entraObjectId: owner.aad_object_id }
      : a.owner_id
        ? { id: a.owner_id, name: null, entraObjectId: null }
        : null,
    settings: settings?.attrs ?? null,
    components: components.map((c) => ({ id: c.id, name: c.name, attributes: c.attrs })),
    findings: await findingViews(db, findings.items, checks),
    events: await eventViews(db, events.items),
  };
}
