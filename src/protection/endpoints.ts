import { randomBytes } from 'node:crypto';
import { VigilError } from '../core/errors.ts';
import { isGuid, normalizeGuid } from '../core/ids.ts';
import type { Executor } from '../store/db.ts';
import { findIntegration } from '../store/repositories/integrations.ts';
import {
  getProtectionEndpointOfIntegration,
  insertProtectionEndpoint,
  listAgentSteps,
  type AgentStepRow,
  type ProtectionEndpointRow,
} from '../store/repositories/protection.ts';
import { defaultAudiences, endpointBaseUrl } from './service.ts';
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
  appId: string;
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
    audiences: JSON.parse(r.audiences) as string[],
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
  /** The customer's single-tenant Entra application (client) id that Copilot Studio's tokens are issued to. */
  appId: string;
  /** Accepted token audiences; default: the app id, `api://{appId}` and the base URL (when `apiUrl` is known). */
  audiences?: string[];
  apiUrl: string | null;
}

/**
 * Creates the integration's protection endpoint with a random, URL-safe public id (144 bits).
 * @throws VigilError `invalid-input` (`appId` not a GUID), `not-found` (integration), `conflict` /
 *   `PROTECTION_ENDPOINT_EXISTS` (one already exists: its id is in the message).
 */
export async function enableProtection(db: Executor, input: EnableProtection): Promise<ProtectionEndpointView> {
  const appId = normalizeGuid(input.appId);
  if (!isGuid(appId)) {
    throw new VigilError('INVALID_INPUT', `'${input.appId}' is not an application (client) ID.`, {
      field: 'appId',
      remediation: 'Give the Application (client) ID GUID of the Entra application entered in the Power Platform admin center (Security > Threat detection).',
    });
  }
  const integration = await findIntegration(db, input.integrationId);
  if (!integration?.organization_id) throw new VigilError('INTEGRATION_NOT_FOUND', `No integration '${input.integrationId}'.`, { field: 'integration' });
  const existing = await getProtectionEndpointOfIntegration(db, integration.id);
  if (existing) {
    throw new VigilError('PROTECTION_ENDPOINT_EXISTS', `Integration '${integration.name}' already has protection endpoint ${existing.id}.`, {
      field: 'integration',
      remediation: 'Use the existing endpoint (vigil protection events shows its activity); one endpoint serves every environment of the tenant.',
    });
  }
  const id = `pe_${randomBytes(18).toString('base64url')}`;
  const at = new Date().toISOString();
  const audiences = input.audiences?.length
    ? [...new Set(input.audiences.map((a) => a.trim()).filter(Boolean))]
    : defaultAudiences(appId, endpointBaseUrl(input.apiUrl, id));
  const row: ProtectionEndpointRow = {
    id,
    organization_id: integration.organization_id,
    integration_id: integration.id,
    app_id: appId,
    audiences: JSON.stringify(audiences),
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

function stepView(r: AgentStepRow): AgentStepView {
  return {
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
