/**
 * Microsoft Graph directory reads under `/graph` (reference §5): users, groups and group members with `$select`,
 * `$top` (default 100, max 999), absolute `@odata.nextLink` paging with an opaque `$skiptoken`, delta query on users
 * and groups (`@odata.deltaLink`, `@removed`; change tracking in delta.ts), and Graph's error envelope
 * `{"error":{"code","message","innerError":{"date","request-id","client-request-id"}}}`.
 *
 * Sources: https://learn.microsoft.com/graph/api/user-list, /graph/api/group-list, /graph/api/group-list-members,
 * /graph/paging, /graph/errors, /graph/api/user-delta, /graph/api/group-delta, /graph/delta-query-overview.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RESOURCES } from './constants.ts';
import {
  bearerToken,
  buildQuery,
  decodeCursor,
  encodeCursor,
  graphDate,
  newId,
  parseSelect,
  project,
  queryParam,
  resumeIndex,
  type EmulatorContext,
} from './common.ts';
import { decodeDeltaToken, encodeDeltaToken, type DeltaCollection, type DeltaToken, type DirectoryChanges } from './delta.ts';
import { indexes, resolveMember, type ArrayIndex, type DirectoryGroup, type DirectoryUser, type ResolvedMember, type Tenant } from './tenant.ts';
import type { AccessTokenClaims } from './tokens.ts';
import type { FaultInjector } from './faults.ts';
import type { Throttler } from './throttling.ts';

/** Graph's default property set of `user` in v1.0 list responses (user-list.md). */
const USER_DEFAULT_PROPERTIES = [
  'businessPhones',
  'displayName',
  'givenName',
  'jobTitle',
  'mail',
  'mobilePhone',
  'officeLocation',
  'preferredLanguage',
  'surname',
  'userPrincipalName',
  'id',
] as const;

/** Properties `$select` may name on users (stored ones; a few more exist in Graph and answer null here). */
const USER_SELECTABLE = new Set<string>([
  ...USER_DEFAULT_PROPERTIES,
  'accountEnabled',
  'userType',
  'createdDateTime',
  'department',
  'companyName',
  'employeeId',
  'usageLocation',
  'onPremisesSyncEnabled',
  'externalUserState',
  'creationType',
  'otherMails',
  'proxyAddresses',
  'mailNickname',
  'country',
  'city',
  'assignedLicenses',
]);

/** Properties of a group as served (all are in the default set, as in Graph v1.0). */
const GROUP_PROPERTIES = [
  'id',
  'deletedDateTime',
  'classification',
  'createdDateTime',
  'description',
  'displayName',
  'expirationDateTime',
  'groupTypes',
  'isAssignableToRole',
  'mail',
  'mailEnabled',
  'mailNickname',
  'membershipRule',
  'membershipRuleProcessingState',
  'onPremisesSyncEnabled',
  'preferredDataLocation',
  'proxyAddresses',
  'renewedDateTime',
  'securityEnabled',
  'securityIdentifier',
  'visibility',
] as const;

const GROUP_SELECTABLE = new Set<string>(GROUP_PROPERTIES);
/** On `groups/delta`, `$select` may also name `members`: each group then carries `members@delta` (group-delta.md). */
const GROUP_DELTA_SELECTABLE = new Set<string>([...GROUP_PROPERTIES, 'members']);

/**
 * Member entries (`members@delta`) per page of a membership-tracking `groups/delta` round, per group slot of the page
 * size: a page holds at most `size` group objects and `size × 5` member entries; a larger group is split over pages,
 * the same group object repeating with the next part of its members (delta-query-groups.md, "Paging through members
 * in a large group"). Graph's own split point is not documented (UNCONFIRMED).
 */
const MEMBERS_DELTA_PER_GROUP_SLOT = 5;

/** Roles that allow `GET /users`. */
const USERS_ROLES = ['User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'];
/** Roles that allow `GET /groups`. */
const GROUPS_ROLES = ['Group.Read.All', 'GroupMember.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'];
/** Roles that allow `GET /groups/{id}/members`. */
const MEMBERS_ROLES = ['GroupMember.Read.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'];

