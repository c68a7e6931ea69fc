/**
 * Power BI admin activity events under `/powerbi` (reference §7): `GET /powerbi/v1.0/myorg/admin/activityevents` mirrors
 * `https://api.powerbi.com/v1.0/myorg/admin/activityevents`.
 *
 * - `?startDateTime='…'&endDateTime='…'` (single-quoted ISO 8601, UTC when no zone; both in the same UTC day; end
 *   inclusive) or `?continuationToken='…'`; optional `$filter=Activity eq '…' and UserId eq '…'`.
 * - Answer `{"activityEventEntities":[…],"continuationUri":"…","continuationToken":"…","lastResultSet":false}`; each page
 *   covers at most one hour of the window (the docs: a span over 1 hour takes several requests) and at most
 *   `pageSize` events; the last page has `lastResultSet: true` and null continuation (UNCONFIRMED: the doc sample shows
 *   null continuation with `lastResultSet: false` on an empty page).
 * - Events are the feed's Power BI records (RecordType 20), the same objects the Management Activity API serves.
 *
 * Sources: microsoft/PowerBI-CSharp swagger (GetActivityEvents), powerbi-docs `service-admin-auditing.md` (continuation
 * loop, 1-hour pages, same-day rule), learn.microsoft.com/fabric/admin/metadata-scanning-enable-read-only-apis (the
 * service-principal tenant setting).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, type EmulatorContext } from './common.ts';
import { DIRECTORY_ROLES, POWER_BI_PERMISSIONS, RESOURCES, RESOURCE_APP_IDS } from './constants.ts';
import { parseUtc } from './clock.ts';
import type { FeedStore } from './feed.ts';
import type { Tenant } from './tenant.ts';

/** What the Power BI routes need beyond the common context. */
export interface PowerBiContext extends EmulatorContext {
  feeds: FeedStore;
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Entra role template id of the Fabric (Power BI) Administrator, accepted for user tokens next to Global Administrator. */
export const FABRIC_ADMINISTRATOR_ROLE = 'a9ea8996-122f-4c74-9520-8edcd192826c';

/**
 * The body Power BI answers (401) when the caller may not use admin APIs: recorded verbatim in MicrosoftDocs/powerbi-docs
 * issue #3234 (GetActivityEvents, service principal, tenant setting not effective) and microsoft/powerbi-powershell
 * issue #209 (`Resolve-PowerBIError`), and in powerbi-docs #1109. No `message` field.
 */
export function powerBiNotAuthorized(): Record<string, unknown> {
  return {
    error: { code: 'PowerBINotAuthorizedException', 'pbi.error': { code: 'PowerBINotAuthorizedException', parameters: {}, details: [], exceptionCulprit: 1 } },
  };
}

function badRequest(reply: FastifyReply, message: string): FastifyReply {
  // UNCONFIRMED wording and code; the swagger only documents 200.
  return reply
    .code(400)
    .type('application/json; charset=utf-8')
    .send({ error: { code: 'InvalidRequest', message } });
}

interface Cursor {
  v: 1;
  /** Tenant id. */
  t: string;
  /** Window start (ms, inclusive). */
  s: number;
  /** Window end (ms, exclusive). */
  e: number;
  /** Start of the next segment (ms). */
  c: number;
  /** Offset within that segment. */
  o: number;
  /** Filter text, when given. */
  f?: string;
}

function encodeToken(c: Cursor): string {
  return Buffer.from(JSON.stringify(c), 'utf8').toString('base64');
}

function decodeToken(raw: string): Cursor | null {
  // A '+' of standard base64 turns into a space when a client sends the token unencoded.
  let text = raw
    .trim()
    .replace(/^'(.*)'$/s, '$1')
    .replace(/ /g, '+');
  for (let i = 0; i < 3; i++) {
    try {
      const o = JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as Cursor;
      if (o.v === 1 && typeof o.t === 'string' && [o.s, o.e, o.c, o.o].every((n) => typeof n === 'number' && Number.isFinite(n))) return o;
    } catch {
      // maybe still percent-encoded
    }
    try {
      const next = decodeURIComponent(text);
      if (next === text) return null;
      text = next;
    } catch {
      return null;
    }
  }
  return null;
}

type Filter = { activity?: string; userId?: string };

function parseFilter(text: string): Filter | null {
  const out: Filter = {};
  for (const clause of text.split(/\s+and\s+/i)) {
    const m = /^\s*(Activity|UserId)\s+eq\s+'([^']*)'\s*$/i.exec(clause);
    if (!m) return null;
    if ((m[1] as string).toLowerCase() === 'activity') out.activity = (m[2] as string).toLowerCase();
    else out.userId = (m[2] as string).toLowerCase();
  }
  return out;
}

