import { randomUUID } from 'node:crypto';
import type { CloudProfile } from '../config/cloud.ts';
import { VigilError, invalidInput, isVigilError } from '../core/errors.ts';
import { isGuid, normalizeGuid } from '../core/ids.ts';
import { UpstreamHttpError, type HttpClient } from '../platform/http/client.ts';
import { acquireAdminToken, type AdminSignIn } from '../platform/identity/admin.ts';
import type { UserTokenClaims } from '../platform/identity/index.ts';
import {
  getAgentQuarantineStatus,
  QUARANTINE_PERMISSION,
  setAgentQuarantine,
  type AgentQuarantineStatus,
  type QuarantineApiContext,
} from '../sources/powerPlatform/quarantine.ts';
import type { Executor } from '../store/db.ts';
import { getAlert } from '../store/repositories/audit.ts';
import { agentOfStep, environmentsOfAgent, insertContainmentAction, type ContainmentActionRow } from '../store/repositories/containment.ts';
import { findIntegration, type IntegrationRow } from '../store/repositories/integrations.ts';

/**
 * Containment (issue 19, "Respond"): quarantine a Copilot Studio agent from an alert, lift the quarantine, read its
 * state — through Microsoft's documented Copilot Studio admin API (Power Platform API, `copilotstudio` namespace,
 * `sources/powerPlatform/quarantine.ts`), with every quarantine and release recorded with its author, time, agent,
 * outcome and the alert or agent step it came from (`containment_actions`, migration 0015).
 *
 * What the API needs (Microsoft Learn, https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api): a
 * USER access token from Microsoft Entra ID (delegated, never app-only) whose user holds Global Administrator, AI
 * Administrator or Power Platform Administrator, acquired with the client id of an app registration that has the
 * Power Platform API delegated permission `CopilotStudio.AdminActions.Invoke`. Vigil gets it by a device-code sign-in
 * of an administrator (`platform/identity/admin.ts`), for the scope
 * `{powerPlatform.resource}/CopilotStudio.AdminActions.Invoke`, with the integration's own application (client) id
 * unless another is named: that app must allow public client flows (the device-code grant is a public-client flow) and
 * hold the permission. Whatever is missing is said as "Not available: …" with the fix (`CONTAINMENT_NOT_AVAILABLE`).
 * The token is used for the one call and never stored or logged.
 */

/** Entra role template ids of the roles admin-quarantine-api names, with their names (Entra built-in roles reference). */
const QUARANTINE_ROLES: Readonly<Record<string, string>> = {
  '62e90394-69f5-4237-9190-012177145e10': 'Global Administrator',
  'd2562ede-74db-457e-a7b6-544e236ebb61': 'AI Administrator',
  '11648597-926c-4cf3-9c36-bcebb0ba8dcc': 'Power Platform Administrator',
};

const ROLE_LIST = 'Global Administrator, AI Administrator or Power Platform Administrator';

/** Which agent, named directly or through the alert or agent step it came from. */
export interface ContainmentTarget {
  /** The integration (id or name). */
  integration: string;
  /** Copilot Studio bot id (the agent). Taken from the alert or step when absent. */
  agentId?: string;
  /** The agent's environment id. Taken from the alert, the step, or the collected inventory when absent. */
  environmentId?: string;
  /** The alert the action answers (its detail names `agentId` and `environmentId`). */
  alertId?: string;
  /** A recorded agent step (`analyze-tool-execution` call) of the agent. */
  stepId?: string;
}

/** How to sign the administrator in. */
export interface ContainmentSignIn {
  signIn: AdminSignIn;
  /**
   * Application (client) id to sign in with; default the integration's own application. It must allow public client
   * flows and hold the delegated permission `CopilotStudio.AdminActions.Invoke` of the Power Platform API.
   */
  clientId?: string;
}

