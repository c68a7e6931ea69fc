/**
 * Dataverse Web API per environment under `/dataverse/{uniqueName}/api/data/v9.2/` (reference §4): `bots`,
 * `systemusers` and `WhoAmI`, with `$select`, a small `$filter` (`field eq value [and …]`), `$top`,
 * `Prefer: odata.maxpagesize=N` (default and max 5000, answered with `Preference-Applied`) and absolute
 * `@odata.nextLink` paging with a paging-cookie `$skiptoken`.
 *
 * Sources: https://learn.microsoft.com/power-apps/developer/data-platform/webapi/query/page-results,
 * /power-apps/developer/data-platform/reference/entities/bot, /…/entities/systemuser; error codes from the
 * terraform-provider-power-platform fixtures (0x80072560) and Dataverse privilege errors (0x80040220).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { SYSTEM_ADMINISTRATOR } from './constants.ts';
import { bearerToken, buildQuery, newId, parseSelect, project, queryParam, resumeIndex, type EmulatorContext } from './common.ts';
import { indexes, type Bot, type DataverseOrg, type Environment, type SystemUser, type Tenant } from './tenant.ts';

/** Largest and default page size of the Dataverse Web API (D-page). */
export const DATAVERSE_MAX_PAGE_SIZE = 5000;

/** Columns served for `bots` (reference §4.3). */
export const BOT_COLUMNS = [
  'botid', 'name', 'schemaname', 'authenticationmode', 'authenticationtrigger', 'accesscontrolpolicy', 'authorizedsecuritygroupids',
  'publishedon', '_publishedby_value', '_ownerid_value', 'owneridtype', 'statecode', 'statuscode', 'language', 'runtimeprovider',
  'template', 'createdon', 'modifiedon', 'configuration',
] as const;

/** Columns served for `systemusers`. */
export const SYSTEMUSER_COLUMNS = [
  'systemuserid', 'fullname', 'domainname', 'internalemailaddress', 'azureactivedirectoryobjectid', 'applicationid', 'isdisabled',
  'accessmode', '_businessunitid_value',
] as const;

const CONTENT_TYPE = 'application/json; odata.metadata=minimal';