export const GRAPH_CONTENT_TYPE = 'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8';
const GRAPH_APP_ID = '00000003-0000-0000-c000-000000000000';

/** Sends Graph's error envelope with the request's `request-id`. */
export function sendError(req: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const requestId = (reply.getHeader('request-id') as string | undefined) ?? newId();
  const clientRequestId = (reply.getHeader('client-request-id') as string | undefined) ?? requestId;
  return reply
    .code(status)
    .type('application/json')
    .send({ error: { code, message, innerError: { date: graphDate(), 'request-id': requestId, 'client-request-id': clientRequestId } } });
}

/** Full Graph representation of a user (all stored fields; extra selectable ones are null). */
function userResource(u: DirectoryUser): Record<string, unknown> {
  return {
    businessPhones: u.businessPhones,
    displayName: u.displayName,
    givenName: u.givenName,
    jobTitle: u.jobTitle,
    mail: u.mail,
    mobilePhone: u.mobilePhone,
    officeLocation: u.officeLocation,
    preferredLanguage: u.preferredLanguage,
    surname: u.surname,
    userPrincipalName: u.userPrincipalName,
    id: u.id,
    accountEnabled: u.accountEnabled,
    userType: u.userType,
    createdDateTime: u.createdDateTime,
    department: u.department,
    companyName: null,
    employeeId: null,
    usageLocation: u.userType === 'Member' ? 'US' : null,
    onPremisesSyncEnabled: null,
    externalUserState: u.userType === 'Guest' ? 'Accepted' : null,
    creationType: u.userType === 'Guest' ? 'Invitation' : null,
    otherMails: [],
    proxyAddresses: u.mail ? [`SMTP:${u.mail}`] : [],
    mailNickname: u.userPrincipalName.split('@')[0] ?? null,
    country: null,
    city: null,
    assignedLicenses: u.assignedLicenses ?? [],
  };
}

/** Graph representation of a user restricted to `$select` (default set when absent). */
function renderUser(u: DirectoryUser, select: readonly string[] | undefined): Record<string, unknown> {
  return project(userResource(u), select ?? USER_DEFAULT_PROPERTIES);
}

/** Full Graph representation of a group. */
function groupResource(g: DirectoryGroup): Record<string, unknown> {
  return {
    id: g.id,
    deletedDateTime: null,
    classification: null,
    createdDateTime: g.createdDateTime,
    description: g.description,
    displayName: g.displayName,
    expirationDateTime: null,
    groupTypes: g.groupTypes,
    isAssignableToRole: null,
    mail: g.mail,
    mailEnabled: g.mailEnabled,
    mailNickname: g.mailNickname,
    membershipRule: null,
    membershipRuleProcessingState: null,
    onPremisesSyncEnabled: null,
    preferredDataLocation: null,
    proxyAddresses: g.mail ? [`SMTP:${g.mail}`] : [],
    renewedDateTime: g.createdDateTime,
    securityEnabled: g.securityEnabled,
    securityIdentifier: `S-1-12-1-${parseInt(g.id.slice(0, 8), 16)}-${parseInt(g.id.slice(9, 13) + g.id.slice(14, 18), 16)}`,
    visibility: g.visibility,
  };
}

/** A group member with `@odata.type` first, restricted to `$select` when given (absent properties are skipped). */
function renderMember(m: ResolvedMember, select: readonly string[] | undefined): Record<string, unknown> {
  const type = { '@odata.type': `#microsoft.graph.${m.kind}` };
  switch (m.kind) {
    case 'user':
      return { ...type, ...(select ? project(userResource(m.object), select) : renderUser(m.object, undefined)) };
    case 'group':
      return { ...type, ...project(groupResource(m.object), select) };
    case 'servicePrincipal': {
      const sp = m.object;
      const full = {
        id: sp.id,
        deletedDateTime: null,
        accountEnabled: true,
        appDisplayName: sp.displayName,
        appId: sp.appId,
        displayName: sp.displayName,
        servicePrincipalType: sp.servicePrincipalType,
      };
      return { ...type, ...project(full, select) };
    }
    case 'device': {
      const d = m.object;
      const full = {
        id: d.id,
        deletedDateTime: null,
        accountEnabled: d.accountEnabled,
        deviceId: d.deviceId,
        displayName: d.displayName,
        operatingSystem: d.operatingSystem,
        operatingSystemVersion: d.operatingSystemVersion,
      };
      return { ...type, ...project(full, select) };
    }
  }
}

