import { VigilError } from '../../core/errors.ts';
import { UpstreamHttpError, type HttpRequest } from '../../platform/http/client.ts';
import type { StreamContext } from '../stream.ts';

/**
 * Power BI admin activity events: `GET {powerBi}/v1.0/myorg/admin/activityevents` for one UTC day per call
 * (`startDateTime` and `endDateTime` single-quoted ISO 8601, both in the same UTC day, end inclusive), then
 * `continuationUri` until `lastResultSet` is true. Service principals may call it only when the tenant setting
 * "Service principals can access read-only admin APIs" covers them; a refusal is 401 `PowerBINotAuthorizedException`.
 * Events are kept for 30 days.
 *
 * Sources: Power BI REST API `Admin - Get Activity Events` (learn.microsoft.com/rest/api/power-bi/admin/get-activity-events),
 * powerbi-docs `service-admin-auditing.md`, learn.microsoft.com/fabric/admin/metadata-scanning-enable-read-only-apis.
 */

/** How long Power BI keeps activity events. */
export const POWER_BI_HISTORY_MS = 30 * 86_400_000;

/** One page of activity events: the events, and their text as Vigil stores it (a JSON array). */
export interface ActivityEventsPage {
  events: Record<string, unknown>[];
  text: string;
}

interface ActivityEventsBody {
  activityEventEntities?: Record<string, unknown>[];
  continuationUri?: string | null;
  lastResultSet?: boolean;
}

function request(ctx: StreamContext, url: string): HttpRequest {
  // The pipeline's link policy keeps the token on the profile's Power BI hosts.
  return {
    api: 'powerBi',
    // Activity events: 200 requests per hour per tenant (budget.ts).
    service: 'powerBiActivity',
    method: 'GET',
    url,
    token: ctx.tokens.bearer(ctx.cloud.powerBi.resource),
    tenantId: ctx.tenantId,
    signal: ctx.signal,
  };
}

/** Code of the error {@link activityEvents} throws when Power BI refuses its admin API to the service principal. */
export const POWER_BI_NOT_AUTHORIZED = 'POWER_BI_NOT_AUTHORIZED';

/**
 * The Fabric tenant setting (Fabric admin portal > Tenant settings > Admin API settings) that decides whether a service
 * principal may call the Power BI read-only admin APIs (scanner, activity events, widely shared artifacts). Source:
 * learn.microsoft.com/fabric/admin/enable-service-principal-admin-apis (MicrosoftDocs/fabric-docs
 * docs/admin/enable-service-principal-admin-apis.md).
 */
export const READ_ONLY_ADMIN_API_SETTING = 'Service principals can access read-only admin APIs';

/** The Power BI Service application permissions that need admin consent (the app "must not" hold them). */
const POWER_BI_ADMIN_CONSENT_PERMISSIONS: readonly string[] = ['Tenant.Read.All', 'Tenant.ReadWrite.All'];

/** The Power BI Service application permissions among a token's `roles`. */
export function powerBiConsentedRoles(roles: readonly string[]): string[] {
  return roles.filter((r) => POWER_BI_ADMIN_CONSENT_PERMISSIONS.includes(r));
}

/**
 * Why Power BI refused its read-only admin APIs, and the fix, from the Power BI token's `roles`.
 *
 * Microsoft documents two conditions and no distinct error for either (every admin API page, "Permissions": "When
 * running under service principal authentication, an app must not have any admin-consent required permissions for
 * Power BI set on it"; "Required Scope … Tenant.Read.All … Must not be present when authentication via a service
 * principal is used"; the tenant setting {@link READ_ONLY_ADMIN_API_SETTING} must cover a security group holding the
 * app). Refused callers report 401 `{"error":{"code":"PowerBINotAuthorizedException","pbi.error":{…}}}`
 * (MicrosoftDocs/powerbi-docs issues #3234, #2956, #3262 — a docs author there: such permissions "cause problems" for the
 * read-only admin APIs; microsoft/powerbi-powershell #209). The body does not say which condition failed, so the roles
 * decide what to say: with Power BI permissions in the token, removing them comes first.
 */
function explainRefusal(roles: readonly string[]): { reason: string; fix: string } {
  const held = powerBiConsentedRoles(roles);
  const setting = `Fabric admin portal > Tenant settings > Admin API settings > "${READ_ONLY_ADMIN_API_SETTING}": Enabled, applied to specific security groups including one the app (its service principal) is a member of`;
  if (held.length > 0) {
    return {
      reason: `Power BI refused its read-only admin APIs to this service principal (401 PowerBINotAuthorizedException). The app holds the admin-consented Power BI Service application permission ${held.join(', ')}; Microsoft documents that a service principal calling the read-only admin APIs must not have any admin-consent-required Power BI permissions (they apply to delegated admin tokens only).`,
      fix: `Remove ${held.join(', ')} from the app (Microsoft Entra admin center > App registrations > the app > API permissions > Power BI Service > Remove permission; then Enterprise applications > the app > Permissions must list no Power BI application permission), and keep ${setting}.`,
    };
  }
  return {
    reason: `Power BI refused its read-only admin APIs to this service principal (401 PowerBINotAuthorizedException). The app holds no Power BI permission, as Microsoft documents; the tenant setting "${READ_ONLY_ADMIN_API_SETTING}" decides access and does not cover the app.`,
    fix: `Turn on ${setting}. No Power BI API permission is needed (and none must be admin-consented).`,
  };
}

