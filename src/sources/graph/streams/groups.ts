import type { DirectoryGroup } from '../../../core/inventory.ts';
import { bool, str } from '../../../core/json.ts';
import type { Stream } from '../../stream.ts';
import { deltaPages, deltaUrl } from '../delta.ts';

/** All groups of the tenant, by delta query like users. Needs GroupMember.Read.All, Group.Read.All or Directory.Read.All. */
export const groupsStream: Stream<'groups'> = {
  name: 'groups',
  capability: 'directory.groups',
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