/** A quarantine or release request. */
export interface ContainmentRequest extends ContainmentTarget, ContainmentSignIn {
  /** Who asks (recorded as the action's author). */
  requestedBy: string;
  /** Id to record the action under (`ca_…`); default a new one. The API gives it so an action in flight keeps its id. */
  actionId?: string;
}

/** What containment needs of the runtime. */
export interface ContainmentDeps {
  db: Executor;
  http: HttpClient;
  cloud: CloudProfile;
  /** Signs the administrator in; default {@link acquireAdminToken} (tests give another). */
  acquireToken?: typeof acquireAdminToken;
  /** Clock for the record. @default the system clock */
  now?: () => Date;
}

/** The agent resolved from the request. */
interface ResolvedTarget {
  integration: IntegrationRow;
  agentId: string;
  environmentId: string;
  alertId: string | null;
  stepId: string | null;
}

/** The view of a quarantine, a release or a status read (CLI `--json` and the API return it as is). */
export interface ContainmentView {
  /** `contain`, `release` or `status`. */
  action: 'contain' | 'release' | 'status';
  /** Id of the recorded action (null for a status read, which is not recorded). */
  actionId: string | null;
  integrationId: string;
  environmentId: string;
  agentId: string;
  alertId: string | null;
  stepId: string | null;
  /** The agent's state as the API answered it. */
  quarantined: boolean;
  /** The API's `lastUpdateTimeUtc`, or null. */
  lastUpdateTimeUtc: string | null;
  /** Who asked (null for a status read). */
  requestedBy: string | null;
  /** The administrator whose token made the call (user principal name). */
  signedInAs: string;
  /** When Vigil made the call (ISO 8601). */
  at: string;
}

/** An id accepted in a path segment of the API: letters, digits, `-` and `_` (GUIDs, `Default-<guid>`). */
const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks and normalises the target's ids.
 * @throws VigilError `INVALID_INPUT` naming `agentId` / `environmentId`.
 */
function checkIds(agentId: string, environmentId: string): { agentId: string; environmentId: string } {
  const agent = normalizeGuid(agentId.trim());
  if (!isGuid(agent))
    throw invalidInput(
      'agentId',
      `agentId '${agentId}' is not a Copilot Studio bot id (a GUID).`,
      'Give the bot id of the agent: Copilot Studio > the agent > Settings > Advanced > Metadata (Bot ID), or the agent id of the alert or inventory.',
    );
  const env = environmentId.trim();
  if (!SEGMENT.test(env))
    throw invalidInput(
      'environmentId',
      `environmentId '${environmentId}' is not a Power Platform environment id.`,
      'Give the environment id (a GUID, or Default-<tenant id>) shown in Power Platform admin center > Environments > the environment.',
    );
  return { agentId: agent, environmentId: env };
}

/** A string field of an alert's JSON detail, or undefined. */
function detailField(detail: string | null, ...names: string[]): string | undefined {
  if (!detail) return undefined;
  try {
    const d = JSON.parse(detail) as Record<string, unknown>;
    for (const n of names) if (typeof d[n] === 'string' && d[n]) return d[n] as string;
  } catch {
    // a detail that is not JSON names nothing
  }
  return undefined;
}

/**
 * Resolves the agent and its environment: from the request, else from the agent step, else from the alert's detail,
 * else (environment only) from the collected inventory. A value given and a different one from the alert or step is
 * refused, so an action is never recorded against an alert about another agent.
 * @throws VigilError `INTEGRATION_NOT_FOUND`, `ALERT_NOT_FOUND`, `AGENT_STEP_NOT_FOUND`, `INVALID_INPUT` (no agent, no
 *   environment, ids that do not match, or malformed ids).
 */
