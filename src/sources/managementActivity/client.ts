import { JsonArrayText } from '../../platform/json/array.ts';
import { UpstreamHttpError, type HttpRequest } from '../../platform/http/client.ts';
import type { StreamContext } from '../stream.ts';

/**
 * Office 365 Management Activity API client: subscriptions, content listing (paged by the `NextPageUri` response
 * header) and content blobs. Every call carries `PublisherIdentifier`, blob GETs included, so requests count against
 * the tenant's own 60K/min pool; `AF429` (answered as HTTP 403) is retried like a 429.
 *
 * Source: MicrosoftDocs/office-365-management-api `office-365-management-activity-api-reference.md` and
 * `troubleshooting-the-office-365-management-activity-api.md` (reference §6).
 */

/** The content types Vigil subscribes to. */
export const CONTENT_TYPES = ['Audit.AzureActiveDirectory', 'Audit.Exchange', 'Audit.SharePoint', 'Audit.General', 'DLP.All'] as const;

/** One available content blob. */
export interface ContentItem {
  contentType: string;
  contentId: string;
  contentUri: string;
  /** ISO 8601 UTC. */
  contentCreated: string;
  contentExpiration: string;
}

/** Management Activity calls for one tenant. */
export interface FeedContext extends StreamContext {
  /** GUID sent as `PublisherIdentifier` on every call. */
  publisherId: string;
}

const isAf429 = (status: number, body: unknown) => status === 403 && (body as { error?: { code?: string } } | null)?.error?.code === 'AF429';

function withPublisher(url: string, publisherId: string): string {
  const u = new URL(url);
  if (!u.searchParams.has('PublisherIdentifier')) u.searchParams.set('PublisherIdentifier', publisherId);
  return u.toString();
}

function request(ctx: FeedContext, url: string, method: HttpRequest['method'] = 'GET'): HttpRequest {
  // The pipeline's link policy keeps the token on the profile's Management Activity hosts (FOREIGN_LINK otherwise).
  return {
    api: 'managementActivity',
    method,
    url: withPublisher(url, ctx.publisherId),
    token: ctx.tokens.bearer(ctx.cloud.managementActivity.resource),
    tenantId: ctx.tenantId,
    throttledWhen: isAf429,
  };
}

const feedRoot = (ctx: FeedContext) => `${ctx.cloud.managementActivity.baseUrl}/api/v1.0/${ctx.tenantId}/activity/feed`;

/** The upstream AF error code of a failure, if any. */
export function afCode(e: unknown): string | undefined {
  return e instanceof UpstreamHttpError ? e.upstreamCode : undefined;
}

/**
 * Starts the subscription of a content type. `already` when it was enabled (AF20024 is success).
 * @throws UpstreamHttpError for other refusals (the content type is not available to the tenant, missing role…).
 */
export async function startSubscription(ctx: FeedContext, contentType: string): Promise<'started' | 'already'> {
  try {
    await ctx.http.send(request(ctx, `${feedRoot(ctx)}/subscriptions/start?contentType=${encodeURIComponent(contentType)}`, 'POST'));
    return 'started';
  } catch (e) {
    if (afCode(e) === 'AF20024') return 'already';
    throw e;
  }
}

/** Formats an instant as the API's `YYYY-MM-DDTHH:MM:SS` (UTC, 24-hour clock). */
function feedTime(d: Date): string {
  return d.toISOString().slice(0, 19);
}

/**
 * Lists the content of one window (start inclusive, end exclusive on `contentCreated`; ≤ 24 h; start ≤ 7 days back),
 * page by page, following `NextPageUri` until absent. Every `contentUri` of a page and its `NextPageUri` are checked
 * against the link policy before the page is yielded.
 * @throws VigilError `upstream` / `FOREIGN_LINK` when a `contentUri` or the `NextPageUri` is off the Management
 *   Activity hosts (the page is not yielded, nothing is fetched from it); UpstreamHttpError from the pipeline.
 */
export async function* listContent(ctx: FeedContext, contentType: string, start: Date, end: Date): AsyncGenerator<ContentItem[]> {
  let url: string | undefined =
    `${feedRoot(ctx)}/subscriptions/content?contentType=${encodeURIComponent(contentType)}&startTime=${feedTime(start)}&endTime=${feedTime(end)}`;
  while (url) {
    const res: { body: ContentItem[] | null; headers: Record<string, string> } = await ctx.http.send<ContentItem[] | null>(request(ctx, url));
    const items = Array.isArray(res.body) ? res.body : [];
    const next = res.headers['nextpageuri'] || undefined;
    for (const item of items) ctx.http.links.check('managementActivity', String(item.contentUri), 'contentUri');
    if (next !== undefined) ctx.http.links.check('managementActivity', next, 'NextPageUri');
    yield items;
    url = next;
  }
}

/**
 * Fetches one content blob: the body text as received (a JSON array) that Vigil keeps as the raw records, with its
 * records parsed one at a time as they are read ({@link JsonArrayText}: memory is the text plus one record, whatever
 * the blob's size). A body that is JSON but not an array holds no records.
 * @throws UpstreamHttpError with `upstreamCode` AF20051 when the content has expired (older than 7 days).
 */
export async function fetchContent(ctx: FeedContext, contentUri: string): Promise<JsonArrayText> {
  const res = await ctx.http.send<unknown>({
    ...request(ctx, contentUri),
    parseBody: (text) => (ARRAY_START.test(text) ? new JsonArrayText(text) : JSON.parse(text)),
  });
  return res.body instanceof JsonArrayText ? res.body : new JsonArrayText('[]');
}

const ARRAY_START = /^\s*\[/;
