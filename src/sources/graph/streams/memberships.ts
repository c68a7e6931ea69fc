import { str, type Json } from '../../../core/json.ts';
import type { Stream } from '../../stream.ts';
import { deltaRound, deltaUrl } from '../delta.ts';
import type { Collected } from '../../../core/inventory.ts';

/** One direct member of a group (Graph `groups/{id}/members`), of any `@odata.type`. */
export interface GroupMembership extends Collected {
  groupId: string;
  memberId: string;
  /** `user`, `group`, `servicePrincipal`, `device`, … from `@odata.type` without `#microsoft.graph.`. */
  memberType: string;
}

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
export const membershipsStream: Stream<'memberships', GroupMembership> = {
  name: 'memberships',
  capability: 'directory.groups',
  primaryKey: ['groupId', 'memberId'],
  delta: true,
  resource: (ctx) => ctx.cloud.graph.resource,
  async *read(ctx, _slice, cursor) {
    for await (const page of deltaRound(ctx, cursor ?? deltaUrl(ctx, 'groups', 'id,members'))) {
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
          else
            records.push({
              groupId,
              memberId,
              memberType: (str(m['@odata.type']) ?? '#microsoft.graph.directoryObject').replace('#microsoft.graph.', ''),
              raw: m,
            });
        }
      }
      yield { records, removed, nextCursor: page.nextLink ?? null, ...(page.deltaLink ? { deltaLink: page.deltaLink } : {}) };
    }
  },
};