export async function resolveContainmentTarget(db: Executor, t: ContainmentTarget): Promise<ResolvedTarget> {
  const integration = await findIntegration(db, t.integration);
  if (!integration) throw new VigilError('INTEGRATION_NOT_FOUND', `No integration '${t.integration}'.`, { field: 'integration' });
  const named: { agent?: string; env?: string; from: string }[] = [];
  if (t.stepId !== undefined) {
    const step = await agentOfStep(db, integration.id, t.stepId);
    if (!step) throw new VigilError('AGENT_STEP_NOT_FOUND', `No agent step '${t.stepId}' in integration ${integration.name}.`, { field: 'stepId' });
    named.push({ agent: step.agent_id ?? undefined, env: step.environment_id ?? undefined, from: `agent step ${t.stepId}` });
  }
  if (t.alertId !== undefined) {
    const alert = await getAlert(db, t.alertId);
    if (!alert || alert.integration_id !== integration.id)
      throw new VigilError('ALERT_NOT_FOUND', `No alert '${t.alertId}' in integration ${integration.name}.`, {
        field: 'alertId',
        remediation: (_, act) => `To see the alerts, ${act({ do: 'listAlerts' })}.`,
      });
    named.push({ agent: detailField(alert.detail, 'agentId', 'botId'), env: detailField(alert.detail, 'environmentId'), from: `alert ${t.alertId}` });
  }
  let agentId = t.agentId;
  let environmentId = t.environmentId;
  for (const n of named) {
    if (n.agent && agentId && normalizeGuid(n.agent) !== normalizeGuid(agentId))
      throw invalidInput(
        'agentId',
        `${n.from} is about agent ${n.agent}, not ${agentId}.`,
        'Name the agent the alert or step is about, or leave the agent out.',
      );
    if (n.env && environmentId && n.env.toLowerCase() !== environmentId.toLowerCase())
      throw invalidInput(
        'environmentId',
        `${n.from} is about environment ${n.env}, not ${environmentId}.`,
        'Name the environment the alert or step is about, or leave it out.',
      );
    agentId ??= n.agent;
    environmentId ??= n.env;
  }
  if (!agentId)
    throw invalidInput(
      'agentId',
      named.length ? `${named.map((n) => n.from).join(' and ')} name${named.length > 1 ? '' : 's'} no agent.` : 'No agent named.',
      'Give the Copilot Studio bot id of the agent (the agent id shown by the alert, the agent steps or the inventory).',
    );
  if (!environmentId) {
    const envs = await environmentsOfAgent(db, integration.id, normalizeGuid(agentId));
    if (envs.length === 1) environmentId = envs[0];
    else
      throw invalidInput(
        'environmentId',
        envs.length
          ? `Agent ${agentId} is in several environments of the inventory (${envs.join(', ')}).`
          : `The environment of agent ${agentId} is not known (the agent is not in the collected inventory).`,
        "Give the agent's environment id (Power Platform admin center > Environments).",
      );
  }
  const ids = checkIds(agentId, environmentId!);
  return { integration, ...ids, alertId: t.alertId ?? null, stepId: t.stepId ?? null };
}

/**
 * Signs the administrator in and checks the token carries what the API requires: a user token (not app-only) with
 * `CopilotStudio.AdminActions.Invoke` in `scp`. The roles (`wids`) are left to the API to judge, and explain its refusal.
 * @throws VigilError `CONTAINMENT_NOT_AVAILABLE` naming the permission or the public-client setting missing; the sign-in
 *   errors of {@link acquireAdminToken} otherwise.
 */
