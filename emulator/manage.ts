/**
 * Office 365 Management Activity API under `/manage` (reference §6): `https://127.0.0.1:PORT/manage/api/v1.0/{tenantId}
 * /activity/feed/…` mirrors `https://manage.office.com/api/v1.0/{tenantId}/activity/feed/…` (`/api/v1/` is served too,
 * as the reference's `NextPageUri` sample shows it).
 *
 * Operations: `POST subscriptions/start|stop`, `GET subscriptions/list|content|notifications`, `GET audit/{contentId}`,
 * `GET resources/dlpSensitiveTypes`. Errors are `{"error":{"code":"AF…","message":"…"}}` with the documented messages;
 * HTTP statuses of AF errors are not documented (the emulator answers 400 for request errors, 403 for AF10001/AF20010).
 *
 * Sources: MicrosoftDocs/office-365-management-api `office-365-management-activity-api-reference.md` (operations,
 * windows, pagination, error table), `troubleshooting-the-office-365-management-activity-api.md` (AF429 as HTTP 403,
 * PublisherIdentifier); elastic/beats `x-pack/filebeat/input/o365audit/listblobs.go` (AF20055 alongside AF20030).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_TYPES, type ContentType } from './auditrecords.ts';
import { bearerToken, type EmulatorContext } from './common.ts';
import { RESOURCES, RESOURCE_APP_IDS } from './constants.ts';
import { contentTime, parseFeedTime, type FeedBlob, type FeedStore, type FeedWebhook, type TenantFeed } from './feed.ts';
import type { Tenant } from './tenant.ts';
import type { AccessTokenClaims } from './tokens.ts';

/** What the Management Activity routes need beyond the common context. */
export interface ManageContext extends EmulatorContext {
  feeds: FeedStore;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY = 86_400_000;
const ZERO_GUID = '00000000-0000-0000-0000-000000000000';

/** The Management Activity permission every operation needs (`roles` of app tokens, `scp` of user tokens). */
export const ACTIVITY_FEED_READ = 'ActivityFeed.Read';

/** Sensitive information types answered by `resources/dlpSensitiveTypes` (the reference's sample ids). */
export const DLP_SENSITIVE_TYPES: readonly { id: string; name: string }[] = [
  { id: '50842eb7-edc8-4019-85dd-5a5c1f2bb085', name: 'CreditCardNumber' },
  { id: '0e9b3178-9678-47dd-a509-37222ca96b42', name: 'EUDebitCardNumber' },
  { id: 'a44669fe-0d48-453d-a9b1-2cc83f2cba77', name: 'U.S. Social Security Number (SSN)' },
  { id: 'e7dc4711-11b7-4cb0-b88b-2c394a771f0e', name: 'International Banking Account Number (IBAN)' },
];

/** Sends an AF error body `{"error":{"code","message"}}`. */
function afError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });
}

/** The value of a query parameter, name compared case-insensitively (first occurrence), from a raw URL. */
function queryValue(url: string, name: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const lower = name.toLowerCase();
  for (const part of url.slice(q + 1).split('&')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    let k = key;
    try {
      k = decodeURIComponent(key.replace(/\+/g, ' '));
    } catch {
      // keep raw
    }
    if (k.toLowerCase() !== lower) continue;
    const raw = eq < 0 ? '' : part.slice(eq + 1);
    try {
      return decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      return raw;
    }
  }
  return undefined;
}

/** The `PublisherIdentifier` of a request URL (any case of the name), or undefined when absent. */
export function publisherIdentifierOf(url: string): string | undefined {
  return queryValue(url, 'PublisherIdentifier');
}