function quoted(value: string | undefined): string | null {
  if (value === undefined) return null;
  const m = /^'(.*)'$/s.exec(value.trim());
  return m ? (m[1] as string) : null;
}

/**
 * Authorises a Power BI admin API call: a token for `https://analysis.windows.net/powerbi/api` of a served tenant; app
 * tokens need the tenant setting "Service principals can access read-only admin APIs" (`PowerBiSettings`), user tokens
 * a Global or Fabric Administrator (`wids`). Otherwise the error answer is sent (401 `PowerBINotAuthorizedException`;
 * expired: 403 `TokenExpired`, UNCONFIRMED) and null returned. Shared by the activity-event and scanner routes.
 */
export async function authorizePowerBiAdmin(ctx: PowerBiContext, req: FastifyRequest, reply: FastifyReply): Promise<Tenant | null> {
  const deny = (_sent: unknown): null => null;
  const result = await ctx.tokens.verify(bearerToken(req));
  if (!result.ok) {
    if (result.reason === 'expired')
      return deny(
        reply
          .code(403)
          .type('application/json; charset=utf-8')
          .send({ error: { code: 'TokenExpired', message: 'Access token has expired, resubmit with a new access token' } }),
      );
    return deny(
      reply
        .code(401)
        .header('www-authenticate', 'Bearer authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"')
        .type('application/json; charset=utf-8')
        .send(powerBiNotAuthorized()),
    );
  }
  const claims = result.claims;
  const aud = claims.aud.replace(/\/+$/, '').toLowerCase();
  if (aud !== RESOURCES.powerBi && aud !== (RESOURCE_APP_IDS[RESOURCES.powerBi] ?? '').toLowerCase()) {
    return deny(reply.code(401).type('application/json; charset=utf-8').send(powerBiNotAuthorized()));
  }
  const tenant = ctx.store.get(claims.tid);
  const feed = tenant ? ctx.feeds.feed(tenant.id) : null;
  if (!tenant || !feed) return deny(reply.code(401).type('application/json; charset=utf-8').send(powerBiNotAuthorized()));
  const settings = ctx.feeds.powerBi(tenant.id);
  if (claims.idtyp === 'app') {
    const pbiRoles = (claims.roles ?? []).filter((r) => POWER_BI_PERMISSIONS.includes(r));
    if (!settings.servicePrincipalsCanUseReadOnlyAdminApis || (settings.rejectServicePrincipalsWithPowerBiRoles && pbiRoles.length > 0)) {
      return deny(reply.code(401).type('application/json; charset=utf-8').send(powerBiNotAuthorized()));
    }
  } else {
    const wids = claims.wids ?? [];
    if (!wids.includes(DIRECTORY_ROLES.globalAdministrator) && !wids.includes(FABRIC_ADMINISTRATOR_ROLE)) {
      return deny(reply.code(401).type('application/json; charset=utf-8').send(powerBiNotAuthorized()));
    }
  }
  return tenant;
}

/**
 * Registers `GET /v1.0/myorg/admin/activityevents` under the `/powerbi` prefix. Auth: a token for
 * `https://analysis.windows.net/powerbi/api`; app tokens need the tenant setting (`PowerBiSettings`), user tokens a
 * Global or Fabric Administrator (`wids`); otherwise 401 `PowerBINotAuthorizedException`. Bad or missing tokens: 401
 * (expired: 403 `TokenExpired`, UNCONFIRMED).
 */