async function delegatedToken(deps: ContainmentDeps, target: ResolvedTarget, s: ContainmentSignIn): Promise<{ token: string; claims: UserTokenClaims }> {
  const pp = deps.cloud.powerPlatform;
  if (!pp)
    throw new VigilError('CONTAINMENT_NOT_AVAILABLE', `Not available: the cloud profile '${deps.cloud.name}' names no Power Platform API endpoint.`, {
      field: 'VIGIL_ENDPOINTS_FILE',
      remediation: 'Add "powerPlatform": {"baseUrl": "https://api.powerplatform.com", "resource": "https://api.powerplatform.com"} to the endpoints file.',
    });
  const clientId = s.clientId ?? target.integration.client_id;
  const acquire = deps.acquireToken ?? acquireAdminToken;
  let result: { accessToken: string; claims: UserTokenClaims };
  try {
    result = await acquire({
      cloud: deps.cloud,
      http: deps.http,
      tenantId: target.integration.tenant_id,
      signIn: s.signIn,
      clientId,
      scope: `${pp.resource.replace(/\/+$/, '')}/${QUARANTINE_PERMISSION}`,
    });
  } catch (e) {
    // A device-code poll for a confidential app is answered 401 `invalid_client` (AADSTS7000218: the body must contain a
    // client secret or assertion); MSAL then reports `post_request_failed` with the OAuth code as its message only.
    const cause = (e as { cause?: { errorCode?: string; errorMessage?: string } }).cause;
    const invalidClient = cause?.errorCode === 'invalid_client' || cause?.errorMessage === 'invalid_client';
    if (isVigilError(e) && (e.code === 'AADSTS7000218' || (e.code === 'ADMIN_SIGN_IN_FAILED' && invalidClient)))
      throw new VigilError(
        'CONTAINMENT_NOT_AVAILABLE',
        `Not available: application ${clientId} does not allow public client flows, which the administrator's device-code sign-in needs.`,
        {
          field: 'clientId',
          remediation: (name) =>
            `In Microsoft Entra admin center > App registrations > ${clientId} > Authentication, set "Allow public client flows" to Yes, and under API permissions add the delegated Power Platform API permission ${QUARANTINE_PERMISSION} with admin consent; or give ${name('clientId')} of an app registration that has both.`,
          cause: e,
        },
      );
    if (isVigilError(e) && (e.code === 'AADSTS65001' || e.code === 'AADSTS65004'))
      throw new VigilError('CONTAINMENT_NOT_AVAILABLE', `Not available: application ${clientId} has no consented permission ${QUARANTINE_PERMISSION}.`, {
        field: 'clientId',
        remediation: `In Microsoft Entra admin center > App registrations > ${clientId} > API permissions, add the delegated Power Platform API permission ${QUARANTINE_PERMISSION} and grant admin consent.`,
        cause: e,
      });
    throw e;
  }
  const { claims } = result;
  if (claims.idtyp === 'app')
    throw new VigilError(
      'CONTAINMENT_NOT_AVAILABLE',
      `Not available: an app-only token cannot quarantine agents; the API needs a user token with the delegated permission ${QUARANTINE_PERMISSION}.`,
      { remediation: `Sign in as a ${ROLE_LIST} with an app registration that has the delegated Power Platform API permission ${QUARANTINE_PERMISSION}.` },
    );
  if (!claims.scp.includes(QUARANTINE_PERMISSION))
    throw new VigilError(
      'CONTAINMENT_NOT_AVAILABLE',
      `Not available: the token application ${clientId} obtained for ${claims.upn || 'the administrator'} does not grant the Power Platform API permission ${QUARANTINE_PERMISSION} (it grants: ${claims.scp.join(' ') || 'nothing'}).`,
      {
        field: 'clientId',
        remediation: (name) =>
          `In Microsoft Entra admin center > App registrations > ${clientId} > API permissions, add the delegated Power Platform API (8578e004-a5c6-46e7-913e-12f58912df43) permission ${QUARANTINE_PERMISSION} and grant admin consent, or give ${name('clientId')} of an app registration that has it.`,
      },
    );
  return { token: result.accessToken, claims };
}

/**
 * The catalogue error for a refusal of the API: 401/403 → `CONTAINMENT_NOT_AVAILABLE` naming the role (when the
 * token's `wids` hold none of the three) or the permission and roles; 404 → `AGENT_NOT_FOUND`. Others as they are.
 */
