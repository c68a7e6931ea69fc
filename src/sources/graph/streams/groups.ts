import { bool, str } from '../../../core/json.ts';
import type { Stream } from '../../stream.ts';
import { deltaPages, deltaUrl } from '../delta.ts';
import type { Collected } from '../../../core/inventory.ts';

/** A Microsoft Entra ID group (Graph `group`). */
export interface DirectoryGroup extends Collected {
  id: string;
  displayName: string | null;
  mail: string | null;
  securityEnabled: boolean | null;
  mailEnabled: boolean | null;
  groupTypes: string[];
}

/** All groups of the tenant, by delta query like users. Needs GroupMember.Read.All, Group.Read.All or Directory.Read.All. */
export const groupsStream: Stream<'groups', DirectoryGroup, 'groups'> = {
  name: 'groups',
  inventory: { kind: 'groups', position: 80 },
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
