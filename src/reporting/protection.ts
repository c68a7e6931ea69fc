import { actorOf, type Caller } from '../access/index.ts';
import { integrationOf, integrationsInScope, requireRole } from '../access/scope.ts';
import type { CloudProfile } from '../config/cloud.ts';
import type { Page } from '../contract/common.ts';
import type {
  AgentStep,
  AgentStepFacets,
  ConversationTimeline,
  OutcomeCounts,
  ProtectionEndpoint,
  ProtectionIntegration,
  ProtectionPolicies,
  ProtectionPolicyView,
  ProtectionSetupReport,
  ProtectionSummary,
  STEP_OUTCOMES,
  TranscriptConversationList,
  TranscriptTurn,
} from '../contract/protection.ts';
import { VigilError } from '../core/errors.ts';
import { enableProtection, protectionEndpointOf, protectionSetupReport, stepView } from '../protection/endpoints.ts';
import { protectionPolicies, setProtectionPolicy } from '../protection/policies.ts';
import type { Executor } from '../store/db.ts';
import { listEnvironments } from '../store/repositories/inventory.ts';
import {
  conversationTimeline,
  countAgentSteps,
  decisionsByDetector,
  listAgentSteps,
  stepFacets,
  stepOutcomesByIntegration,
  stepOutcomesOverTime,
  type AgentStepQuery,
  type AgentStepRow,
  type OutcomeCounts as StoredOutcomeCounts,
} from '../store/repositories/protection.ts';
import { conversationTurns, listTranscriptConversations, type TranscriptTurnRow } from '../store/repositories/transcripts.ts';
import { cursorOfAnotherOrder, decodeCursor, encodeCursor } from './index.ts';

/**
 * Runtime protection's use cases for the API, the portal and the CLI (issue 19), each taking the caller and scoped to
 * its organization like every other use case (src/access/scope.ts): an integration of another organization answers
 * `INTEGRATION_NOT_FOUND` exactly like one that never existed. They call the protection module's operations
 * (src/protection/endpoints.ts, policies.ts) once the integration is the caller's, and return the views of
 * src/contract/protection.ts, so `vigil protection … --json` equals the API's JSON.
 */

/** The deployment values the set-up needs: the public API URL (null when not set) and the cloud's authority host. */
export interface ProtectionDeployment {
  apiUrl: string | null;
  cloud: Pick<CloudProfile, 'authorityHost'>;
}

/** Every integration of the caller's organization (oldest first) with its endpoint, or null when protection is off. */
export async function protectionOverview(db: Executor, caller: Caller, apiUrl: string | null): Promise<{ items: ProtectionIntegration[] }> {
  const items: ProtectionIntegration[] = [];
  for (const i of await integrationsInScope(db, caller))
    items.push({ integrationId: i.id, integrationName: i.name, tenantId: i.tenant_id, endpoint: await protectionEndpointOf(db, i.id, apiUrl) });
  return { items };
}

/**
 * The set-up report of an integration of the caller's organization: the steps with the exact values, validation,
 * analyses per environment and the problems with their fixes (protection/endpoints.ts `protectionSetupReport`).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND` (absent or another organization's).
 */
export async function protectionSetupOf(db: Executor, caller: Caller, integrationId: string, d: ProtectionDeployment): Promise<ProtectionSetupReport> {
  const integration = await integrationOf(db, caller, integrationId);
  return protectionSetupReport(db, integration.id, d.apiUrl, d.cloud);
}

/**
 * Enables protection for an integration of the caller's organization, or changes its application and audiences
 * (idempotent; protection/endpoints.ts `enableProtection`). Admin only.
 * @throws VigilError `authorization` / `FORBIDDEN_ROLE`; `not-found` / `INTEGRATION_NOT_FOUND`; `invalid-input` naming `appId`.
 */
export async function enableProtectionFor(
  db: Executor,
  caller: Caller,
  integrationId: string,
  input: { appId?: string | undefined; audiences?: string[] | undefined },
  apiUrl: string | null,
): Promise<ProtectionEndpoint> {
  requireRole(caller, 'admin');
  const integration = await integrationOf(db, caller, integrationId);
  return enableProtection(db, { integrationId: integration.id, appId: input.appId, audiences: input.audiences, apiUrl });
}