/** A request's verified token and the tenant it names. */
export interface Authed {
  tenant: Tenant;
  claims: AccessTokenClaims;
}

/**
 * Validates the bearer token for Graph: signature, lifetime, audience `https://graph.microsoft.com` (or Graph's app id)
 * and a served tenant. Sends 401 `InvalidAuthenticationToken` and returns null when invalid.
 */
export async function authenticate(ctx: EmulatorContext, req: FastifyRequest, reply: FastifyReply): Promise<Authed | null> {
  const result = await ctx.tokens.verify(bearerToken(req));
  const fail = (message: string): null => {
    reply.header('www-authenticate', `Bearer realm="", authorization_uri="${ctx.baseUrl()}/common/oauth2/authorize", client_id="${GRAPH_APP_ID}"`);
    sendError(req, reply, 401, 'InvalidAuthenticationToken', message);
    return null;
  };
  if (!result.ok) {
    switch (result.reason) {
      case 'missing':
        return fail('Access token is empty.');
      case 'expired':
        return fail('Lifetime validation failed, the token is expired.');
      case 'not-yet-valid':
        return fail('Lifetime validation failed, the token is not yet valid.');
      case 'signature':
        return fail('Access token validation failure. Invalid signature.');
      default:
        return fail('IDX14100: JWT is not well formed, there are no dots (.).');
    }
  }
  const aud = result.claims.aud.replace(/\/+$/, '');
  if (aud !== RESOURCES.graph && aud !== GRAPH_APP_ID) return fail('Access token validation failure. Invalid audience.');
  const tenant = ctx.store.get(result.claims.tid);
  if (!tenant) return fail('Access token validation failure. Invalid issuer.');
  return { tenant, claims: result.claims };
}

/** Whether an app token carries one of the roles (delegated tokens always pass). */
export function hasRole(claims: AccessTokenClaims, allowed: readonly string[]): boolean {
  if (claims.idtyp === 'user') return true; // delegated tokens: the emulator treats the signed-in user as an admin
  return (claims.roles ?? []).some((r) => allowed.includes(r));
}

/** 403 `Authorization_RequestDenied`. */
export function denied(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(req, reply, 403, 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.');
}

interface ListQuery {
  select: string[] | undefined;
  top: number;
  topRaw: string | undefined;
  skiptoken: string | undefined;
}

/** Parses `$select`, `$top`, `$skiptoken`; sends 400 and returns null on invalid input or unsupported options. */
function parseList(req: FastifyRequest, reply: FastifyReply, selectable: Set<string> | null, typeName: string): ListQuery | null {
  for (const opt of ['$filter', '$orderby', '$search', '$expand', '$count', '$skip']) {
    if (queryParam(req, opt) !== undefined) {
      sendError(req, reply, 400, 'Request_UnsupportedQuery', `The emulator does not implement the query option '${opt}' on this resource.`);
      return null;
    }
  }
  const select = parseSelect(queryParam(req, '$select'));
  if (select && selectable) {
    const bad = select.find((p) => !selectable.has(p));
    if (bad) {
      sendError(req, reply, 400, 'Request_BadRequest', `Could not find a property named '${bad}' on type 'microsoft.graph.${typeName}'.`);
      return null;
    }
  }
  const topRaw = queryParam(req, '$top');
  let top = 100;
  if (topRaw !== undefined) {
    const n = /^\d+$/.test(topRaw) ? Number(topRaw) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > 999) {
      sendError(req, reply, 400, 'Request_UnsupportedQuery', `Invalid page size specified: '${topRaw}'. Must be between 1 and 999 inclusive.`);
      return null;
    }
    top = n;
  }
  return { select, top, topRaw, skiptoken: queryParam(req, '$skiptoken') };
}

/**
 * One page of a collection: resumes from the cursor (keyset on the element key), returns the slice and the cursor of
 * the next page (null at the end). Sends 400 `Directory_ExpiredPageToken` and returns null for a bad `$skiptoken`.
 */
