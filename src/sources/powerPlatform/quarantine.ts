import type { CloudProfile } from '../../config/cloud.ts';
import { VigilError } from '../../core/errors.ts';
import { obj } from '../../core/json.ts';
import type { HttpClient } from '../../platform/http/client.ts';

/**
 * Copilot Studio agent quarantine through the Power Platform API, `copilotstudio` namespace (the `powervirtualagents`
 * namespace is deprecated).
 *
 * Sources: Microsoft Learn "Quarantine noncompliant agents with the Power Platform API"
 * (https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api) and the Power Platform REST reference
 * "Bots" (https://learn.microsoft.com/rest/api/power-platform/copilotstudio/bots: Get Bot Quarantine Status, Set Bot As
 * Quarantined, Set Bot As Unquarantined):
 * - `GET  {api.powerplatform.com}/copilotstudio/environments/{EnvironmentId}/bots/{BotId}/api/botQuarantine?api-version=1`
 *   → `{isBotQuarantined: boolean, lastUpdateTimeUtc: string}` (the admin page writes this path with a
 *   `/GetBotQuarantineStatus` suffix; the REST reference and Microsoft's "Power Platform for Admins V2" connector use
 *   the path without it, which is used here — UNCONFIRMED which spelling the service routes);
 * - `POST …/api/botQuarantine/SetAsQuarantined?api-version=1` and `POST …/SetAsUnquarantined?api-version=1`, no body;
 *   the answer is read as the same status object when it is one (UNCONFIRMED: Learn does not show it).
 * - Token: a delegated USER token for the audience `https://api.powerplatform.com` with the permission
 *   `CopilotStudio.AdminActions.Invoke`, of a Global Administrator, AI Administrator or Power Platform Administrator.
 *   Quarantined agents stay visible to makers; users cannot interact with them in any channel. Classic chatbots (v1)
 *   answer 200 but stay available (Learn).
 *
 * Every call goes through the HTTP pipeline (link policy: the token only ever goes to the profile's `powerPlatform`
 * base URL; retries; budgets).
 */

/** The `api-version` of the operations (admin-quarantine-api). */
const QUARANTINE_API_VERSION = '1';

/** The delegated Power Platform API permission the operations need (admin-quarantine-api). */
export const QUARANTINE_PERMISSION = 'CopilotStudio.AdminActions.Invoke';

/** The quarantine state of an agent as the API answers it. */
export interface AgentQuarantineStatus {
  quarantined: boolean;
  /** `lastUpdateTimeUtc` as sent (ISO 8601), or null when the answer had none. */
  lastUpdateTimeUtc: string | null;
}

/** Where and with which token to call. */
export interface QuarantineApiContext {
  http: HttpClient;
  cloud: CloudProfile;
  /** The delegated access token (never logged, never stored). */
  token: string;
  /** Tenant whose Power Platform budget the calls draw on. */
  tenantId?: string;
}

/**
 * The base URL of the Power Platform API in the profile.
 * @throws VigilError `CONTAINMENT_NOT_AVAILABLE` when the profile names none (an endpoints file without `powerPlatform`).
 */
function baseUrl(cloud: CloudProfile): string {
  if (!cloud.powerPlatform)
    throw new VigilError('CONTAINMENT_NOT_AVAILABLE', `Not available: the cloud profile '${cloud.name}' names no Power Platform API endpoint.`, {
      field: 'VIGIL_ENDPOINTS_FILE',
      remediation: 'Add "powerPlatform": {"baseUrl": "https://api.powerplatform.com", "resource": "https://api.powerplatform.com"} to the endpoints file.',
    });
  return cloud.powerPlatform.baseUrl;
}

/** URL of an operation (`''` = the status read). */
function quarantineUrl(cloud: CloudProfile, environmentId: string, botId: string, op: '' | 'SetAsQuarantined' | 'SetAsUnquarantined'): string {
  const path = `${baseUrl(cloud)}/copilotstudio/environments/${encodeURIComponent(environmentId)}/bots/${encodeURIComponent(botId)}/api/botQuarantine`;
  return `${op ? `${path}/${op}` : path}?api-version=${QUARANTINE_API_VERSION}`;
}

function statusOf(body: unknown): AgentQuarantineStatus | null {
  const o = obj(body);
  if (typeof o.isBotQuarantined !== 'boolean') return null;
  return { quarantined: o.isBotQuarantined, lastUpdateTimeUtc: typeof o.lastUpdateTimeUtc === 'string' ? o.lastUpdateTimeUtc : null };
}

/**
 * Reads an agent's quarantine state.
 * @throws UpstreamHttpError (401/403 token, permission or role; 404 environment or bot); VigilError
 *   `CONTAINMENT_NOT_AVAILABLE` without a Power Platform API endpoint; `INVALID_BODY` for an answer without
 *   `isBotQuarantined`.
 */
export async function getAgentQuarantineStatus(ctx: QuarantineApiContext, environmentId: string, botId: string): Promise<AgentQuarantineStatus> {
  const res = await ctx.http.send<unknown>({
    api: 'powerPlatform',
    url: quarantineUrl(ctx.cloud, environmentId, botId, ''),
    token: async () => ctx.token,
    ...(ctx.tenantId ? { tenantId: ctx.tenantId } : {}),
  });
  const status = statusOf(res.body);
  if (!status) throw new VigilError('INVALID_BODY', 'The Power Platform API answered the quarantine status without isBotQuarantined.');
  return status;
}

/**
 * Quarantines (`quarantined` true) or releases an agent. Idempotent upstream (setting the state it already has
 * succeeds). Returns the status the answer carries, or null when it carried none.
 * @throws as {@link getAgentQuarantineStatus}.
 */
export async function setAgentQuarantine(
  ctx: QuarantineApiContext,
  environmentId: string,
  botId: string,
  quarantined: boolean,
): Promise<AgentQuarantineStatus | null> {
  const res = await ctx.http.send<unknown>({
    api: 'powerPlatform',
    method: 'POST',
    url: quarantineUrl(ctx.cloud, environmentId, botId, quarantined ? 'SetAsQuarantined' : 'SetAsUnquarantined'),
    token: async () => ctx.token,
    ...(ctx.tenantId ? { tenantId: ctx.tenantId } : {}),
  });
  return statusOf(res.body);
}