/**
 * Power BI answers a refused admin API with 401 `PowerBINotAuthorizedException`, which the pipeline would read as
 * refused credentials: it is about a tenant setting or the app's Power BI permissions, so it becomes an
 * `authorization` error naming the cause and the fix ({@link explainRefusal}; `roles` = the Power BI token's `roles`).
 * Other errors are returned unchanged. Used by every Power BI admin call (activity events, scanner, widely shared
 * artifacts).
 */
function powerBiRefusal(e: unknown, roles: readonly string[] = []): unknown {
  if (
    !(e instanceof UpstreamHttpError) ||
    (e.status !== 401 && e.status !== 403) ||
    !/PowerBINotAuthorized/i.test(`${e.upstreamCode ?? ''} ${JSON.stringify(e.body ?? '')}`)
  )
    return e;
  const { reason, fix } = explainRefusal(roles);
  return new VigilError(POWER_BI_NOT_AUTHORIZED, reason, { remediation: fix, cause: e });
}

/** {@link powerBiRefusal} with the roles of the context's Power BI token (read only when the error is a refusal). */
export async function refusalIn(ctx: StreamContext, e: unknown): Promise<unknown> {
  if (powerBiRefusal(e) === e) return e;
  let roles: string[] = [];
  try {
    roles = await ctx.tokens.roles(ctx.cloud.powerBi.resource);
  } catch {
    roles = [];
  }
  return powerBiRefusal(e, roles);
}

/**
 * Whether Power BI lets this service principal use its read-only admin APIs, judged by what the API answers (not by
 * the token's roles): one GetActivityEvents request over the first second of yesterday (UTC), first page only.
 * @returns `{ ok: true }`, or `{ ok: false, error }` with the refusal ({@link POWER_BI_NOT_AUTHORIZED}, explained) or
 *   another failure.
 * @throws VigilError `authentication` when no Power BI token is issued (bad secret).
 */
export async function probeAdminApiAccess(ctx: StreamContext, now = new Date()): Promise<{ ok: true } | { ok: false; error: Error }> {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
  try {
    for await (const _page of activityEvents(ctx, day, new Date(day.getTime() + 999))) break;
    return { ok: true };
  } catch (e) {
    if (e instanceof VigilError && e.kind === 'authentication') throw e;
    return { ok: false, error: e as Error };
  }
}

/**
 * The activity events of [start, end] (both in one UTC day; ISO 8601 UTC), page by page.
 * @throws VigilError `invalid-input` when the bounds are not in the same UTC day or reversed.
 * @throws VigilError `authorization` / {@link POWER_BI_NOT_AUTHORIZED} when Power BI refuses the service principal;
 *   VigilError `upstream` / `FOREIGN_LINK` when a `continuationUri` is off the Power BI hosts (the page is not yielded);
 *   UpstreamHttpError for other failures.
 */
export async function* activityEvents(ctx: StreamContext, start: Date, end: Date): AsyncGenerator<ActivityEventsPage> {
  if (start.toISOString().slice(0, 10) !== end.toISOString().slice(0, 10) || end < start) {
    throw new VigilError('POWER_BI_WINDOW', `Power BI activity windows lie in one UTC day: ${start.toISOString()} to ${end.toISOString()} does not.`);
  }
  let url: string | undefined =
    `${ctx.cloud.powerBi.baseUrl}/v1.0/myorg/admin/activityevents?startDateTime='${start.toISOString()}'&endDateTime='${end.toISOString()}'`;
  while (url) {
    let res: { body: ActivityEventsBody | null };
    try {
      res = await ctx.http.send<ActivityEventsBody | null>(request(ctx, url));
    } catch (e) {
      throw await refusalIn(ctx, e);
    }
    const events = Array.isArray(res.body?.activityEventEntities) ? res.body.activityEventEntities : [];
    const next = res.body?.lastResultSet !== true && res.body?.continuationUri ? res.body.continuationUri : undefined;
    // Checked before the page is handed on (and stored), not only when the next request is sent.
    if (next !== undefined) ctx.http.links.check('powerBi', next, 'continuationUri');
    yield { events, text: JSON.stringify(events) };
    url = next;
  }
}