function page<T>(
  req: FastifyRequest,
  reply: FastifyReply,
  collection: string,
  items: readonly T[],
  key: (item: T) => string,
  find: (id: string) => number,
  q: ListQuery,
): { slice: T[]; next: string | null } | null {
  let start = 0;
  if (q.skiptoken !== undefined) {
    const cursor = decodeCursor(q.skiptoken);
    if (!cursor || cursor.c !== collection) {
      sendError(req, reply, 400, 'Directory_ExpiredPageToken', 'The specified page token value has expired and can no longer be included in your request.');
      return null;
    }
    start = resumeIndex(items, key, cursor.index, cursor.last, find);
  }
  const slice = items.slice(start, start + q.top);
  const end = start + slice.length;
  const last = slice[slice.length - 1];
  const next = end < items.length && last !== undefined ? encodeCursor({ c: collection, index: end, last: key(last) }) : null;
  return { slice, next };
}

function nextLink(base: string, path: string, q: ListQuery, token: string): string {
  return `${base}${path}${buildQuery([
    ['$top', q.topRaw],
    ['$select', q.select?.join(',')],
    ['$skiptoken', token],
  ])}`;
}

function context(base: string, version: string, entity: string, select: readonly string[] | undefined): string {
  return `${base}/graph/${version}/$metadata#${entity}${select ? `(${select.join(',')})` : ''}`;
}

/**
 * What the Graph routes need beyond the common context: the change log behind delta query, and the fault injector
 * (`$batch` decides faults per inner request; graphestate.ts).
 */
export interface GraphContext extends EmulatorContext {
  changes: DirectoryChanges;
  faults?: FaultInjector;
  /** The enforced limits (`$batch` charges each inner request on its own). */
  throttling?: Throttler;
}

/** 400 `BadRequest` message for a `$deltatoken`/`$skiptoken` that is not a token of this collection (UNCONFIRMED). */
const INVALID_DELTA_TOKEN_MESSAGE = 'Invalid delta token.';
/**
 * 410 `syncStateNotFound` message for a token issued before `expireDeltaTokens` (the code is the delta overview's;
 * the wording is UNCONFIRMED).
 */
const SYNC_STATE_NOT_FOUND_MESSAGE = 'The sync state is not found or has expired. Please do a full sync.';

/** A collection served with delta query. */
interface DeltaSpec<T extends { id: string }> {
  collection: DeltaCollection;
  roles: readonly string[];
  selectable: Set<string>;
  typeName: string;
  items: (t: Tenant) => T[];
  index: ArrayIndex<T>;
  /** The resource restricted to `$select` (default property set when absent); `id` is always included. */
  render: (item: T, select: readonly string[] | undefined) => Record<string, unknown>;
}

const DELTA_SPECS: { users: DeltaSpec<DirectoryUser>; groups: DeltaSpec<DirectoryGroup> } = {
  users: {
    collection: 'users',
    roles: USERS_ROLES,
    selectable: USER_SELECTABLE,
    typeName: 'user',
    items: (t) => t.users,
    index: indexes.users,
    render: (u, select) => project(userResource(u), select ?? USER_DEFAULT_PROPERTIES, ['id']),
  },
  groups: {
    collection: 'groups',
    roles: GROUPS_ROLES,
    selectable: GROUP_DELTA_SELECTABLE,
    typeName: 'group',
    items: (t) => t.groups,
    index: indexes.groups,
    render: (g, select) =>
      project(
        groupResource(g),
        select?.filter((p) => p !== 'members'),
        ['id'],
      ),
  },
};

/** `{"@odata.type","id"}` of a member, with `@removed` for a removal (delta-query-groups.md). */
function memberRef(kind: string | null, id: string, removed: boolean): Record<string, unknown> {
  return { '@odata.type': `#microsoft.graph.${kind ?? 'directoryObject'}`, id, ...(removed ? { '@removed': { reason: 'deleted' } } : {}) };
}

/** Current members of a group that resolve to an object (dangling ids are not served), as `members@delta` entries. */
function currentMembers(tenant: Tenant, groupId: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const id of tenant.memberships[groupId] ?? []) {
    const m = resolveMember(tenant, id);
    if (m) out.push(memberRef(m.kind, m.object.id, false));
  }
  return out;
}

