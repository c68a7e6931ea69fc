import { randomBytes } from 'node:crypto';
import { VigilError } from '../core/errors.ts';
import { isGuid, normalizeGuid } from '../core/ids.ts';
import type { Executor } from '../store/db.ts';
import type { CloudProfile } from '../config/cloud.ts';
import { findIntegration } from '../store/repositories/integrations.ts';
import type { AgentSettingsAttrs } from '../sources/dataverse/streams/agentSettings.ts';
import { listEnvironments, listEstateObjects } from '../store/repositories/inventory.ts';
import {
  getProtectionEndpointOfIntegration,
  insertProtectionEndpoint,
  listAgentSteps,
  stepsByEnvironment,
  updateProtectionEndpoint,
  type AgentStepRow,
  type ProtectionEndpointRow,
} from '../store/repositories/protection.ts';
import { effectiveAudiences, endpointBaseUrl } from './service.ts';
import { protectionSetup, type ProtectionSetup } from './setup.ts';
import type { Evidence } from './types.ts';

/**
 * Setting up and reading runtime protection (issue 19): an integration's threat-detection endpoint (the base URL and
 * application an administrator enters in the Power Platform admin center, Security > Threat detection), and the agent
 * steps it answered. The CLI calls these today; an API route calls the same ones.
 *
 * Source: https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider (set-up: the Entra
 * application ID and the endpoint link per environment).
 */

/** An endpoint as people see it. */
export interface ProtectionEndpointView {
  id: string;
  integrationId: string;
  /** The Entra application (client) id whose tokens are accepted; null until configured (every call is refused). */
  appId: string | null;
  /** The token audiences accepted: those configured, else the app id, `api://{appId}` and the base URL. */
  audiences: string[];
  /** `{apiUrl}/protection/{id}`, or null while `VIGIL_API_URL` is not set. */
  baseUrl: string | null;
  createdAt: string;
  validatedAt: string | null;
  firstAnalysisAt: string | null;
  lastAnalysisAt: string | null;
  authFailures: number;
  lastAuthFailureAt: string | null;
  lastAuthFailureReason: string | null;
}

function view(r: ProtectionEndpointRow, apiUrl: string | null): ProtectionEndpointView {
  return {
    id: r.id,
    integrationId: r.integration_id,
    appId: r.app_id,
    audiences: effectiveAudiences(r, apiUrl),
    baseUrl: endpointBaseUrl(apiUrl, r.id),
    createdAt: r.created_at,
    validatedAt: r.validated_at,
    firstAnalysisAt: r.first_analysis_at,
    lastAnalysisAt: r.last_analysis_at,
    authFailures: r.auth_failures,
    lastAuthFailureAt: r.last_auth_failure_at,
    lastAuthFailureReason: r.last_auth_failure_reason,
  };
}

/** What {@link enableProtection} needs. */
export interface EnableProtection {
  integrationId: string;
  /**
   * The customer's single-tenant Entra application (client) id that Copilot Studio's tokens are issued to; absent on a
   * first call made to learn the base URL (the application's ID URI must be that URL), given once the app exists.
   */
  appId?: string | undefined;
  /** Accepted token audiences; absent: unchanged (default: the app id, `api://{appId}` and the base URL). */
  audiences?: string[] | undefined;
  apiUrl: string | null;
}

/**
 * Creates the integration's protection endpoint with a random, URL-safe public id (144 bits), or updates its
 * application and audiences when it exists (one endpoint per integration serves every environment of the tenant). The
 * order follows the set-up: the base URL first (an endpoint without an application refuses every call), then the
 * application created with that URL as its ID URI.
 * @throws VigilError `invalid-input` (`appId` not a GUID), `not-found` (integration).
 */
export async function enableProtection(db: Executor, input: EnableProtection): Promise<ProtectionEndpointView> {
  let appId: string | undefined;
  if (input.appId !== undefined) {
    appId = normalizeGuid(input.appId);
    if (!isGuid(appId)) {
      throw new VigilError('INVALID_INPUT', `'${input.appId}' is not an application (client) ID.`, {
        field: 'appId',
        remediation: 'Give the Application (client) ID GUID of the Entra application entered in the Power Platform admin center (Security > Threat detection).',
      });
    }
  }
  const integration = await findIntegration(db, input.integrationId);
  if (!integration?.organization_id) throw new VigilError('INTEGRATION_NOT_FOUND', `No integration '${input.integrationId}'.`, { field: 'integration' });
  const audiences = input.audiences ? JSON.stringify([...new Set(input.audiences.map((a) => a.trim()).filter(Boolean))]) : undefined;
  const at = new Date().toISOString();
  const existing = await getProtectionEndpointOfIntegration(db, integration.id);
  if (existing) {
    const change = { app_id: appId ?? existing.app_id, audiences: audiences ?? existing.audiences };
    if (change.app_id !== existing.app_id || change.audiences !== existing.audiences) await updateProtectionEndpoint(db, existing.id, change, at);
    return view({ ...existing, ...change }, input.apiUrl);
  }
  const row: ProtectionEndpointRow = {
    id: `pe_${randomBytes(18).toString('base64url')}`,
    organization_id: integration.organization_id,
    integration_id: integration.id,
    app_id: appId ?? null,
    audiences: audiences ?? '[]',
    created_at: at,
    updated_at: at,
    validated_at: null,
    first_analysis_at: null,
    last_analysis_at: null,
    auth_failures: 0,
    last_auth_failure_at: null,
    last_auth_failure_reason: null,
  };
  await insertProtectionEndpoint(db, row);
  return view(row, input.apiUrl);
}

