/**
 * Dataverse Web API per environment under `/dataverse/{uniqueName}/api/data/v9.2/` (reference §4): `bots`,
 * `systemusers`, `businessunits`, `roles`, `WhoAmI` and the application-user creation and role association of §4.1,
 * with `$select`, a small `$filter` (`field eq value [and …]`), `$top`,
 * `Prefer: odata.maxpagesize=N` (default and max 5000, answered with `Preference-Applied`) and absolute
 * `@odata.nextLink` paging with a paging-cookie `$skiptoken`.
 *
 * Sources: https://learn.microsoft.com/power-apps/developer/data-platform/webapi/query/page-results,
 * /power-apps/developer/data-platform/reference/entities/bot, /…/entities/systemuser; error codes from the
 * terraform-provider-power-platform fixtures (0x80072560) and Dataverse privilege errors (0x80040220).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { DATAVERSE_ROLE_NAMES, POWER_PLATFORM_ADMIN_ROLES, SYSTEM_ADMINISTRATOR } from './constants.ts';
import { bearerToken, buildQuery, newId, parseSelect, project, queryParam, resumeIndex, type EmulatorContext } from './common.ts';
import { findApp, indexes, type Bot, type DataverseOrg, type Environment, type SecurityRole, type SystemUser, type Tenant } from './tenant.ts';
import type { FeedStore } from './feed.ts';

/** Largest and default page size of the Dataverse Web API (D-page). */
const DATAVERSE_MAX_PAGE_SIZE = 5000;

/** Columns served for `bots` (reference §4.3). */
const BOT_COLUMNS = [
  'botid',
  'name',
  'schemaname',
  'authenticationmode',
  'authenticationtrigger',
  'accesscontrolpolicy',
  'authorizedsecuritygroupids',
  'publishedon',
  '_publishedby_value',
  '_ownerid_value',
  'owneridtype',
  'statecode',
  'statuscode',
  'language',
  'runtimeprovider',
  'template',
  'createdon',
  'modifiedon',
  'configuration',
] as const;

/** Columns served for `botcomponents` (reference §4.3; `agentcomponents.ts`). */
const BOTCOMPONENT_COLUMNS = [
  'botcomponentid',
  'name',
  'schemaname',
  'componenttype',
  'category',
  'description',
  'data',
  'content',
  '_parentbotid_value',
  '_parentbotcomponentid_value',
  'reusepolicy',
  'statecode',
  'statuscode',
  'createdon',
  'modifiedon',
] as const;

/** Columns served for `conversationtranscripts` (learn.microsoft.com …/webapi/reference/conversationtranscript; `transcripts.ts`). */
const TRANSCRIPT_COLUMNS = [
  'conversationtranscriptid',
  'name',
  'content',
  'conversationstarttime',
  'metadata',
  'schematype',
  'schemaversion',
  '_bot_conversationtranscriptid_value',
  'statecode',
  'statuscode',
  'createdon',
  'modifiedon',
] as const;

/** Columns served for `systemusers`. */
const SYSTEMUSER_COLUMNS = [
  'systemuserid',
  'fullname',
  'domainname',
  'internalemailaddress',
  'azureactivedirectoryobjectid',
  'applicationid',
  'isdisabled',
  'accessmode',
  '_businessunitid_value',
  'deletedstate',
] as const;

/** Columns served for `businessunits` (`parentbusinessunitid` is accepted in `$filter` for `_parentbusinessunitid_value`). */
const BUSINESSUNIT_COLUMNS = ['businessunitid', 'name', '_parentbusinessunitid_value'] as const;

/** Columns served for `roles` (and for the `systemuserroles_association` expansion). */
const ROLE_COLUMNS = ['roleid', 'name', '_businessunitid_value'] as const;