/**
 * One page of a `groups/delta` round whose `$select` names `members`. Initial round: every live group with all its
 * current members in `members@delta` (a group without members has none; a large group is split over pages, token
 * field `members` = entries already sent). Later rounds: walks the membership log (group changes and member
 * additions/removals, ascending), coalescing consecutive entries of one group into one object; a deleted group is
 * `{"id","@removed":{"reason":"deleted"}}`, a removed member `{"@odata.type","id","@removed":{"reason":"deleted"}}`.
 */
function membersDeltaPage(
  ctx: GraphContext,
  tenant: Tenant,
  state: DeltaToken | null,
  select: readonly string[],
  size: number,
  common: Omit<DeltaTokenBaseFields, never>,
): { value: Record<string, unknown>[]; next: DeltaToken } {
  const spec = DELTA_SPECS.groups;
  const budget = size * MEMBERS_DELTA_PER_GROUP_SLOT;
  const value: Record<string, unknown>[] = [];
  let membersOut = 0;
  if (!state || state.kind === 'full') {
    const upTo = state ? state.upTo : ctx.changes.sequence(tenant);
    const items = tenant.groups;
    let i = state
      ? resumeIndex(
          items,
          (x) => x.id,
          state.index,
          state.last,
          (id) => indexes.groups.indexOf(items, id),
        )
      : 0;
    let offset = state?.kind === 'full' && i === state.index ? (state.members ?? 0) : 0;
    while (i < items.length && value.length < size) {
      const g = items[i]!;
      const all = currentMembers(tenant, g.id);
      const room = budget - membersOut;
      if (room <= 0 && all.length > offset) break;
      const chunk = all.slice(offset, offset + room);
      const obj = spec.render(g, select);
      if (chunk.length > 0) obj['members@delta'] = chunk;
      value.push(obj);
      membersOut += chunk.length;
      if (offset + chunk.length < all.length) {
        offset += chunk.length;
        break;
      }
      i++;
      offset = 0;
    }
    const next: DeltaToken =
      i < items.length
        ? { ...common, kind: 'full', upTo, index: i, last: items[i - 1]?.id ?? '', ...(offset ? { members: offset } : {}) }
        : { ...common, kind: 'delta', seq: upTo };
    return { value, next };
  }
  const after = state.kind === 'delta' ? state.seq : state.after;
  const upTo = state.kind === 'delta' ? ctx.changes.sequence(tenant) : state.upTo;
  const pending = ctx.changes.membershipChanges(tenant, after, upTo);
  let consumed = 0;
  let lastSeq = after;
  let current = null as { key: string; obj: Record<string, unknown> } | null;
  for (const c of pending) {
    const key = c.groupId.toLowerCase();
    const live = indexes.groups.get(tenant.groups, c.groupId) ?? tenant.groups.find((g) => g.id.toLowerCase() === key);
    if (c.memberId === null) {
      if (current?.key !== key || !live) {
        if (value.length >= size) break;
        const obj = live ? spec.render(live, select) : { id: c.groupId, '@removed': { reason: 'deleted' } };
        value.push(obj);
        current = live ? { key, obj } : null;
      }
    } else if (live) {
      if (current?.key !== key) {
        if (value.length >= size) break;
        const obj = spec.render(live, select);
        value.push(obj);
        current = { key, obj };
      }
      if (membersOut >= budget) break;
      const list = (current.obj['members@delta'] ??= []) as Record<string, unknown>[];
      list.push(memberRef(c.kind, c.memberId, c.removed));
      membersOut++;
    }
    consumed++;
    lastSeq = c.seq;
  }
  const next: DeltaToken = consumed < pending.length ? { ...common, kind: 'changes', after: lastSeq, upTo } : { ...common, kind: 'delta', seq: upTo };
  return { value, next };
}

type DeltaTokenBaseFields = Pick<DeltaToken, 'collection' | 'tenantId' | 'epoch' | 'select' | 'pageSize'>;

