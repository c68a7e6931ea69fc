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
  const root = ctx.cloud.powerBi.baseUrl;
  // The token only goes to the profile's Power BI host (continuation URIs come from upstream).
  if (new URL(url).origin !== new URL(root).origin) {
    throw new VigilError('upstream', 'UNSAFE_CONTINUATION_URI', `Power BI returned a continuation URI on another host (${new URL(url).origin}); refusing to send the token there.`);
  }
  return { api: 'powerBi', method: 'GET', url, token: ctx.tokens.bearer(ctx.cloud.powerBi.resource), tenantId: ctx.tenantId };
}

/** True when Power BI refused the caller the admin APIs (tenant setting off, or the app holds Power BI permissions). */
export function isPowerBiNotAuthorized(e: unknown): boolean {
  return e instanceof UpstreamHttpError && (e.status === 401 || e.status === 403) && /PowerBINotAuthorized/i.test(`${e.upstreamCode ?? ''} ${JSON.stringify(e.body ?? '')}`);
}

/**
 * The activity events of [start, end] (both in one UTC day; ISO 8601 UTC), page by page.
 * @throws VigilError `invalid-input` when the bounds are not in the same UTC day or reversed.
 * @throws UpstreamHttpError on refusals (see {@link isPowerBiNotAuthorized}).
 */
export async function* activityEvents(ctx: StreamContext, start: Date, end: Date): AsyncGenerator<ActivityEventsPage> {
  if (start.toISOString().slice(0, 10) !== end.toISOString().slice(0, 10) || end < start) {
    throw new VigilError('invalid-input', 'POWER_BI_WINDOW', `Power BI activity windows lie in one UTC day: ${start.toISOString()} to ${end.toISOString()} does not.`);
  }
  let url: string | undefined = `${ctx.cloud.powerBi.baseUrl}/v1.0/myorg/admin/activityevents?startDateTime='${start.toISOString()}'&endDateTime='${end.toISOString()}'`;
  while (url) {
    const res: { body: ActivityEventsBody | null } = await ctx.http.send<ActivityEventsBody | null>(request(ctx, url));
    const events = Array.isArray(res.body?.activityEventEntities) ? res.body.activityEventEntities : [];
    yield { events, text: JSON.stringify(events) };
    url = res.body?.lastResultSet !== true && res.body?.continuationUri ? res.body.continuationUri : undefined;
  }
}
