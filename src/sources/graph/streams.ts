import type { DirectoryGroup, DirectoryUser, GroupMembership } from '../../core/inventory.ts';
import { odataPages } from '../../platform/http/odata.ts';
import type { Stream, StreamContext, StreamPage } from '../stream.ts';
import { str, bool, type Json } from '../../core/json.ts';

/**
 * Microsoft Graph v1.0 directory streams: users, groups and group memberships by delta query (incremental after the
 * first round; memberships through `members@delta`); all paged by `@odata.nextLink`.
 *
 * Sources: Graph "List users" (`api/user-list.md`), "List groups", "List group members" (`api/group-list-members.md`:
 * members of mixed `@odata.type`), paging (`concepts/paging.md`), throttling cost of `$select` (`throttling-limits.md`).
 */


/**
 * Resource units a request costs against the tenant's Graph identity budget (`throttling-limits.md`): GET users 2,
 * groups/{id}/members 3, other 1; `$select` −1; never below 1.
 */
export function graphResourceUnits(url: string): number {
  const path = new URL(url).pathname;
  const base = /\/groups\/[^/]+\/members$/.test(path) ? 3 : /\/users$/.test(path) ? 2 : 1;
  return Math.max(1, base - (url.includes('$select=') ? 1 : 0));
}

/**
 * A Graph delta round (`users/delta`, `groups/delta`): from the first URL or a saved next/delta link, page by page.
 * Items with `@removed` are returned as removed ids; the last page carries the next `@odata.deltaLink`. `$top` is
 * not supported on delta: the page size is asked with `Prefer: odata.maxpagesize`.
 * Sources: Graph `delta-query-overview.md`, `delta-query-users.md`, `api/user-delta.md`, `api/group-delta.md`.
 */
async function* deltaPages<R>(ctx: StreamContext, url: string, map: (j: Json) => R): AsyncGenerator<StreamPage<R>> {
  const size = Math.min(999, Math.max(1, ctx.graphPageSize ?? 999));
  const request = { api: 'graph' as const, url, headers: { Prefer: `odata.maxpagesize=${size}` }, token: ctx.tokens.bearer(ctx.cloud.graph.resource), tenantId: ctx.tenantId, cost: graphResourceUnits(url) };
  for await (const page of odataPages<Json>(ctx.http, request)) {
    const removed: string[] = [];
    const records: R[] = [];
    for (const item of page.items) {
      if (item['@removed'] !== undefined) removed.push(String(item.id));
      else records.push(map(item));
    }
    yield { records, removed, nextCursor: page.nextLink ?? null, ...(page.deltaLink ? { deltaLink: page.deltaLink } : {}) };
  }
}

function deltaUrl(ctx: StreamContext, path: string, select: string): string {
  return `${ctx.cloud.graph.baseUrl}/v1.0/${path}/delta?$select=${select}`;
}

/** Maps a Graph `user` to a {@link DirectoryUser}. */
export function toDirectoryUser(j: Json): DirectoryUser {
  return {
    id: String(j.id),
    displayName: str(j.displayName),
    userPrincipalName: str(j.userPrincipalName),
    mail: str(j.mail),
    accountEnabled: bool(j.accountEnabled),
    userType: str(j.userType),
    createdDateTime: str(j.createdDateTime),
    raw: j,
  };
}

/**
 * User fields read: identity, guest/member, enabled, and `assignedLicenses` (which users hold a Microsoft 365 Copilot
 * licence: only they have Copilot interaction history).
 */
export const USER_FIELDS = 'id,displayName,userPrincipalName,mail,accountEnabled,userType,createdDateTime,assignedLicenses';

/**
 * All users and guests of the tenant, by delta query: the first round reads everyone, later rounds only the changes
 * (removed users as ids). Needs User.Read.All (or Directory.Read.All).
 */
export const usersStream: Stream<'users'> = {
  name: 'users',
  primaryKey: ['id'],
  delta: true,
  resource: (ctx) => ctx.cloud.graph.resource,
  read: (ctx, _slice, cursor) => deltaPages(ctx, cursor ?? deltaUrl(ctx, 'users', USER_FIELDS), toDirectoryUser),
};

/** All groups of the tenant, by delta query like users. Needs GroupMember.Read.All, Group.Read.All or Directory.Read.All. */
export const groupsStream: Stream<'groups'> = {
  name: 'groups',
  primaryKey: ['id'],
  delta: true,
  resource: (ctx) => ctx.cloud.graph.resource,
  read: (ctx, _slice, cursor) =>
    deltaPages<DirectoryGroup>(ctx, cursor ?? deltaUrl(ctx, 'groups', 'id,displayName,mail,securityEnabled,mailEnabled,groupTypes'), (j) => ({
      id: String(j.id),
      displayName: str(j.displayName),
      mail: str(j.mail),
      securityEnabled: bool(j.securityEnabled),
      mailEnabled: bool(j.mailEnabled),
      groupTypes: Array.isArray(j.groupTypes) ? j.groupTypes.map(String) : [],
      raw: j,
    })),
};

/**
 * Direct members of every group, by group delta query with membership tracking (`groups/delta?$select=members`): the
 * first round reads every group with all its members in `members@delta` (a large group is split over pages and the
 * same group object repeats), later rounds only the groups whose members changed, with the added members and the
 * removed ones (`@removed`). One root slice; a second unchanged round is one request. Members of any type
 * (`@odata.type` user, group, servicePrincipal, device).
 *
 * Removed ids: `{groupId}/{memberId}` for a member removed from a group, `{groupId}` alone for a deleted group (all its
 * memberships go). Needs GroupMember.Read.All, Group.Read.All or Directory.Read.All.
 * Sources: Graph `api/group-delta.md`, `concepts/delta-query-groups.md` ("Paging through members in a large group").
 */
export const membershipsStream: Stream<'memberships'> = {
  name: 'memberships',
  primaryKey: ['groupId', 'memberId'],
  delta: true,
  resource: (ctx) => ctx.cloud.graph.resource,
  async *read(ctx, _slice, cursor) {
    const size = Math.min(999, Math.max(1, ctx.graphPageSize ?? 999));
    const url = cursor ?? deltaUrl(ctx, 'groups', 'id,members');
    const request = { api: 'graph' as const, url, headers: { Prefer: `odata.maxpagesize=${size}` }, token: ctx.tokens.bearer(ctx.cloud.graph.resource), tenantId: ctx.tenantId, cost: graphResourceUnits(url) };
    for await (const page of odataPages<Json>(ctx.http, request)) {
      const records: GroupMembership[] = [];
      const removed: string[] = [];
      for (const group of page.items) {
        const groupId = String(group.id);
        if (group['@removed'] !== undefined) {
          removed.push(groupId);
          continue;
        }
        const members = group['members@delta'];
        if (!Array.isArray(members)) continue;
        for (const m of members as Json[]) {
          const memberId = String(m.id);
          if (m['@removed'] !== undefined) removed.push(`${groupId}/${memberId}`);
          else records.push({ groupId, memberId, memberType: (str(m['@odata.type']) ?? '#microsoft.graph.directoryObject').replace('#microsoft.graph.', ''), raw: m });
        }
      }
      yield { records, removed, nextCursor: page.nextLink ?? null, ...(page.deltaLink ? { deltaLink: page.deltaLink } : {}) };
    }
  },
};