/** The integration's endpoint, or null when protection is not enabled. */
export async function protectionEndpointOf(db: Executor, integrationId: string, apiUrl: string | null): Promise<ProtectionEndpointView | null> {
  const row = await getProtectionEndpointOfIntegration(db, integrationId);
  return row ? view(row, apiUrl) : null;
}

/** One answered step as people see it. */
export interface AgentStepView {
  /** Always `runtime`: recorded by the threat-detection endpoint (transcript turns are `transcript`). */
  source: 'runtime';
  id: string;
  receivedAt: string;
  correlationId: string | null;
  environmentId: string | null;
  agentId: string | null;
  agentName: string | null;
  userId: string | null;
  conversationId: string | null;
  toolId: string | null;
  toolName: string | null;
  toolType: string | null;
  blockAction: boolean;
  wouldBlock: boolean;
  mode: string;
  reasonCode: number;
  reason: string;
  decidedBy: string | null;
  verdicts: { detector: string; detected: boolean; confidence: number; summary: string; evidence: Evidence[] }[];
  policyIds: string[];
  latencyMs: number;
  engineMs: number;
  timedOut: boolean;
}

/** The view of a stored step (verdicts and policy ids parsed, times rounded to 0.1 ms). */
export function stepView(r: AgentStepRow): AgentStepView {
  return {
    source: 'runtime',
    id: r.id,
    receivedAt: r.received_at,
    correlationId: r.correlation_id,
    environmentId: r.environment_id,
    agentId: r.agent_id,
    agentName: r.agent_name,
    userId: r.user_id,
    conversationId: r.conversation_id,
    toolId: r.tool_id,
    toolName: r.tool_name,
    toolType: r.tool_type,
    blockAction: r.block_action === 1,
    wouldBlock: r.would_block === 1,
    mode: r.mode,
    reasonCode: r.reason_code,
    reason: r.reason,
    decidedBy: r.decided_by,
    verdicts: JSON.parse(r.verdicts) as AgentStepView['verdicts'],
    policyIds: JSON.parse(r.policy_ids) as string[],
    latencyMs: Math.round(r.latency_ms * 10) / 10,
    engineMs: Math.round(r.engine_ms * 10) / 10,
    timedOut: r.timed_out === 1,
  };
}

/** Steps of an integration, newest first, optionally of one conversation; at most `limit` (default 100). */
export async function protectionEvents(
  db: Executor,
  integrationId: string,
  filter: { conversationId?: string; limit?: number } = {},
): Promise<AgentStepView[]> {
  const rows = await listAgentSteps(db, {
    integrationIds: [integrationId],
    ...(filter.conversationId !== undefined ? { conversationId: filter.conversationId } : {}),
    limit: filter.limit ?? 100,
  });
  return rows.map(stepView);
}

/** What Vigil observed of one environment's set-up: the analyses it received from it. */
interface EnvironmentProtectionStatus {
  environmentId: string;
  displayName: string | null;
  /** Analyses received from agents of this environment. */
  calls: number;
  /** Distinct agents those analyses came from. */
  agentsCalling: number;
  /**
   * Agents of the environment in the last collection, by orchestration: `generative` ones call the provider before
   * each tool; `classic` ones never do (Copilot Studio asks the provider only for generative orchestration), so Vigil
   * cannot guard them; `unknown` when the agent's settings could not be read.
   */
  agents: { generative: number; classic: number; unknown: number };
  firstAnalysisAt: string | null;
  lastAnalysisAt: string | null;
}

/** The set-up of an integration's endpoint and what Vigil can observe of it (the set-up doctor). */
export interface ProtectionSetupReport {
  endpoint: ProtectionEndpointView | null;
  /** The steps with the exact values; null while protection is not enabled or `VIGIL_API_URL` is not set. */
  setup: ProtectionSetup | null;
  /** Every collected environment (and any environment that called without being collected), in id order. */
  environments: EnvironmentProtectionStatus[];
  /** What is missing or wrong, each with its fix; empty when everything observable is in place. */
  problems: string[];
}