function explainRefusal(e: unknown, target: ResolvedTarget, claims: UserTokenClaims): unknown {
  if (!(e instanceof UpstreamHttpError)) return e;
  const upstream = e.upstreamMessage
    ? ` (the Power Platform API answered ${e.status}: ${e.upstreamMessage})`
    : ` (the Power Platform API answered ${e.status})`;
  if (e.status === 404)
    return new VigilError('AGENT_NOT_FOUND', `No Copilot Studio agent ${target.agentId} in environment ${target.environmentId}${upstream}.`, {
      field: 'agentId',
      remediation: 'Check the bot id and the environment id of the agent (Copilot Studio > the agent > Settings > Advanced > Metadata).',
      cause: e,
    });
  if (e.status !== 401 && e.status !== 403) return e;
  const who = claims.upn || 'the signed-in user';
  const held = claims.wids.filter((w) => QUARANTINE_ROLES[w]);
  // The token's permission and kind were checked before the call, so a refusal of a user whose token shows none of the
  // roles (`wids`, emitted for directory roles) is the role. A token may omit `wids` (it depends on the app's
  // `groupMembershipClaims`), hence "as the token shows".
  if (held.length === 0)
    return new VigilError('CONTAINMENT_NOT_AVAILABLE', `Not available: ${who} holds none of the roles ${ROLE_LIST}, as the token shows${upstream}.`, {
      remediation: `Sign in as a ${ROLE_LIST} (Microsoft Entra admin center > Roles & admins; Power Platform Administrator is the least privileged of the three), or have one assigned to ${who}.`,
      cause: e,
    });
  return new VigilError('CONTAINMENT_NOT_AVAILABLE', `Not available: the Power Platform API refused ${who}${upstream}.`, {
    remediation: `The call needs a user who is a ${ROLE_LIST}, signed in with an app registration that has the delegated Power Platform API permission ${QUARANTINE_PERMISSION} (admin consent granted).`,
    cause: e,
  });
}

/** The outcome word of a failed action: `refused` for a missing permission, role or token, else `failed`. */
function outcomeOf(e: unknown): 'refused' | 'failed' {
  return isVigilError(e, 'authorization', 'authentication') ? 'refused' : 'failed';
}

/** Text of an error for the record (message only: never a token — none is ever put in one). */
function errorText(e: unknown): { code: string; message: string } {
  if (e instanceof VigilError) return { code: e.code, message: e.message.slice(0, 2000) };
  return { code: 'INTERNAL', message: String((e as Error)?.message ?? e).slice(0, 2000) };
}

/**
 * Quarantines or releases an agent and records the action (whatever its outcome, once the agent is resolved).
 * @throws see {@link resolveContainmentTarget}, {@link delegatedToken}, and `CONTAINMENT_NOT_AVAILABLE` /
 *   `AGENT_NOT_FOUND` for the API's refusals.
 */
async function setQuarantine(deps: ContainmentDeps, req: ContainmentRequest, quarantine: boolean): Promise<ContainmentView> {
  const requestedBy = req.requestedBy.trim();
  if (!requestedBy) throw invalidInput('actor', 'Who asks for the action is not named.', 'Name the person on whose behalf the agent is contained or released.');
  const target = await resolveContainmentTarget(deps.db, req);
  const at = (deps.now?.() ?? new Date()).toISOString();
  const row: ContainmentActionRow = {
    id: req.actionId ?? `ca_${randomUUID()}`,
    organization_id: target.integration.organization_id,
    integration_id: target.integration.id,
    action: quarantine ? 'contain' : 'release',
    environment_id: target.environmentId,
    agent_id: target.agentId,
    alert_id: target.alertId,
    step_id: target.stepId,
    requested_by: requestedBy.slice(0, 320),
    signed_in_as: null,
    requested_at: at,
    outcome: 'failed',
    quarantined: null,
    error_code: null,
    error_message: null,
  };
  let status: AgentQuarantineStatus;
  try {
    const { token, claims } = await delegatedToken(deps, target, req);
    row.signed_in_as = claims.upn || claims.oid || null;
    const ctx: QuarantineApiContext = { http: deps.http, cloud: deps.cloud, token, tenantId: target.integration.tenant_id };
    try {
      status =
        (await setAgentQuarantine(ctx, target.environmentId, target.agentId, quarantine)) ??
        (await getAgentQuarantineStatus(ctx, target.environmentId, target.agentId));
    } catch (e) {
      throw explainRefusal(e, target, claims);
    }
  } catch (e) {
    const err = errorText(e);
    await insertContainmentAction(deps.db, { ...row, outcome: outcomeOf(e), error_code: err.code, error_message: err.message });
    throw e;
  }
  await insertContainmentAction(deps.db, { ...row, outcome: 'succeeded', quarantined: status.quarantined ? 1 : 0 });
  return view(row, status);
}