/** `Prefer: odata.maxpagesize=N` clamped to 1..999 and echoed in `Preference-Applied`; undefined when absent. */
function preferredPageSize(req: FastifyRequest, reply: FastifyReply): number | undefined {
  const m = /odata\.maxpagesize\s*=\s*(\d+)/i.exec(String(req.headers.prefer ?? ''));
  if (!m) return undefined;
  const size = Math.min(999, Math.max(1, Number(m[1])));
  reply.header('preference-applied', `odata.maxpagesize=${size}`);
  return size;
}

/**
 * One page of a delta round (`GET /{v}/users/delta`, `/{v}/groups/delta`). Without a token: the initial round, every
 * live object paged like the list route. With `$deltatoken`: the objects whose last change is newer than the token
 * (removed ones as `{"id","@removed":{"reason":"deleted"}}`), up to the sequence current when the round started.
 * Non-final pages carry `@odata.nextLink` (`$skiptoken`), the final page `@odata.deltaLink` (`$deltatoken`); both
 * carry `$select` and `$top` of the initial request inside the token. Page size: `$top`, else `Prefer:
 * odata.maxpagesize`, else the initial request's `$top`, else 100.
 */
async function deltaPage<T extends { id: string }>(
  ctx: GraphContext,
  req: FastifyRequest,
  reply: FastifyReply,
  version: string,
  spec: DeltaSpec<T>,
): Promise<FastifyReply> {
  const auth = await authenticate(ctx, req, reply);
  if (!auth) return reply;
  if (!hasRole(auth.claims, spec.roles)) return denied(req, reply);
  const q = parseList(req, reply, spec.selectable, spec.typeName);
  if (!q) return reply;
  const tenant = auth.tenant;
  const invalid = (): FastifyReply => sendError(req, reply, 400, 'BadRequest', INVALID_DELTA_TOKEN_MESSAGE);

  const deltatoken = queryParam(req, '$deltatoken');
  if (deltatoken !== undefined && q.skiptoken !== undefined) return invalid();
  let state: DeltaToken | null = null;
  const raw = q.skiptoken ?? deltatoken;
  if (raw !== undefined) {
    state = decodeDeltaToken(raw);
    if (!state || state.collection !== spec.collection || state.tenantId !== tenant.id.toLowerCase()) return invalid();
    if ((state.kind === 'delta') !== (deltatoken !== undefined)) return invalid();
    if (state.select && state.select.some((p) => !spec.selectable.has(p))) return invalid();
    if (state.epoch !== ctx.changes.epoch(tenant)) return sendError(req, reply, 410, 'syncStateNotFound', SYNC_STATE_NOT_FOUND_MESSAGE);
  }

  // The initial request's $select holds for the whole chain; a later $select is ignored.
  const select = state ? (state.select ?? undefined) : q.select;
  const preferred = q.topRaw === undefined ? preferredPageSize(req, reply) : undefined;
  const size = q.topRaw !== undefined ? q.top : (preferred ?? state?.pageSize ?? 100);
  const common = {
    collection: spec.collection,
    tenantId: tenant.id.toLowerCase(),
    epoch: ctx.changes.epoch(tenant),
    select: select ?? null,
    pageSize: q.topRaw !== undefined ? q.top : (state?.pageSize ?? null),
  };

  let value: Record<string, unknown>[] = [];
  let next: DeltaToken;
  let more: boolean;
  if (spec.collection === 'groups' && select?.includes('members')) {
    ({ value, next } = membersDeltaPage(ctx, tenant, state, select, size, common));
  } else if (!state || state.kind === 'full') {
    const upTo = state ? state.upTo : ctx.changes.sequence(tenant);
    const items = spec.items(tenant);
    const start = state
      ? resumeIndex(
          items,
          (x) => x.id,
          state.index,
          state.last,
          (id) => spec.index.indexOf(items, id),
        )
      : 0;
    const slice = items.slice(start, start + size);
    for (const item of slice) value.push(spec.render(item, select));
    const end = start + slice.length;
    const last = slice[slice.length - 1];
    more = end < items.length && last !== undefined;
    next = more && last ? { ...common, kind: 'full', upTo, index: end, last: last.id } : { ...common, kind: 'delta', seq: upTo };
  } else {
    const after = state.kind === 'delta' ? state.seq : state.after;
    const upTo = state.kind === 'delta' ? ctx.changes.sequence(tenant) : state.upTo;
    const pending = ctx.changes.changes(tenant, spec.collection, after, upTo, size + 1);
    const slice = pending.slice(0, size);
    for (const c of slice) {
      // Liveness decides (a tombstone whose object is back, or a change whose object is gone, by direct mutation).
      const live = spec.index.get(spec.items(tenant), c.id);
      value.push(live ? spec.render(live, select) : { id: c.id, '@removed': { reason: 'deleted' } });
    }
    more = pending.length > size;
    const last = slice[slice.length - 1];
    next = more && last ? { ...common, kind: 'changes', after: last.seq, upTo } : { ...common, kind: 'delta', seq: upTo };
  }

  const body: Record<string, unknown> = { '@odata.context': context(ctx.baseUrl(), version, spec.collection, select) };
  const link = `${ctx.baseUrl()}/graph/${version}/${spec.collection}/delta`;
  if (next.kind === 'delta') body['@odata.deltaLink'] = `${link}${buildQuery([['$deltatoken', encodeDeltaToken(next)]])}`;
  else body['@odata.nextLink'] = `${link}${buildQuery([['$skiptoken', encodeDeltaToken(next)]])}`;
  body.value = value;
  return reply.type(GRAPH_CONTENT_TYPE).send(body);
}