/** Why refused calls were refused, in the administrator's terms. */
const REFUSAL_FIX: Record<string, string> = {
  app: 'the token was issued to another application than the one configured: give Vigil the application (client) ID entered in the admin center (set-up step 3)',
  audience: "the token's audience is not accepted: the application's Application ID URI must be the endpoint's base URL",
  tenant: "the token comes from another tenant than the integration's",
  issuer: "the token comes from another tenant than the integration's",
  expired: 'the token had expired: check the clock of the machine running Vigil',
  signature: "the token is not signed by the tenant's published keys",
  keys: "Vigil could not read the tenant's signing keys from Entra ID (network or proxy)",
  missing: 'calls came without a bearer token',
  malformed: 'calls came with a bearer value that is not a token',
};

/**
 * The set-up steps of an integration's endpoint with the exact values (protection/setup.ts), and the set-up doctor:
 * whether Copilot Studio validated the endpoint, which environments sent analyses, and why calls were refused.
 * Source: https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider (set-up per environment;
 * saving calls /validate; only generative-orchestration agents call).
 * @throws VigilError `not-found` (integration).
 */
export async function protectionSetupReport(
  db: Executor,
  integrationId: string,
  apiUrl: string | null,
  cloud: Pick<CloudProfile, 'authorityHost'>,
): Promise<ProtectionSetupReport> {
  const integration = await findIntegration(db, integrationId);
  if (!integration) throw new VigilError('INTEGRATION_NOT_FOUND', `No integration '${integrationId}'.`, { field: 'integration' });
  const endpoint = await protectionEndpointOf(db, integrationId, apiUrl);
  const problems: string[] = [];
  if (!endpoint) problems.push('Runtime protection is not enabled: enabling it creates the endpoint and gives its base URL.');
  else if (!endpoint.baseUrl) problems.push("The endpoint's base URL is unknown: set VIGIL_API_URL to this deployment's public HTTPS address.");
  const setup = endpoint?.baseUrl ? protectionSetup({ cloud, tenantId: integration.tenant_id, baseUrl: endpoint.baseUrl, appId: endpoint.appId }) : null;
  if (endpoint && !endpoint.appId)
    problems.push(
      'No application is configured: create it (steps 1–2), then give Vigil its application (client) ID (step 3); every call is refused until then.',
    );
  if (endpoint?.appId && !endpoint.validatedAt)
    problems.push('Copilot Studio never validated the endpoint: save the provider for an environment in the Power Platform admin center (step 4).');
  if (endpoint && endpoint.authFailures > 0 && endpoint.lastAuthFailureReason)
    problems.push(
      `${endpoint.authFailures} call(s) refused, the last at ${endpoint.lastAuthFailureAt}: ${REFUSAL_FIX[endpoint.lastAuthFailureReason] ?? endpoint.lastAuthFailureReason}.`,
    );
  const seen = new Map((await stepsByEnvironment(db, integrationId)).map((r) => [r.environment_id ?? '', r]));
  const collected = await listEnvironments(db, integrationId);
  const ids = [...new Set([...collected.map((e) => e.id), ...[...seen.keys()].filter(Boolean)])].sort();
  const names = new Map(collected.map((e) => [e.id, e.display_name]));
  // Orchestration per agent, from the agents' settings as last collected (the `agentSettings` stream).
  const byEnvironment = new Map<string, EnvironmentProtectionStatus['agents']>();
  for (const s of await listEstateObjects<AgentSettingsAttrs>(db, integrationId, 'agentSettings')) {
    const counts = byEnvironment.get(s.sliceKey) ?? { generative: 0, classic: 0, unknown: 0 };
    const g = s.attrs.generativeActionsEnabled;
    if (g === true) counts.generative++;
    else if (g === false) counts.classic++;
    else counts.unknown++;
    byEnvironment.set(s.sliceKey, counts);
  }
  const environments = ids.map((id): EnvironmentProtectionStatus => {
    const s = seen.get(id);
    return {
      environmentId: id,
      displayName: names.get(id) ?? null,
      calls: s?.calls ?? 0,
      agentsCalling: s?.agents ?? 0,
      agents: byEnvironment.get(id) ?? { generative: 0, classic: 0, unknown: 0 },
      firstAnalysisAt: s?.first_at ?? null,
      lastAnalysisAt: s?.last_at ?? null,
    };
  });
  if (endpoint?.validatedAt) {
    const silent = environments.filter((e) => e.agents.generative > 0 && e.calls === 0);
    if (silent.length)
      problems.push(
        `No analysis received from ${silent.map((e) => `${e.displayName ?? e.environmentId} (${e.agents.generative} agent(s) with generative orchestration)`).join(', ')}: set up threat detection for each of these environments in the Power Platform admin center (step 4; it is set per environment).`,
      );
  }
  const classic = environments.reduce((k, e) => k + e.agents.classic, 0);
  if (endpoint && classic > 0)
    problems.push(
      `Not covered: ${classic} agent(s) use classic orchestration, and Copilot Studio asks the provider only for agents with generative orchestration; switching them to generative orchestration brings them under protection.`,
    );
  return { endpoint, setup, environments, problems };
}