function view(row: ContainmentActionRow, status: AgentQuarantineStatus): ContainmentView {
  return {
    action: row.action as 'contain' | 'release',
    actionId: row.id,
    integrationId: row.integration_id,
    environmentId: row.environment_id,
    agentId: row.agent_id,
    alertId: row.alert_id,
    stepId: row.step_id,
    quarantined: status.quarantined,
    lastUpdateTimeUtc: status.lastUpdateTimeUtc,
    requestedBy: row.requested_by,
    signedInAs: row.signed_in_as ?? '',
    at: row.requested_at,
  };
}

/**
 * Quarantines a Copilot Studio agent (`SetAsQuarantined`): it stays visible to makers, but users cannot interact with
 * it in any channel. Recorded with its author and the alert or step it came from.
 * @throws VigilError `INVALID_INPUT`, `INTEGRATION_NOT_FOUND`, `ALERT_NOT_FOUND`, `AGENT_STEP_NOT_FOUND`,
 *   `CONTAINMENT_NOT_AVAILABLE` (permission, role, app-only token, public client flows, no Power Platform API
 *   endpoint), `AGENT_NOT_FOUND`, sign-in errors (`DEVICE_CODE_DECLINED`, `DEVICE_CODE_EXPIRED`, `AADSTS…`).
 */
export function containAgent(deps: ContainmentDeps, req: ContainmentRequest): Promise<ContainmentView> {
  return setQuarantine(deps, req, true);
}

/** Lifts an agent's quarantine (`SetAsUnquarantined`), recorded as {@link containAgent} is. @throws as {@link containAgent}. */
export function releaseAgent(deps: ContainmentDeps, req: ContainmentRequest): Promise<ContainmentView> {
  return setQuarantine(deps, req, false);
}

/** Reads an agent's quarantine state (not recorded: it changes nothing). @throws as {@link containAgent}. */
export async function agentQuarantineStatus(deps: ContainmentDeps, req: ContainmentTarget & ContainmentSignIn): Promise<ContainmentView> {
  const target = await resolveContainmentTarget(deps.db, req);
  const at = (deps.now?.() ?? new Date()).toISOString();
  const { token, claims } = await delegatedToken(deps, target, req);
  let status: AgentQuarantineStatus;
  try {
    status = await getAgentQuarantineStatus(
      { http: deps.http, cloud: deps.cloud, token, tenantId: target.integration.tenant_id },
      target.environmentId,
      target.agentId,
    );
  } catch (e) {
    throw explainRefusal(e, target, claims);
  }
  return {
    action: 'status',
    actionId: null,
    integrationId: target.integration.id,
    environmentId: target.environmentId,
    agentId: target.agentId,
    alertId: target.alertId,
    stepId: target.stepId,
    quarantined: status.quarantined,
    lastUpdateTimeUtc: status.lastUpdateTimeUtc,
    requestedBy: null,
    signedInAs: claims.upn || claims.oid,
    at,
  };
}
