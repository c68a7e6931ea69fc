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
  return { api: 'powerBi', method: 'GET', url, token: ctx.tokens.bearer(ctx.cloud.powerBi.resource), tenantId: ctx.tenantId };
}

/** Code of the error {@link activityEvents} throws when Power BI refuses its admin API to the service principal. */
export const POWER_BI_NOT_AUTHORIZED = 'POWER_BI_NOT_AUTHORIZED';

/**
 * Power BI answers a refused admin API with 401 `PowerBINotAuthorizedException`, which the pipeline would read as
 * refused credentials: it is about a tenant setting, so it becomes an `authorization` error naming the fix. Other
 * errors are returned unchanged. Used by every Power BI admin call (activity events, scanner, widely shared artifacts).
 */
export function powerBiRefusal(e: unknown): unknown {
  if (!(e instanceof UpstreamHttpError) || (e.status !== 401 && e.status !== 403) || !/PowerBINotAuthorized/i.test(`${e.upstreamCode ?? ''} ${JSON.stringify(e.body ?? '')}`)) return e;
  return new VigilError('authorization', POWER_BI_NOT_AUTHORIZED, 'Power BI refused its admin API to this service principal (PowerBINotAuthorizedException).', {
    remediation:
      'In the Fabric admin portal > Tenant settings > Admin API settings, turn on "Service principals can access read-only admin APIs" for a security group that contains the app. If it is on, check whether the app holds admin-consented Power BI Service permissions: Microsoft documents that read-only admin APIs may refuse such service principals.',
    cause: e,
  });
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
    throw new VigilError('invalid-input', 'POWER_BI_WINDOW', `Power BI activity windows lie in one UTC day: ${start.toISOString()} to ${end.toISOString()} does not.`);
  }
  let url: string | undefined = `${ctx.cloud.powerBi.baseUrl}/v1.0/myorg/admin/activityevents?startDateTime='${start.toISOString()}'&endDateTime='${end.toISOString()}'`;
  while (url) {
    let res: { body: ActivityEventsBody | null };
    try {
      res = await ctx.http.send<ActivityEventsBody | null>(request(ctx, url));
    } catch (e) {
      throw powerBiRefusal(e);
    }
    const events = Array.isArray(res.body?.activityEventEntities) ? res.body.activityEventEntities : [];
    const next = res.body?.lastResultSet !== true && res.body?.continuationUri ? res.body.continuationUri : undefined;
    // Checked before the page is handed on (and stored), not only when the next request is sent.
    if (next !== undefined) ctx.http.links.check('powerBi', next, 'continuationUri');
    yield { events, text: JSON.stringify(events) };
    url = next;
  }
}