/**
 * Registers Graph routes under the `/graph` prefix for versions `v1.0` and `beta`:
 * `GET /{v}/users`, `/{v}/users/{id}`, `/{v}/users/delta`, `/{v}/groups`, `/{v}/groups/{id}`, `/{v}/groups/delta`,
 * `/{v}/groups/{id}/members`.
 * Errors: 401 `InvalidAuthenticationToken`; 403 `Authorization_RequestDenied` without a required role (users:
 * User.Read.All or Directory.Read.All; groups: Group.Read.All, GroupMember.Read.All or Directory.Read.All; members:
 * GroupMember.Read.All, Group.Read.All or Directory.Read.All); 404 `Request_ResourceNotFound`; 400
 * `Request_UnsupportedQuery` for `$top` outside 1..999 or unimplemented options; 400 `Request_BadRequest` for unknown
 * `$select` properties; 400 `Directory_ExpiredPageToken` for a bad `$skiptoken`; on delta routes 400 `BadRequest`
 * "Invalid delta token." for a malformed token and 410 `syncStateNotFound` for one issued before
 * `expireDeltaTokens` (both wordings UNCONFIRMED).
 */
export function registerGraph(app: FastifyInstance, ctx: GraphContext): void {
  app.addHook('onRequest', async (req, reply) => {
    const requestId = newId();
    const clientRequestId = req.headers['client-request-id'];
    reply
      .header('request-id', requestId)
      .header('client-request-id', typeof clientRequestId === 'string' ? clientRequestId : requestId)
      .header('x-ms-ags-diagnostic', JSON.stringify({ ServerInfo: { DataCenter: 'Emulator', Slice: 'E', Ring: '0', ScaleUnit: '000', RoleInstance: 'EMU' } }));
  });

  const notFound = (req: FastifyRequest, reply: FastifyReply, id: string): FastifyReply =>
    sendError(req, reply, 404, 'Request_ResourceNotFound', `Resource '${id}' does not exist or one of its queried reference-property objects are not present.`);

  for (const version of ['v1.0', 'beta']) {
    // Static segments win over `/:id` in Fastify's router, so `users/delta` is never read as a user id.
    app.get(`/${version}/users/delta`, async (req, reply) => deltaPage(ctx, req, reply, version, DELTA_SPECS.users));
    app.get(`/${version}/groups/delta`, async (req, reply) => deltaPage(ctx, req, reply, version, DELTA_SPECS.groups));

    app.get(`/${version}/users`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, USERS_ROLES)) return denied(req, reply);
      const q = parseList(req, reply, USER_SELECTABLE, 'user');
      if (!q) return reply;
      const users = auth.tenant.users;
      const p = page(
        req,
        reply,
        'users',
        users,
        (u) => u.id,
        (id) => indexes.users.indexOf(users, id),
        q,
      );
      if (!p) return reply;
      const body: Record<string, unknown> = { '@odata.context': context(ctx.baseUrl(), version, 'users', q.select) };
      if (p.next) body['@odata.nextLink'] = nextLink(ctx.baseUrl(), `/graph/${version}/users`, q, p.next);
      body.value = p.slice.map((u) => renderUser(u, q.select));
      return reply.type(GRAPH_CONTENT_TYPE).send(body);
    });

    app.get<{ Params: { id: string } }>(`/${version}/users/:id`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, USERS_ROLES)) return denied(req, reply);
      const q = parseList(req, reply, USER_SELECTABLE, 'user');
      if (!q) return reply;
      const key = req.params.id;
      const user = indexes.users.get(auth.tenant.users, key) ?? auth.tenant.users.find((u) => u.userPrincipalName.toLowerCase() === key.toLowerCase());
      if (!user) return notFound(req, reply, key);
      return reply
        .type(GRAPH_CONTENT_TYPE)
        .send({ '@odata.context': `${context(ctx.baseUrl(), version, 'users', q.select)}/$entity`, ...renderUser(user, q.select) });
    });

    app.get(`/${version}/groups`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, GROUPS_ROLES)) return denied(req, reply);
      const q = parseList(req, reply, GROUP_SELECTABLE, 'group');
      if (!q) return reply;
      const groups = auth.tenant.groups;
      const p = page(
        req,
        reply,
        'groups',
        groups,
        (g) => g.id,
        (id) => indexes.groups.indexOf(groups, id),
        q,
      );
      if (!p) return reply;
      const body: Record<string, unknown> = { '@odata.context': context(ctx.baseUrl(), version, 'groups', q.select) };
      if (p.next) body['@odata.nextLink'] = nextLink(ctx.baseUrl(), `/graph/${version}/groups`, q, p.next);
      body.value = p.slice.map((g) => project(groupResource(g), q.select));
      return reply.type(GRAPH_CONTENT_TYPE).send(body);
    });

    app.get<{ Params: { id: string } }>(`/${version}/groups/:id`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, GROUPS_ROLES)) return denied(req, reply);
      const q = parseList(req, reply, GROUP_SELECTABLE, 'group');
      if (!q) return reply;
      const group = indexes.groups.get(auth.tenant.groups, req.params.id);
      if (!group) return notFound(req, reply, req.params.id);
      return reply
        .type(GRAPH_CONTENT_TYPE)
        .send({ '@odata.context': `${context(ctx.baseUrl(), version, 'groups', q.select)}/$entity`, ...project(groupResource(group), q.select) });
    });

    app.get<{ Params: { id: string } }>(`/${version}/groups/:id/members`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, MEMBERS_ROLES)) return denied(req, reply);
      const q = parseList(req, reply, null, 'directoryObject');
      if (!q) return reply;
      const group = indexes.groups.get(auth.tenant.groups, req.params.id);
      if (!group) return notFound(req, reply, req.params.id);
      const ids = auth.tenant.memberships[group.id] ?? [];
      const p = page(
        req,
        reply,
        `members:${group.id}`,
        ids,
        (id) => id,
        (id) => ids.indexOf(id),
        q,
      );
      if (!p) return reply;
      const body: Record<string, unknown> = { '@odata.context': context(ctx.baseUrl(), version, 'directoryObjects', q.select) };
      if (p.next) body['@odata.nextLink'] = nextLink(ctx.baseUrl(), `/graph/${version}/groups/${group.id}/members`, q, p.next);
      const value: Record<string, unknown>[] = [];
      for (const id of p.slice) {
        const m = resolveMember(auth.tenant, id);
        if (m) value.push(renderMember(m, q.select));
      }
      body.value = value;
      return reply.type(GRAPH_CONTENT_TYPE).send(body);
    });
  }
}

/** Graph-shaped 404 for an unknown path under `/graph` (`BadRequest`, "Resource not found for the segment …"). */
export function graphNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = req.url.split('?')[0] ?? '';
  const seg = path.split('/').filter(Boolean).slice(2).join('/') || path;
  return sendError(req, reply, 400, 'BadRequest', `Resource not found for the segment '${seg}'.`);
}