export function registerPowerBi(app: FastifyInstance, ctx: PowerBiContext): void {
  app.get('/v1.0/myorg/admin/activityevents', async (req: FastifyRequest, reply: FastifyReply) => {
    const tenant = await authorizePowerBiAdmin(ctx, req, reply);
    if (!tenant) return reply;
    const feed = ctx.feeds.feed(tenant.id)!;
    const settings = ctx.feeds.powerBi(tenant.id);

    const q = req.query as Record<string, string | undefined>;
    const now = ctx.feeds.clock.now();
    let cursor: Cursor;
    if (q.continuationToken !== undefined) {
      const decoded = decodeToken(q.continuationToken);
      if (!decoded || decoded.t.toLowerCase() !== tenant.id.toLowerCase()) return badRequest(reply, 'Invalid continuation token.');
      cursor = decoded;
    } else {
      if (q.startDateTime === undefined || q.endDateTime === undefined)
        return badRequest(reply, 'Both startDateTime and endDateTime are required (or continuationToken).');
      const startText = quoted(q.startDateTime);
      const endText = quoted(q.endDateTime);
      if (startText === null || endText === null)
        return badRequest(reply, "startDateTime and endDateTime must be enclosed in single quotes, e.g. startDateTime='2019-08-13T07:55:00.000Z'.");
      const start = parseUtc(startText);
      const end = parseUtc(endText);
      if (start === null || end === null) return badRequest(reply, 'startDateTime and endDateTime must be ISO 8601 date-times (UTC).');
      if (new Date(start).toISOString().slice(0, 10) !== new Date(end).toISOString().slice(0, 10))
        return badRequest(reply, 'startDateTime and endDateTime must be in the same UTC day.');
      if (end < start) return badRequest(reply, 'endDateTime must not be before startDateTime.');
      if (start < now - settings.historyDays * DAY) return badRequest(reply, `startDateTime must be within the last ${settings.historyDays} days.`);
      cursor = { v: 1, t: tenant.id, s: start, e: end + 1, c: start, o: 0 };
      const filterText = q.$filter;
      if (filterText !== undefined && filterText !== '') {
        if (!parseFilter(filterText)) return badRequest(reply, "Unsupported $filter: use Activity eq '…' and/or UserId eq '…'.");
        cursor.f = filterText;
      }
    }
    const filter = cursor.f !== undefined ? parseFilter(cursor.f) : {};
    const segEnd = Math.min(cursor.c + HOUR, cursor.e);
    let events = feed.powerBiEvents(cursor.c, segEnd);
    if (filter?.activity) events = events.filter((e) => String(e.Activity ?? e.Operation).toLowerCase() === filter.activity);
    if (filter?.userId) events = events.filter((e) => String(e.UserId).toLowerCase() === filter.userId);
    const page = events.slice(cursor.o, cursor.o + settings.pageSize);
    let next: Cursor | null = null;
    if (cursor.o + page.length < events.length) next = { ...cursor, o: cursor.o + page.length };
    else if (segEnd < cursor.e) next = { ...cursor, c: segEnd, o: 0 };
    const token = next ? encodeURIComponent(encodeToken(next)) : null;
    return reply
      .code(200)
      .type('application/json; charset=utf-8')
      .send({
        activityEventEntities: page,
        continuationUri: token ? `${ctx.baseUrl()}/powerbi/v1.0/myorg/admin/activityevents?continuationToken='${token}'` : null,
        continuationToken: token,
        lastResultSet: next === null,
      });
  });
}

/** 404 for unknown paths under `/powerbi`, in Power BI's error envelope. */
export function powerBiNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .type('application/json; charset=utf-8')
    .send({ error: { code: 'NotFound', message: `The emulator does not serve ${req.method} ${req.url.split('?')[0] ?? ''}.` } });
}