/** Deterministic privilege id (GUID form) for a privilege name such as `prvReadbot`. */
export function privilegeId(name: string): string {
  const h = createHash('sha1').update(`dataverse-privilege:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function dvError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('content-type', CONTENT_TYPE).send({ error: { code, message } });
}

/** The served row of a bot, `@odata.etag` first. */
export function botRow(bot: Bot): Record<string, unknown> {
  return { '@odata.etag': etag(bot.botid, bot.modifiedon), ...bot };
}

/** The served row of a systemuser, `@odata.etag` first. */
export function systemUserRow(su: SystemUser, org: DataverseOrg): Record<string, unknown> {
  return { '@odata.etag': etag(su.systemuserid, ''), ...su, _businessunitid_value: org.businessUnitId };
}

function etag(id: string, salt: string): string {
  const n = parseInt(createHash('sha1').update(id + salt).digest('hex').slice(0, 8), 16) % 90_000_000;
  return `W/"${10_000_000 + n}"`;
}

/** Finds the environment whose Dataverse org has this unique name, in any served tenant. */
function findOrg(ctx: EmulatorContext, uniqueName: string): { tenant: Tenant; env: Environment; org: DataverseOrg } | undefined {
  const key = uniqueName.toLowerCase();
  for (const tenant of ctx.store.list()) {
    for (const env of tenant.environments) {
      if (env.dataverse && env.dataverse.uniqueName.toLowerCase() === key) return { tenant, env, org: env.dataverse };
    }
  }
  return undefined;
}

type Filter = { field: string; value: string | number | boolean | null }[];

/** Parses `a eq 'x' and b eq 5 and c eq null and d eq {guid}`; null when unsupported. */
export function parseFilter(raw: string): Filter | null {
  const clauses = raw.split(/\s+and\s+/i);
  const out: Filter = [];
  for (const c of clauses) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s+eq\s+(.+?)\s*$/i.exec(c);
    if (!m) return null;
    const field = m[1] as string;
    const v = m[2] as string;
    let value: string | number | boolean | null;
    if (/^'.*'$/.test(v)) value = v.slice(1, -1).replace(/''/g, "'");
    else if (v === 'null') value = null;
    else if (v === 'true' || v === 'false') value = v === 'true';
    else if (/^-?\d+(\.\d+)?$/.test(v)) value = Number(v);
    else if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) value = v.toLowerCase();
    else return null;
    out.push({ field, value });
  }
  return out;
}

function matches(row: Record<string, unknown>, filter: Filter): boolean {
  return filter.every(({ field, value }) => {
    const actual = row[field];
    if (typeof actual === 'string' && typeof value === 'string') return actual.toLowerCase() === value.toLowerCase();
    return actual === value;
  });
}

/** The paging cookie `$skiptoken` Dataverse uses: `<cookie pagenumber="N" pagingcookie="…" istracking="False" />`. */
export function pagingCookie(entity: string, pageNumber: number, firstId: string, lastId: string): string {
  const inner = `<cookie page="${pageNumber}"><${entity}id last="{${lastId.toUpperCase()}}" first="{${firstId.toUpperCase()}}" /></cookie>`;
  return `<cookie pagenumber="${pageNumber + 1}" pagingcookie="${encodeURIComponent(inner)}" istracking="False" />`;
}

/** Reads a `pagingCookie` back: next page number and the last id of the previous page; null when malformed. */
export function readPagingCookie(token: string): { pageNumber: number; lastId: string } | null {
  const outer = /^<cookie pagenumber="(\d+)" pagingcookie="([^"]*)" istracking="(?:True|False)" \/>$/.exec(token.trim());
  if (!outer) return null;
  let inner: string;
  try {
    inner = decodeURIComponent(outer[2] as string);
  } catch {
    return null;
  }
  const last = /last="\{([0-9A-Fa-f-]{36})\}"/.exec(inner);
  if (!last) return null;
  return { pageNumber: Number(outer[1]), lastId: (last[1] as string).toLowerCase() };
}

interface Collection<T> {
  entity: 'bot' | 'systemuser';
  rows: readonly T[];
  key: (row: T) => string;
  find: (id: string) => number;
  render: (row: T) => Record<string, unknown>;
  columns: readonly string[];
}

/** A caller admitted to an org: the systemuser it maps to and whether it holds System Administrator. */
interface Resolved {
  tenant: Tenant;
  env: Environment;
  org: DataverseOrg;
  systemuserid: string;
  isUser: boolean;
  sysAdmin: boolean;
}

/**
 * Registers Dataverse routes under the `/dataverse` prefix: `GET /{uniqueName}/api/data/v9.2/bots`,
 * `…/systemusers`, `…/WhoAmI`. Access: the token audience must be `{base}/dataverse/{uniqueName}` (else 401 with
 * `WWW-Authenticate`, empty body), the token's tenant must own the org, and an app token's app must be an
 * application user: none → 403 `0x80072560` "The user is not a member of the organization."; without the System
 * Administrator role → 403 `0x80040220` "Principal user (Id={systemuserid}, type=8) is missing prvRead{entity}
 * privilege (Id=…)". Unknown column in `$select`/`$filter` → 400 `0x80060888`.
 */
export function registerDataverse(app: FastifyInstance, ctx: EmulatorContext): void {
  app.addHook('onRequest', async (_req, reply) => {
    const id = newId();
    reply.header('odata-version', '4.0').header('req_id', id).header('x-ms-service-request-id', id);
  });

  const resolve = async (
    req: FastifyRequest<{ Params: { org: string } }>,
    reply: FastifyReply,
  ): Promise<Resolved | null> => {
    const found = findOrg(ctx, req.params.org);
    if (!found) {
      dvError(reply, 404, '0x80072560', `The organization '${req.params.org}' does not exist.`);
      return null;
    }
    const resource = `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}`;
    const result = await ctx.tokens.verify(bearerToken(req));
    const unauthorized = (): null => {
      reply
        .code(401)
        .header('www-authenticate', `Bearer authorization_uri=${ctx.baseUrl()}/${found.tenant.id}/oauth2/authorize, resource_id=${resource}/`)
        .send();
      return null;
    };
    if (!result.ok) return unauthorized();
    if (result.claims.aud.replace(/\/+$/, '').toLowerCase() !== resource.toLowerCase()) return unauthorized();
    if (result.claims.tid !== found.tenant.id) return unauthorized();
    if (result.claims.idtyp === 'user') {
      const su = found.org.systemusers.find((s) => s.azureactivedirectoryobjectid === result.claims.oid);
      if (!su) {
        dvError(reply, 403, '0x80072560', 'The user is not a member of the organization.');
        return null;
      }
      return { ...found, systemuserid: su.systemuserid, isUser: true, sysAdmin: true };
    }
    const appUser = found.org.appUsers.find((a) => a.appId === result.claims.appid);
    if (!appUser) {
      dvError(reply, 403, '0x80072560', 'The user is not a member of the organization.');
      return null;
    }
    return { ...found, systemuserid: appUser.systemuserid, isUser: false, sysAdmin: appUser.roles.includes(SYSTEM_ADMINISTRATOR) };
  };

  const list = <T>(req: FastifyRequest<{ Params: { org: string } }>, reply: FastifyReply, base: string, path: string, coll: Collection<T>): FastifyReply => {
    const selectRaw = queryParam(req, '$select');
    const select = parseSelect(selectRaw);
    const typeName = `Microsoft.Dynamics.CRM.${coll.entity}`;
    if (select) {
      const bad = select.find((c) => !coll.columns.includes(c));
      if (bad) return dvError(reply, 400, '0x80060888', `Could not find a property named '${bad}' on type '${typeName}'.`);
    }
    for (const opt of ['$orderby', '$expand', '$apply', '$skip']) {
      if (queryParam(req, opt) !== undefined) return dvError(reply, 400, '0x80060888', `The emulator does not implement the query option '${opt}'.`);
    }
    const filterRaw = queryParam(req, '$filter');
    let filter: Filter | null = null;
    if (filterRaw !== undefined) {
      filter = parseFilter(filterRaw);
      if (!filter) return dvError(reply, 400, '0x80060888', `The query parameter $filter is not supported by the emulator: '${filterRaw}'. Use field eq value [and …].`);
      const bad = filter.find((f) => !coll.columns.includes(f.field));
      if (bad) return dvError(reply, 400, '0x80060888', `Could not find a property named '${bad.field}' on type '${typeName}'.`);
    }

    const prefer = String(req.headers.prefer ?? '');
    const pref = /odata\.maxpagesize\s*=\s*(\d+)/i.exec(prefer);
    let pageSize = DATAVERSE_MAX_PAGE_SIZE;
    if (pref) {
      pageSize = Math.min(DATAVERSE_MAX_PAGE_SIZE, Math.max(1, Number(pref[1])));
      reply.header('preference-applied', `odata.maxpagesize=${pageSize}`);
    }
    const topRaw = queryParam(req, '$top');
    let top: number | undefined;
    if (topRaw !== undefined && !pref) {
      if (!/^\d+$/.test(topRaw)) return dvError(reply, 400, '0x80060888', `Invalid value '${topRaw}' for $top.`);
      top = Number(topRaw);
    }

    let rows: readonly T[] = coll.rows;
    let find = coll.find;
    if (filter) {
      const f = filter;
      rows = coll.rows.filter((r) => matches(coll.render(r), f));
      find = (id) => rows.findIndex((r) => coll.key(r) === id);
    }

    let start = 0;
    let pageNumber = 1;
    const skiptoken = queryParam(req, '$skiptoken');
    if (skiptoken !== undefined) {
      const cookie = readPagingCookie(skiptoken);
      if (!cookie) return dvError(reply, 400, '0x80040203', 'Invalid paging cookie in $skiptoken.');
      pageNumber = cookie.pageNumber;
      start = resumeIndex(rows, coll.key, (pageNumber - 1) * pageSize, cookie.lastId, find);
    }
    const size = top !== undefined ? Math.min(top, pageSize) : pageSize;
    const slice = rows.slice(start, start + size);
    const body: Record<string, unknown> = {
      '@odata.context': `${base}/api/data/v9.2/$metadata#${path}${select ? `(${select.join(',')})` : ''}`,
      value: slice.map((r) => project(coll.render(r), select, ['@odata.etag'])),
    };
    const first = slice[0];
    const last = slice[slice.length - 1];
    if (top === undefined && start + slice.length < rows.length && first !== undefined && last !== undefined) {
      const token = pagingCookie(coll.entity, pageNumber, coll.key(first), coll.key(last));
      // Like Dataverse, '=' and '/' stay raw inside the encoded cookie.
      const skip = encodeURIComponent(token).replace(/%3D/g, '=').replace(/%2F/g, '/');
      const query = buildQuery([['$select', selectRaw], ['$filter', filterRaw]]);
      body['@odata.nextLink'] = `${base}/api/data/v9.2/${path}${query ? `${query}&` : '?'}$skiptoken=${skip}`;
    }
    return reply.header('content-type', CONTENT_TYPE).send(body);
  };

  const guard = (found: Resolved, reply: FastifyReply, privilege: string): boolean => {
    if (!found.sysAdmin) {
      dvError(reply, 403, '0x80040220', `Principal user (Id=${found.systemuserid}, type=8) is missing ${privilege} privilege (Id=${privilegeId(privilege)})`);
      return false;
    }
    return true;
  };

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/bots', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvReadbot')) return reply;
    const rows = found.org.bots;
    return list(req, reply, `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}`, 'bots', {
      entity: 'bot',
      rows,
      key: (b) => b.botid,
      find: (id) => indexes.bots.indexOf(rows, id),
      render: botRow,
      columns: BOT_COLUMNS,
    });
  });

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/systemusers', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvReadUser')) return reply;
    const rows = found.org.systemusers;
    const org = found.org;
    return list(req, reply, `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}`, 'systemusers', {
      entity: 'systemuser',
      rows,
      key: (s) => s.systemuserid,
      find: (id) => indexes.systemusers.indexOf(rows, id),
      render: (s) => systemUserRow(s, org),
      columns: SYSTEMUSER_COLUMNS,
    });
  });

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/WhoAmI', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    return reply.header('content-type', CONTENT_TYPE).send({
      '@odata.context': `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}/api/data/v9.2/$metadata#Microsoft.Dynamics.CRM.WhoAmIResponse`,
      BusinessUnitId: found.org.businessUnitId,
      UserId: found.systemuserid,
      OrganizationId: createHash('sha1').update(found.org.uniqueName).digest('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/, '$1-$2-$3-$4-$5'),
    });
  });
}

/** Dataverse-shaped 404 for an unknown path under `/dataverse`. */
export function dataverseNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = req.url.split('?')[0] ?? '';
  const seg = path.split('/').filter(Boolean).slice(5).join('/') || path;
  return dvError(reply, 404, '0x8006088a', `Resource not found for the segment '${seg}'.`);
}