/** The method name an AF429 message carries for a feed path (`GetBlob` is the one the troubleshooting guide shows). */
export function feedMethodName(path: string): string {
  if (/\/activity\/feed\/audit\//i.test(path)) return 'GetBlob';
  if (/\/subscriptions\/content/i.test(path)) return 'ListContent';
  if (/\/subscriptions\/start/i.test(path)) return 'StartSubscription';
  if (/\/subscriptions\/stop/i.test(path)) return 'StopSubscription';
  if (/\/subscriptions\/list/i.test(path)) return 'ListSubscriptions';
  if (/\/subscriptions\/notifications/i.test(path)) return 'ListNotifications';
  if (/\/resources\//i.test(path)) return 'GetResources';
  return 'Get';
}

/**
 * The body of the `af429` fault: `{"error":{"code":"AF429","message":"Too many requests. Method={m}, PublisherId={p}"}}`
 * (observed with HTTP 403; the zero GUID stands for a request without `PublisherIdentifier`, as in the troubleshooting
 * guide's sample).
 */
export function af429Body(url: string): Record<string, unknown> {
  const path = url.split('?')[0] ?? url;
  return { error: { code: 'AF429', message: `Too many requests. Method=${feedMethodName(path)}, PublisherId=${publisherIdentifierOf(url) || ZERO_GUID}` } };
}

interface FeedAuth {
  tenant: Tenant;
  feed: TenantFeed;
  claims: AccessTokenClaims;
  version: string;
}

type Params = { ver: string; tenant: string };

/**
 * Validates the URL tenant and the bearer token: GUID tenant (else 400 AF20013), a valid emulator token for
 * `https://manage.office.com` (else 401 `{"Message":"Authorization has been denied for this request."}` — the
 * ASP.NET default, UNCONFIRMED), `tid` equal to the URL tenant (else 403 AF20010), a served tenant (else 400 AF20011),
 * `ActivityFeed.Read` in `roles` (app) or `scp` (user; `user_impersonation` accepted) (else 403 AF10001).
 */
async function authenticate(ctx: ManageContext, req: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<FeedAuth | null> {
  const { ver, tenant: tenantId } = req.params;
  if (ver !== 'v1.0' && ver !== 'v1') {
    afError(reply, 404, 'NotFound', `The emulator does not serve api/${ver}.`);
    return null;
  }
  if (!GUID.test(tenantId)) {
    afError(reply, 400, 'AF20013', `The tenant ID passed in the URL (${tenantId}) is not a valid GUID.`);
    return null;
  }
  const denied = (): null => {
    reply
      .code(401)
      .header('www-authenticate', `Bearer authorization_uri="${ctx.baseUrl()}/common/oauth2/authorize", resource_id="${RESOURCES.managementActivity}"`)
      .type('application/json; charset=utf-8')
      .send({ Message: 'Authorization has been denied for this request.' });
    return null;
  };
  const result = await ctx.tokens.verify(bearerToken(req));
  if (!result.ok) return denied();
  const aud = result.claims.aud.replace(/\/+$/, '').toLowerCase();
  if (aud !== RESOURCES.managementActivity && aud !== (RESOURCE_APP_IDS[RESOURCES.managementActivity] ?? '').toLowerCase()) return denied();
  const claims = result.claims;
  if (claims.tid.toLowerCase() !== tenantId.toLowerCase()) {
    afError(reply, 403, 'AF20010', `The tenant ID passed in the URL (${tenantId}) does not match the tenant ID passed in the access token (${claims.tid}).`);
    return null;
  }
  const tenant = ctx.store.get(tenantId);
  const feed = tenant ? ctx.feeds.feed(tenant.id) : null;
  if (!tenant || !feed) {
    afError(reply, 400, 'AF20011', `Specified tenant ID (${tenantId}) does not exist in the system or has been deleted.`);
    return null;
  }
  const granted = claims.idtyp === 'user' ? (claims.scp ?? '').split(' ').filter(Boolean) : (claims.roles ?? []);
  const ok = granted.includes(ACTIVITY_FEED_READ) || (claims.idtyp === 'user' && granted.includes('user_impersonation'));
  if (!ok) {
    afError(reply, 403, 'AF10001', `The permission set (${granted.join(',')}) sent in the request did not include the expected permission ActivityFeed.Read.`);
    return null;
  }
  return { tenant, feed, claims, version: ver };
}

/** Reads `contentType` (required, compared case-insensitively); sends AF20001 / AF20020 and returns null when bad. */
function contentTypeParam(req: FastifyRequest, reply: FastifyReply): ContentType | null {
  const raw = queryValue(req.url, 'contentType');
  if (raw === undefined || raw === '') {
    afError(reply, 400, 'AF20001', 'Missing parameter: contentType.');
    return null;
  }
  const ct = CONTENT_TYPES.find((c) => c.toLowerCase() === raw.toLowerCase());
  if (!ct) {
    afError(reply, 400, 'AF20020', 'The specified content type is not valid.');
    return null;
  }
  return ct;
}

const WINDOW_MESSAGE =
  'Start time and end time must both be specified (or both omitted) and must be less than or equal to 24 hours apart, with the start time no more than 7 days in the past.';

/** `YYYY-MM-DDTHH:MM:SS` (UTC), how the emulator writes implied window bounds into `NextPageUri`. */
function feedTimeText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

function encodeNextPage(blob: FeedBlob): string {
  return `${new Date(blob.contentCreated).toISOString().replace(/[-:T.Z]/g, '')}R${Buffer.from(blob.contentId, 'utf8').toString('base64url')}`;
}

function decodeNextPage(token: string): { created: number; contentId: string } | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})R([A-Za-z0-9_-]+)$/.exec(token);
  if (!m) return null;
  const created = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]));
  const contentId = Buffer.from(m[8] as string, 'base64url').toString('utf8');
  if (Number.isNaN(created) || !/^[0-9A-Za-z_$]+$/.test(contentId)) return null;
  return { created, contentId };
}