/** GUID form of a SHA-1 over `text` (stable ids derived from model data). */
function hashGuid(text: string): string {
  const h = createHash('sha1').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The security roles of an org's root business unit: `org.roles` when set, else `DATAVERSE_ROLE_NAMES` with ids
 * derived from the org's uniqueName (stable across calls and restarts).
 */
function securityRoles(org: DataverseOrg): SecurityRole[] {
  return org.roles ?? DATAVERSE_ROLE_NAMES.map((name) => ({ roleid: hashGuid(`dataverse-role:${org.uniqueName.toLowerCase()}:${name}`), name }));
}

/**
 * Role names a systemuser holds: an application user's `appUsers[].roles`, a person's `org.userRoles[systemuserid]`.
 * @param create make the backing list exist (for writes).
 */
export function rolesOf(org: DataverseOrg, systemuserid: string, create = false): string[] {
  const key = systemuserid.toLowerCase();
  const appUser = org.appUsers.find((a) => a.systemuserid.toLowerCase() === key);
  if (appUser) return appUser.roles;
  if (!create) return org.userRoles?.[key] ?? org.userRoles?.[systemuserid] ?? [];
  org.userRoles ??= {};
  return (org.userRoles[key] ??= []);
}

const CONTENT_TYPE = 'application/json; odata.metadata=minimal';
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Deterministic privilege id (GUID form) for a privilege name such as `prvReadbot`. */
export function privilegeId(name: string): string {
  const h = createHash('sha1').update(`dataverse-privilege:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function dvError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('content-type', CONTENT_TYPE).send({ error: { code, message } });
}

/** The served row of a bot, `@odata.etag` first. */
function botRow(bot: Bot): Record<string, unknown> {
  return { '@odata.etag': etag(bot.botid, bot.modifiedon), ...bot };
}

/** The served row of a systemuser, `@odata.etag` first (`deletedstate` 0: not deleted). */
function systemUserRow(su: SystemUser, org: DataverseOrg): Record<string, unknown> {
  return { '@odata.etag': etag(su.systemuserid, ''), ...su, _businessunitid_value: org.businessUnitId, deletedstate: 0 };
}

/** The served row of a security role. */
function roleRow(role: SecurityRole, org: DataverseOrg): Record<string, unknown> {
  return { '@odata.etag': etag(role.roleid, ''), roleid: role.roleid, name: role.name, _businessunitid_value: org.businessUnitId };
}

/** The served row of the root business unit. */
function businessUnitRow(org: DataverseOrg): Record<string, unknown> {
  return { '@odata.etag': etag(org.businessUnitId, ''), businessunitid: org.businessUnitId, name: org.domainName, _parentbusinessunitid_value: null };
}

function etag(id: string, salt: string): string {
  const n =
    parseInt(
      createHash('sha1')
        .update(id + salt)
        .digest('hex')
        .slice(0, 8),
      16,
    ) % 90_000_000;
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

type Filter = { field: string; op: 'eq' | 'gt' | 'ge' | 'lt' | 'le'; value: string | number | boolean | null }[];

/**
 * Parses `a eq 'x' and b eq 5 and c eq null and d eq {guid}`, and comparisons `gt`/`ge`/`lt`/`le` with a number or an
 * unquoted OData `DateTimeOffset` literal (`modifiedon gt 2026-03-16T02:17:42Z`); null when unsupported.
 */
function parseFilter(raw: string): Filter | null {
  const clauses = raw.split(/\s+and\s+/i);
  const out: Filter = [];
  for (const c of clauses) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s+(eq|gt|ge|lt|le)\s+(.+?)\s*$/i.exec(c);
    if (!m) return null;
    const field = m[1] as string;
    const op = (m[2] as string).toLowerCase() as Filter[number]['op'];
    const v = m[3] as string;
    let value: string | number | boolean | null;
    if (op !== 'eq') {
      if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?(?:Z|[+-]\d{2}:\d{2})$/.test(v)) value = v;
      else if (/^-?\d+(\.\d+)?$/.test(v)) value = Number(v);
      else return null;
      out.push({ field, op, value });
      continue;
    }
    if (/^'.*'$/.test(v)) value = v.slice(1, -1).replace(/''/g, "'");
    else if (v === 'null') value = null;
    else if (v === 'true' || v === 'false') value = v === 'true';
    else if (/^-?\d+(\.\d+)?$/.test(v)) value = Number(v);
    else if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) value = v.toLowerCase();
    else return null;
    out.push({ field, op, value });
  }
  return out;
}

function matches(row: Record<string, unknown>, filter: Filter): boolean {
  return filter.every(({ field, op, value }) => {
    const actual = row[field];
    if (op !== 'eq') {
      // Dates compare as instants, numbers as numbers; a null or missing value matches no comparison.
      const a = typeof value === 'string' ? Date.parse(String(actual)) : Number(actual);
      const b = typeof value === 'string' ? Date.parse(value) : Number(value);
      if (actual === null || actual === undefined || Number.isNaN(a) || Number.isNaN(b)) return false;
      return op === 'gt' ? a > b : op === 'ge' ? a >= b : op === 'lt' ? a < b : a <= b;
    }
    if (typeof actual === 'string' && typeof value === 'string') return actual.toLowerCase() === value.toLowerCase();
    return actual === value;
  });
}

/** The paging cookie `$skiptoken` Dataverse uses: `<cookie pagenumber="N" pagingcookie="…" istracking="False" />`. */
function pagingCookie(entity: string, pageNumber: number, firstId: string, lastId: string): string {
  const inner = `<cookie page="${pageNumber}"><${entity}id last="{${lastId.toUpperCase()}}" first="{${firstId.toUpperCase()}}" /></cookie>`;
  return `<cookie pagenumber="${pageNumber + 1}" pagingcookie="${encodeURIComponent(inner)}" istracking="False" />`;
}

/** Reads a `pagingCookie` back: next page number and the last id of the previous page; null when malformed. */
function readPagingCookie(token: string): { pageNumber: number; lastId: string } | null {
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
  entity: 'bot' | 'botcomponent' | 'systemuser' | 'businessunit' | 'role' | 'conversationtranscript';
  rows: readonly T[];
  key: (row: T) => string;
  find: (id: string) => number;
  render: (row: T) => Record<string, unknown>;
  columns: readonly string[];
  /** `$filter` names accepted for a served column (`parentbusinessunitid` → `_parentbusinessunitid_value`). */
  filterAliases?: Record<string, string>;
  /** `$expand`-able navigation properties: name → related rows of a row (already rendered), with their columns. */
  expand?: Record<string, { columns: readonly string[]; related: (row: T) => Record<string, unknown>[] }>;
}

/**
 * A caller admitted to an org: the systemuser it maps to and whether it is privileged (an admin user — Global or
 * Power Platform Administrator in `wids` — or a systemuser holding System Administrator).
 */
interface Resolved {
  tenant: Tenant;
  env: Environment;
  org: DataverseOrg;
  systemuserid: string;
  isUser: boolean;
  sysAdmin: boolean;
}

/**
 * Registers Dataverse routes under the `/dataverse` prefix (`{o}` = `/{uniqueName}/api/data/v9.2`):
 * - reads: `GET {o}/bots`, `{o}/botcomponents` (agent components, `agentcomponents.ts`), `{o}/conversationtranscripts`
 *   (`transcripts.ts`; `$filter=modifiedon gt {date}`; 404 `0x8006088a` where the org has no such table), `{o}/systemusers` (`$expand=systemuserroles_association($select=…)`), `{o}/businessunits`
 *   (the root unit; `$filter=parentbusinessunitid eq null`), `{o}/roles`, `{o}/WhoAmI`;
 * - the application-user sequence of reference §4.1: `POST {o}/systemusers` (application users only; 204 +
 *   `OData-EntityId`, or 201 with `Prefer: return=representation`; same applicationid twice → 412 `0x80040237`;
 *   unknown business unit → 404 `0x80040217`; app without service principal → 400 `0x80040203`),
 *   `POST {o}/systemusers({id})/systemuserroles_association/$ref` body `{"@odata.id":"…/roles({roleid})"}` → 204
 *   (idempotent; unknown role → 400 `0x80060888`; environment flag `refuseRoleAssignment` → 403 `0x80040220`
 *   "… missing prvAssignRole privilege …", the emulator's choice), `DELETE {o}/systemusers({id})/systemuserroles_association/$ref?$id=…/roles({roleid})`
 *   (or `…/systemuserroles_association({roleid})/$ref`) → 204.
 * Access: the token audience must be `{base}/dataverse/{uniqueName}` (else 401 with `WWW-Authenticate`, empty body) and
 * the token's tenant must own the org. Privileged callers: user tokens whose `wids` hold Global or Power Platform
 * Administrator, and systemusers (application users or people) holding System Administrator. An app that is not an
 * application user, or a non-admin user without a systemuser → 403 `0x80072560` "The user is not a member of the
 * organization."; a member without System Administrator → 403 `0x80040220` "Principal user (Id={systemuserid},
 * type=8) is missing {privilege} privilege (Id=…)" (`WhoAmI` only needs membership). Unknown column in
 * `$select`/`$filter`/`$expand` → 400 `0x80060888`.
 */
export function registerDataverse(app: FastifyInstance, ctx: EmulatorContext & { feeds?: FeedStore }): void {
  app.addHook('onRequest', async (_req, reply) => {
    const id = newId();
    reply.header('odata-version', '4.0').header('req_id', id).header('x-ms-service-request-id', id);
  });

  const resolve = async (req: FastifyRequest<{ Params: { org: string } }>, reply: FastifyReply): Promise<Resolved | null> => {
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
      // Global and Power Platform Administrators are System Administrators of every org (Dataverse adds them on first
      // access; the emulator does not add a row).
      const admin = (result.claims.wids ?? []).some((w) => POWER_PLATFORM_ADMIN_ROLES.includes(w));
      if (admin)
        return {
          ...found,
          systemuserid: su?.systemuserid ?? hashGuid(`dataverse-admin:${found.org.uniqueName}:${result.claims.oid}`),
          isUser: true,
          sysAdmin: true,
        };
      if (!su) {
        dvError(reply, 403, '0x80072560', 'The user is not a member of the organization.');
        return null;
      }
      return { ...found, systemuserid: su.systemuserid, isUser: true, sysAdmin: rolesOf(found.org, su.systemuserid).includes(SYSTEM_ADMINISTRATOR) };
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
    for (const opt of ['$orderby', '$apply', '$skip']) {
      if (queryParam(req, opt) !== undefined) return dvError(reply, 400, '0x80060888', `The emulator does not implement the query option '${opt}'.`);
    }
    const expandRaw = queryParam(req, '$expand');
    let expand: { name: string; select: string[] | undefined; columns: readonly string[]; related: (row: T) => Record<string, unknown>[] } | undefined;
    if (expandRaw !== undefined) {
      const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$/.exec(expandRaw);
      const nav = m ? coll.expand?.[m[1] as string] : undefined;
      if (!m || !nav) return dvError(reply, 400, '0x80060888', `Could not find a property named '${m?.[1] ?? expandRaw}' on type '${typeName}'.`);
      const inner = (m[2] ?? '').trim();
      let innerSelect: string[] | undefined;
      if (inner !== '') {
        const sel = /^\$select=([^;]*)$/.exec(inner);
        if (!sel) return dvError(reply, 400, '0x80060888', `The emulator only supports $select inside $expand, got '${inner}'.`);
        innerSelect = parseSelect(sel[1]);
        const badInner = innerSelect?.find((c) => !nav.columns.includes(c));
        if (badInner) return dvError(reply, 400, '0x80060888', `Could not find a property named '${badInner}' on type 'Microsoft.Dynamics.CRM.role'.`);
      }
      expand = { name: m[1] as string, select: innerSelect, columns: nav.columns, related: nav.related };
    }
    const filterRaw = queryParam(req, '$filter');
    let filter: Filter | null = null;
    if (filterRaw !== undefined) {
      filter = parseFilter(filterRaw);
      if (!filter)
        return dvError(
          reply,
          400,
          '0x80060888',
          `The query parameter $filter is not supported by the emulator: '${filterRaw}'. Use field eq value [and …] (or gt/ge/lt/le with a number or a date).`,
        );
      filter = filter.map((f) => ({ ...f, field: coll.filterAliases?.[f.field] ?? f.field }));
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
      value: slice.map((r) => {
        const row = project(coll.render(r), select, ['@odata.etag']);
        if (expand) row[expand.name] = expand.related(r).map((x) => project(x, expand.select, ['@odata.etag']));
        return row;
      }),
    };
    const first = slice[0];
    const last = slice[slice.length - 1];
    if (top === undefined && start + slice.length < rows.length && first !== undefined && last !== undefined) {
      const token = pagingCookie(coll.entity, pageNumber, coll.key(first), coll.key(last));
      // Like Dataverse, '=' and '/' stay raw inside the encoded cookie.
      const skip = encodeURIComponent(token).replace(/%3D/g, '=').replace(/%2F/g, '/');
      const query = buildQuery([
        ['$select', selectRaw],
        ['$expand', expandRaw],
        ['$filter', filterRaw],
      ]);
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

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/botcomponents', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvReadbotcomponent')) return reply;
    const rows = found.org.botcomponents ?? [];
    // The audit feed's component records say when components were last created and changed: served dates are no
    // earlier than those (feed.ts `componentChanges`), so a record and the component it names agree.
    const changes = ctx.feeds?.feed(found.tenant.id)?.componentChanges() ?? new Map<string, { created: number | null; modified: number }>();
    const later = (stored: string, ms: number | null | undefined): string =>
      ms !== null && ms !== undefined && ms > Date.parse(stored) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : stored;
    return list(req, reply, `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}`, 'botcomponents', {
      entity: 'botcomponent',
      rows,
      key: (c) => c.botcomponentid,
      find: (id) => rows.findIndex((c) => c.botcomponentid === id),
      render: (c) => {
        const change = changes.get(c.botcomponentid);
        const row = change ? { ...c, createdon: later(c.createdon, change.created), modifiedon: later(c.modifiedon, change.modified) } : c;
        return { '@odata.etag': etag(row.botcomponentid, row.modifiedon), ...row };
      },
      columns: BOTCOMPONENT_COLUMNS,
    });
  });

  // Conversation transcripts (`transcripts.ts`): an org without the table answers as Dataverse does for an entity set
  // it does not know (404 0x8006088a), after the caller is admitted.
  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/conversationtranscripts', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    const rows = found.org.conversationtranscripts;
    if (!rows) return dvError(reply, 404, '0x8006088a', "Resource not found for the segment 'conversationtranscripts'.");
    if (!guard(found, reply, 'prvReadconversationtranscript')) return reply;
    return list(req, reply, `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}`, 'conversationtranscripts', {
      entity: 'conversationtranscript',
      rows,
      key: (t) => t.conversationtranscriptid,
      find: (id) => rows.findIndex((t) => t.conversationtranscriptid === id),
      render: (t) => ({ '@odata.etag': etag(t.conversationtranscriptid, t.modifiedon), ...t }),
      columns: TRANSCRIPT_COLUMNS,
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
      expand: {
        systemuserroles_association: {
          columns: ROLE_COLUMNS,
          related: (s) => {
            const names = rolesOf(org, s.systemuserid);
            return securityRoles(org)
              .filter((r) => names.includes(r.name))
              .map((r) => roleRow(r, org));
          },
        },
      },
    });
  });

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/businessunits', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvReadBusinessUnit')) return reply;
    const org = found.org;
    const rows = [org];
    return list(req, reply, `${ctx.baseUrl()}/dataverse/${org.uniqueName}`, 'businessunits', {
      entity: 'businessunit',
      rows,
      key: (o) => o.businessUnitId,
      find: (id) => rows.findIndex((o) => o.businessUnitId === id),
      render: businessUnitRow,
      columns: BUSINESSUNIT_COLUMNS,
      filterAliases: { parentbusinessunitid: '_parentbusinessunitid_value' },
    });
  });

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/roles', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvReadRole')) return reply;
    const org = found.org;
    const rows = securityRoles(org);
    return list(req, reply, `${ctx.baseUrl()}/dataverse/${org.uniqueName}`, 'roles', {
      entity: 'role',
      rows,
      key: (r) => r.roleid,
      find: (id) => rows.findIndex((r) => r.roleid === id),
      render: (r) => roleRow(r, org),
      columns: ROLE_COLUMNS,
    });
  });

  app.post<{ Params: { org: string } }>('/:org/api/data/v9.2/systemusers', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvCreateUser')) return reply;
    const { org, tenant } = found;
    const body = (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;
    const appId = typeof body.applicationid === 'string' ? body.applicationid.toLowerCase() : undefined;
    if (!appId || !GUID.test(appId)) {
      return dvError(reply, 400, '0x80040203', 'Invalid argument: the emulator creates application users only; applicationid (GUID) is required.');
    }
    const bind = body['businessunitid@odata.bind'];
    if (bind !== undefined) {
      const m = typeof bind === 'string' ? /businessunits\(([0-9a-fA-F-]{36})\)\s*$/.exec(bind) : null;
      if (!m) return dvError(reply, 400, '0x80060888', `Invalid businessunitid@odata.bind value '${String(bind)}'.`);
      if ((m[1] as string).toLowerCase() !== org.businessUnitId.toLowerCase()) {
        return dvError(reply, 404, '0x80040217', `businessunit With Id = ${(m[1] as string).toLowerCase()} Does Not Exist`);
      }
    }
    const app = findApp(tenant, appId);
    if (!app) return dvError(reply, 400, '0x80040203', `Invalid argument: no service principal for application '${appId}' exists in tenant ${tenant.id}.`);
    if (org.systemusers.some((u) => u.applicationid?.toLowerCase() === appId)) {
      return dvError(reply, 412, '0x80040237', 'A record with matching key values already exists.');
    }
    const su: SystemUser = {
      systemuserid: newId(),
      fullname: `# ${app.displayName}`,
      domainname: `${app.appId}@${tenant.domains[0] ?? 'emulator.local'}`,
      internalemailaddress: `${app.appId}@${tenant.domains[0] ?? 'emulator.local'}`,
      azureactivedirectoryobjectid: app.servicePrincipalObjectId,
      applicationid: app.appId,
      isdisabled: body.isdisabled === true,
      accessmode: typeof body.accessmode === 'number' ? body.accessmode : 4,
    };
    org.systemusers.push(su);
    indexes.systemusers.invalidate(org.systemusers);
    if (!org.appUsers.some((a) => a.appId.toLowerCase() === appId)) org.appUsers.push({ appId: app.appId, systemuserid: su.systemuserid, roles: [] });
    const base = `${ctx.baseUrl()}/dataverse/${org.uniqueName}/api/data/v9.2`;
    reply.header('odata-entityid', `${base}/systemusers(${su.systemuserid})`);
    if (/return=representation/i.test(String(req.headers.prefer ?? ''))) {
      return reply
        .code(201)
        .header('content-type', CONTENT_TYPE)
        .send({ '@odata.context': `${base}/$metadata#systemusers/$entity`, ...systemUserRow(su, org) });
    }
    return reply.code(204).send();
  });

  const association = (raw: string): { userId: string; roleId: string | undefined } | null => {
    let path: string;
    try {
      path = decodeURIComponent(raw);
    } catch {
      return null;
    }
    const m = /^systemusers\(([0-9a-fA-F-]{36})\)\/systemuserroles_association(?:\(([0-9a-fA-F-]{36})\))?\/\$ref$/.exec(path);
    return m ? { userId: (m[1] as string).toLowerCase(), roleId: m[2]?.toLowerCase() } : null;
  };
  const roleIdOf = (ref: unknown): string | undefined => {
    if (typeof ref !== 'string') return undefined;
    const m = /roles\(([0-9a-fA-F-]{36})\)\s*$/.exec(ref);
    return m ? (m[1] as string).toLowerCase() : undefined;
  };

  app.post<{ Params: { org: string; '*': string } }>('/:org/api/data/v9.2/*', async (req, reply) => {
    const target = association(req.params['*']);
    if (!target || target.roleId !== undefined) return dataverseNotFound(req, reply);
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvAssignRole')) return reply;
    const { org, env } = found;
    const su = indexes.systemusers.get(org.systemusers, target.userId) ?? org.systemusers.find((u) => u.systemuserid.toLowerCase() === target.userId);
    if (!su) return dvError(reply, 404, '0x80040217', `systemuser With Id = ${target.userId} Does Not Exist`);
    const body = (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;
    const roleId = roleIdOf(body['@odata.id']);
    if (!roleId) return dvError(reply, 400, '0x80060888', "The request body must contain '@odata.id' naming a role: {base}/roles({roleid}).");
    const role = securityRoles(org).find((r) => r.roleid.toLowerCase() === roleId);
    if (!role) return dvError(reply, 400, '0x80060888', `Resource not found for the segment 'roles(${roleId})'.`);
    if (env.refuseRoleAssignment) {
      return dvError(
        reply,
        403,
        '0x80040220',
        `Principal user (Id=${found.systemuserid}, type=8) is missing prvAssignRole privilege (Id=${privilegeId('prvAssignRole')}) on OTC=1036 for entity 'role'.`,
      );
    }
    const roles = rolesOf(org, su.systemuserid, true);
    if (!roles.includes(role.name)) roles.push(role.name);
    return reply.code(204).send();
  });

  app.delete<{ Params: { org: string; '*': string } }>('/:org/api/data/v9.2/*', async (req, reply) => {
    const target = association(req.params['*']);
    if (!target) return dataverseNotFound(req, reply);
    const found = await resolve(req, reply);
    if (!found) return reply;
    if (!guard(found, reply, 'prvAssignRole')) return reply;
    const { org } = found;
    const su = org.systemusers.find((u) => u.systemuserid.toLowerCase() === target.userId);
    if (!su) return dvError(reply, 404, '0x80040217', `systemuser With Id = ${target.userId} Does Not Exist`);
    const roleId = target.roleId ?? roleIdOf(queryParam(req, '$id'));
    if (!roleId) return dvError(reply, 400, '0x80060888', "Disassociation needs '$id={base}/roles({roleid})' or 'systemuserroles_association({roleid})/$ref'.");
    const role = securityRoles(org).find((r) => r.roleid.toLowerCase() === roleId);
    if (!role) return dvError(reply, 400, '0x80060888', `Resource not found for the segment 'roles(${roleId})'.`);
    const roles = rolesOf(org, su.systemuserid, true);
    const i = roles.indexOf(role.name);
    if (i >= 0) roles.splice(i, 1);
    return reply.code(204).send();
  });

  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/WhoAmI', async (req, reply) => {
    const found = await resolve(req, reply);
    if (!found) return reply;
    return reply.header('content-type', CONTENT_TYPE).send({
      '@odata.context': `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}/api/data/v9.2/$metadata#Microsoft.Dynamics.CRM.WhoAmIResponse`,
      BusinessUnitId: found.org.businessUnitId,
      UserId: found.systemuserid,
      OrganizationId: createHash('sha1')
        .update(found.org.uniqueName)
        .digest('hex')
        .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/, '$1-$2-$3-$4-$5'),
    });
  });
}

/** Dataverse-shaped 404 for an unknown path under `/dataverse`. */
export function dataverseNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = req.url.split('?')[0] ?? '';
  const seg = path.split('/').filter(Boolean).slice(5).join('/') || path;
  return dvError(reply, 404, '0x8006088a', `Resource not found for the segment '${seg}'.`);
}