/** Filters of {@link protectionStepsPage}. */
export interface StepsFilter {
  conversationId?: string | undefined;
  agentId?: string | undefined;
  environmentId?: string | undefined;
  outcome?: (typeof STEP_OUTCOMES)[number] | undefined;
  /** The detector that decided the step. */
  detector?: string | undefined;
  /** An instant parsable by `Date`; steps received at or after it. */
  since?: string | undefined;
  /** An instant parsable by `Date`; steps received before it. */
  until?: string | undefined;
  /** Text in the tool's name or the reason (case-insensitive). */
  q?: string | undefined;
  /** By time received: `desc` (newest first, the default) or `asc`. */
  order?: 'asc' | 'desc' | undefined;
  cursor?: string | undefined;
  limit: number;
}

const OUTCOME: Record<(typeof STEP_OUTCOMES)[number], NonNullable<AgentStepQuery['outcome']>> = {
  blocked: 'blocked',
  wouldBlock: 'would-block',
  decision: 'decision',
  allowed: 'allowed',
  timeout: 'timeout',
};

/** Step views with the environment's display name from the last collection. */
async function stepViews(db: Executor, integrationId: string, rows: AgentStepRow[]): Promise<AgentStep[]> {
  const names = await environmentNames(db, integrationId);
  return rows.map((r) => {
    const { environmentId, ...rest } = stepView(r);
    return { ...rest, environmentId, environmentName: environmentId ? (names.get(environmentId.toLowerCase()) ?? null) : null };
  });
}

/** `value` (named `field`) as ISO 8601 UTC, or undefined when absent. @throws VigilError `invalid-input` naming `field`. */
function instant(field: 'since' | 'until', value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const t = new Date(value);
  if (Number.isNaN(t.getTime()))
    throw new VigilError('INVALID_INPUT', `${field} '${value}' is not a date and time.`, { field, remediation: 'Give ISO 8601, e.g. 2026-11-20T08:00:00Z.' });
  return t.toISOString();
}

/**
 * The steps an integration of the caller's organization answered, newest first (or oldest first), in keyset pages,
 * with the total the filters select.
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`; `invalid-input` naming `cursor`, `since` or `until`.
 */