function contentItem(base: string, tenantId: string, b: FeedBlob): Record<string, string> {
  return {
    contentType: b.contentType,
    contentId: b.contentId,
    contentUri: `${base}/manage/api/v1.0/${tenantId}/activity/feed/audit/${b.contentId}`,
    contentCreated: contentTime(b.contentCreated),
    contentExpiration: contentTime(b.contentExpiration),
  };
}

function parseWebhook(body: unknown): { webhook: FeedWebhook | null } | { error: string } {
  if (body === undefined || body === null || (typeof body === 'object' && !('webhook' in (body as object)))) return { webhook: null };
  const w = (body as { webhook?: unknown }).webhook;
  if (w === null || w === undefined) return { webhook: null };
  if (typeof w !== 'object') return { error: 'webhook' };
  const o = w as Record<string, unknown>;
  const address = typeof o.address === 'string' ? o.address : '';
  if (!/^https:\/\//i.test(address)) return { error: address };
  const expiration = typeof o.expiration === 'string' && o.expiration !== '' ? o.expiration : null;
  return { webhook: { status: 'enabled', address, authId: typeof o.authId === 'string' ? o.authId : null, expiration } };
}

/**
 * Registers the Management Activity routes under the `/manage` prefix. Every request's `PublisherIdentifier` is counted
 * (`FeedStore.publisherStats`) before authentication, faults and routing.
 */
export function registerManage(app: FastifyInstance, ctx: ManageContext): void {
  app.addHook('onRequest', async (req) => {
    ctx.feeds.notePublisher(publisherIdentifierOf(req.url));
  });

  const root = '/api/:ver/:tenant/activity/feed';

  app.post<{ Params: Params; Body: unknown }>(`${root}/subscriptions/start`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    const ct = contentTypeParam(req, reply);
    if (!ct) return reply;
    const parsed = parseWebhook(req.body);
    if ('error' in parsed)
      return afError(reply, 400, 'AF20021', `The webhook endpoint {${parsed.error}) could not be validated. The address must begin with HTTPS.`);
    const { outcome, subscription } = auth.feed.start(ct, parsed.webhook);
    if (outcome === 'unavailable') {
      return afError(reply, 400, 'AF20012', `Specified tenant ID (${auth.tenant.id}) is incorrectly configured in the system.`);
    }
    if (outcome === 'already') return afError(reply, 400, 'AF20024', 'The subscription is already enabled. No property change.');
    return reply.code(200).type('application/json; charset=utf-8').send(subscription);
  });

  app.post<{ Params: Params }>(`${root}/subscriptions/stop`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    const ct = contentTypeParam(req, reply);
    if (!ct) return reply;
    if (!auth.feed.stop(ct)) return afError(reply, 400, 'AF20022', 'No subscription found for the specified content type.');
    return reply.code(200).send();
  });

  app.get<{ Params: Params }>(`${root}/subscriptions/list`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    return reply.code(200).type('application/json; charset=utf-8').send(auth.feed.subscriptions());
  });

  const listing =
    (kind: 'content' | 'notifications') =>
    async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply): Promise<FastifyReply> => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      const ct = contentTypeParam(req, reply);
      if (!ct) return reply;
      if (!auth.feed.enabled(ct)) return afError(reply, 400, 'AF20022', 'No subscription found for the specified content type.');
      const settings = auth.feed.settings();
      const windowError = (): FastifyReply => afError(reply, 400, settings.windowErrorCode, WINDOW_MESSAGE);
      const startRaw = queryValue(req.url, 'startTime');
      const endRaw = queryValue(req.url, 'endTime');
      const now = ctx.feeds.clock.now();
      let start: number;
      let end: number;
      let startText: string;
      let endText: string;
      if (startRaw === undefined && endRaw === undefined) {
        end = Math.floor(now / 1000) * 1000;
        start = end - DAY;
        startText = feedTimeText(start);
        endText = feedTimeText(end);
      } else if (startRaw === undefined || endRaw === undefined) {
        return windowError();
      } else {
        const s = parseFeedTime(startRaw);
        if (s === null) return afError(reply, 400, 'AF20002', 'Invalid parameter type: startTime. Expected type: datetime');
        const e = parseFeedTime(endRaw);
        if (e === null) return afError(reply, 400, 'AF20002', 'Invalid parameter type: endTime. Expected type: datetime');
        start = s;
        end = e;
        startText = startRaw;
        endText = endRaw;
        if (end <= start || end - start > DAY || start < now - 7 * DAY) return windowError();
      }
      if (kind === 'notifications') return reply.code(200).type('application/json; charset=utf-8').send([]);
      const pageRaw = queryValue(req.url, 'nextPage');
      let items = auth.feed.listContent(ct, start, end);
      if (pageRaw !== undefined) {
        const cursor = decodeNextPage(pageRaw);
        if (!cursor) return afError(reply, 400, 'AF20031', `Invalid nextPage Input: ${pageRaw}.`);
        items = items.filter((b) => b.contentCreated > cursor.created || (b.contentCreated === cursor.created && b.contentId > cursor.contentId));
      }
      const page = items.slice(0, settings.pageSize);
      if (items.length > page.length) {
        const last = page[page.length - 1] as FeedBlob;
        const q = new URLSearchParams({ contentType: ct, startTime: startText, endTime: endText, nextPage: encodeNextPage(last) });
        reply.header(
          'NextPageUri',
          `${ctx.baseUrl()}/manage/api/${settings.nextPageUriVersion}/${auth.tenant.id}/activity/feed/subscriptions/content?${q.toString().replace(/%3A/gi, ':')}`,
        );
      }
      const base = ctx.baseUrl();
      return reply
        .code(200)
        .type('application/json; charset=utf-8')
        .send(page.map((b) => contentItem(base, auth.tenant.id, b)));
    };

  app.get<{ Params: Params }>(`${root}/subscriptions/content`, listing('content'));
  app.get<{ Params: Params }>(`${root}/subscriptions/notifications`, listing('notifications'));

  app.get<{ Params: Params }>(`${root}/resources/dlpSensitiveTypes`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    return reply.code(200).type('application/json; charset=utf-8').send(DLP_SENSITIVE_TYPES);
  });

  app.get<{ Params: Params & { contentId: string } }>(`${root}/audit/:contentId`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    const contentId = req.params.contentId;
    const ct = auth.feed.contentTypeOf(contentId);
    if (!ct) return afError(reply, 400, 'AF20052', `Content ID ${contentId} in the URL is invalid.`);
    if (!auth.feed.enabled(ct)) return afError(reply, 400, 'AF20022', 'No subscription found for the specified content type.');
    const found = auth.feed.blob(contentId);
    switch (found.status) {
      case 'invalid':
        return afError(reply, 400, 'AF20052', `Content ID ${contentId} in the URL is invalid.`);
      case 'notFound':
        return afError(reply, 400, 'AF20050', `The specified content (${contentId}) does not exist.`);
      case 'expired':
        return afError(
          reply,
          400,
          'AF20051',
          `Content requested with the key ${contentId} has already expired. Content older than 7 days cannot be retrieved.`,
        );
      case 'ok':
        // ASCII-only blobs go out as a Latin-1 copy (a plain byte copy) instead of a UTF-8 encode: same bytes, cheaper.
        return reply
          .code(200)
          .type('application/json; charset=utf-8')
          .send(found.bytes ?? (found.ascii ? Buffer.from(found.json, 'latin1') : found.json));
    }
  });
}

/** 404 for unknown paths under `/manage`, in the AF error envelope. */
export function manageNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return afError(reply, 404, 'NotFound', `The emulator does not serve ${req.method} ${req.url.split('?')[0] ?? ''}.`);
}