export async function protectionStepsPage(
  db: Executor,
  caller: Caller,
  integrationId: string,
  filter: StepsFilter,
): Promise<Page<AgentStep> & { total: number }> {
  const integration = await integrationOf(db, caller, integrationId);
  const order = filter.order ?? 'desc';
  // The cursor names the order it was made for: a next page asked in the other order would start from the wrong end.
  const after = decodeCursor<{ o: string; at: string; id: string }>(filter.cursor, { o: 'string', at: 'string', id: 'string' });
  if (after && after.o !== order) throw cursorOfAnotherOrder();
  const from = instant('since', filter.since);
  const to = instant('until', filter.until);
  const query: AgentStepQuery = {
    integrationIds: [integration.id],
    ...(filter.conversationId !== undefined ? { conversationId: filter.conversationId } : {}),
    ...(filter.agentId !== undefined ? { agentId: filter.agentId } : {}),
    ...(filter.environmentId !== undefined ? { environmentId: filter.environmentId } : {}),
    ...(filter.outcome !== undefined ? { outcome: OUTCOME[filter.outcome] } : {}),
    ...(filter.detector !== undefined ? { decidedBy: filter.detector } : {}),
    ...(filter.q !== undefined && filter.q.trim() ? { q: filter.q.trim() } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
  };
  const rows = await listAgentSteps(db, {
    ...query,
    order,
    ...(after ? { after: { receivedAt: after.at, id: after.id } } : {}),
    limit: filter.limit + 1,
  });
  const items = rows.slice(0, filter.limit);
  const last = items.at(-1);
  return {
    items: await stepViews(db, integration.id, items),
    nextCursor: rows.length > filter.limit && last ? encodeCursor({ o: order, at: last.received_at, id: last.id }) : null,
    total: await countAgentSteps(db, query),
  };
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Store counts as the API's {@link OutcomeCounts}; zeros when absent. */
function outcomeView(c: StoredOutcomeCounts | undefined): OutcomeCounts {
  return { total: c?.total ?? 0, blocked: c?.blocked ?? 0, wouldBlock: c?.would_block ?? 0, timedOut: c?.timed_out ?? 0, allowed: c?.allowed ?? 0 };
}

/**
 * The decisions of the caller's organization's integrations at `now`: per integration (oldest first) its steps of the
 * last 24 hours and 7 days by outcome and its top three deciding detectors of the 7 days; and, summed over them, the
 * steps per period by outcome (`hour`: the 48 hours before `now`; `day`: the 14 UTC days up to today), every period
 * present. Aggregated in SQL (store/repositories/protection.ts).
 */
export async function protectionSummary(db: Executor, caller: Caller, bucket: 'hour' | 'day', now = new Date()): Promise<ProtectionSummary> {
  const integrations = await integrationsInScope(db, caller);
  const ids = integrations.map((i) => i.id);
  const day = await stepOutcomesByIntegration(db, ids, new Date(now.getTime() - DAY).toISOString());
  const week = await stepOutcomesByIntegration(db, ids, new Date(now.getTime() - 7 * DAY).toISOString());
  const detectors = await decisionsByDetector(db, ids, new Date(now.getTime() - 7 * DAY).toISOString());
  // The periods of the window, as the prefixes of ISO 8601 UTC times the store groups by.
  const width = bucket === 'hour' ? 13 : 10;
  const step = bucket === 'hour' ? HOUR : DAY;
  const count = bucket === 'hour' ? 48 : 14;
  const periods = Array.from({ length: count }, (_, i) => new Date(now.getTime() - (count - 1 - i) * step).toISOString().slice(0, width));
  const start = bucket === 'hour' ? `${periods[0]}:00:00.000Z` : `${periods[0]}T00:00:00.000Z`;
  const counted = new Map((await stepOutcomesOverTime(db, ids, start, bucket)).map((p) => [p.period, p]));
  return {
    generatedAt: now.toISOString(),
    bucket,
    integrations: integrations.map((i) => ({
      integrationId: i.id,
      integrationName: i.name,
      last24h: outcomeView(day.get(i.id)),
      last7d: outcomeView(week.get(i.id)),
      topDetectors: detectors
        .filter((d) => d.integration_id === i.id)
        .slice(0, 3)
        .map((d) => ({ detector: d.detector, decisions: d.decisions })),
    })),
    series: periods.map((period) => ({ period, ...outcomeView(counted.get(period)) })),
  };
}

/**
 * The values an integration's steps take for the step list's filters: the deciding detectors, the agents with their
 * names and the environments with their names from the last collection, each with its number of steps.
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`.
 */
export async function protectionStepFacets(db: Executor, caller: Caller, integrationId: string): Promise<AgentStepFacets> {
  const integration = await integrationOf(db, caller, integrationId);
  const f = await stepFacets(db, integration.id);
  const names = await environmentNames(db, integration.id);
  return {
    detectors: f.detectors.map((d) => ({ detector: d.value, steps: d.steps })),
    agents: f.agents.map((a) => ({ agentId: a.value, agentName: a.name, steps: a.steps })),
    environments: f.environments.map((e) => ({ environmentId: e.value, environmentName: names.get(e.value.toLowerCase()) ?? null, steps: e.steps })),
  };
}

/** Names of an integration's collected environments by lower-cased id. */
async function environmentNames(db: Executor, integrationId: string): Promise<Map<string, string | null>> {
  return new Map((await listEnvironments(db, integrationId)).map((e) => [e.id.toLowerCase(), e.display_name as string | null]));
}

/** The pattern names of a turn's stored markers (JSON `{injection?: {names}, jailbreak?: {names}}`). */
function markerNames(markers: string | null): string[] {
  if (!markers) return [];
  try {
    const m = JSON.parse(markers) as { injection?: { names?: string[] }; jailbreak?: { names?: string[] } };
    return [...new Set([...(m.jailbreak?.names ?? []), ...(m.injection?.names ?? [])])];
  } catch {
    return [];
  }
}

/** The view of a stored transcript turn. */
function turnView(r: TranscriptTurnRow, names: Map<string, string | null>): TranscriptTurn {
  let findingTypes: string[] = [];
  try {
    findingTypes = JSON.parse(r.finding_types) as string[];
  } catch {
    findingTypes = [];
  }
  return {
    source: 'transcript',
    id: r.id,
    at: r.turn_at,
    environmentId: r.environment_id,
    environmentName: names.get(r.environment_id.toLowerCase()) ?? null,
    transcriptId: r.transcript_id,
    conversationId: r.conversation_id,
    agentId: r.agent_id,
    agentName: r.agent_name,
    userId: r.user_id,
    channelId: r.channel_id,
    role: r.role as TranscriptTurn['role'],
    toolName: r.tool_name,
    text: r.text,
    textLength: r.text_length,
    secrets: r.secrets,
    personal: r.personal,
    findingTypes,
    injection: r.injection,
    jailbreak: r.jailbreak,
    markers: markerNames(r.markers),
  };
}

/**
 * A conversation's runtime-protection steps and collected transcript turns, each in the order they happened (oldest
 * first, at most 1,000 of each), with the agent, environment and user it ran for (from the steps, else the turns).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`; `not-found` / `CONVERSATION_NOT_FOUND` when neither a
 *   step nor a transcript turn of it was recorded for the integration.
 */
export async function conversationTimelineOf(db: Executor, caller: Caller, integrationId: string, conversationId: string): Promise<ConversationTimeline> {
  const integration = await integrationOf(db, caller, integrationId);
  const rows = await conversationTimeline(db, integration.id, conversationId);
  const turnRows = await conversationTurns(db, integration.id, conversationId);
  if (rows.length === 0 && turnRows.length === 0)
    throw new VigilError('CONVERSATION_NOT_FOUND', `No step or transcript turn of conversation '${conversationId}' was recorded for this integration.`, {
      field: 'conversationId',
      remediation:
        'List the steps with GET /api/v1/protection/{integrationId}/steps, or the collected transcripts with GET /api/v1/protection/{integrationId}/transcripts, and take a conversationId from them.',
    });
  const steps = await stepViews(db, integration.id, rows);
  const names = await environmentNames(db, integration.id);
  const turns = turnRows.map((r) => turnView(r, names));
  const first = steps.find((s) => s.agentId !== null) ?? steps[0];
  const firstTurn = turns.find((t) => t.agentId !== null) ?? turns[0];
  return {
    integrationId: integration.id,
    conversationId,
    agentId: first?.agentId ?? firstTurn?.agentId ?? null,
    agentName: steps.findLast((s) => s.agentName !== null)?.agentName ?? firstTurn?.agentName ?? null,
    environmentId: first?.environmentId ?? firstTurn?.environmentId ?? null,
    environmentName: first?.environmentName ?? firstTurn?.environmentName ?? null,
    userId: steps.find((s) => s.userId !== null)?.userId ?? turns.find((t) => t.userId !== null)?.userId ?? null,
    steps,
    turns,
  };
}

/**
 * The conversations of the collected Copilot Studio transcripts of an integration of the caller's organization, the
 * latest first, at most `limit`, with their turn counts and the inspection's and markers' totals.
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`.
 */
export async function transcriptConversationsOf(db: Executor, caller: Caller, integrationId: string, limit: number): Promise<TranscriptConversationList> {
  const integration = await integrationOf(db, caller, integrationId);
  const names = await environmentNames(db, integration.id);
  const n = (v: number | string | null): number => Number(v ?? 0);
  const items = (await listTranscriptConversations(db, integration.id, limit)).map((r) => ({
    conversationId: r.conversation_id,
    environmentId: r.environment_id,
    environmentName: names.get(r.environment_id.toLowerCase()) ?? null,
    agentId: r.agent_id,
    agentName: r.agent_name,
    userId: r.user_id,
    firstAt: r.first_at,
    lastAt: r.last_at,
    turns: n(r.turns),
    secrets: n(r.secrets),
    personal: n(r.personal),
    injection: r.injection === null ? null : Number(r.injection),
    jailbreak: r.jailbreak === null ? null : Number(r.jailbreak),
  }));
  return { items };
}

/**
 * The policies that apply to an integration of the caller's organization and the effective policy for an environment
 * and agent when given (protection/policies.ts).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`.
 */
export async function protectionPoliciesOf(
  db: Executor,
  caller: Caller,
  integrationId: string,
  scope: { environmentId?: string | undefined; agentId?: string | undefined },
): Promise<ProtectionPolicies> {
  const integration = await integrationOf(db, caller, integrationId);
  return protectionPolicies(db, { integrationId: integration.id, environmentId: scope.environmentId, agentId: scope.agentId });
}

/**
 * Sets fields of the policy of an integration of the caller's organization (or of one environment or agent of it),
 * keeping the fields it does not name; the caller is recorded as the updater. Admin only.
 * @throws VigilError `authorization` / `FORBIDDEN_ROLE`; `not-found` / `INTEGRATION_NOT_FOUND`; `invalid-input`
 *   naming the field (e.g. `detectors.jailbreak.threshold`).
 */
export async function setProtectionPolicyFor(
  db: Executor,
  caller: Caller,
  integrationId: string,
  scope: { environmentId?: string | undefined; agentId?: string | undefined },
  changes: unknown,
): Promise<ProtectionPolicyView> {
  requireRole(caller, 'admin');
  const integration = await integrationOf(db, caller, integrationId);
  return setProtectionPolicy(db, { integrationId: integration.id, environmentId: scope.environmentId, agentId: scope.agentId }, changes, actorOf(caller));
}
