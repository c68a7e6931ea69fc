import { bool, str, type Json } from '../../../core/json.ts';
import type { Stream } from '../../stream.ts';
import { deltaPages, deltaUrl } from '../delta.ts';
import type { Collected } from '../../../core/inventory.ts';

/** A Microsoft Entra ID user (Graph `user`: https://learn.microsoft.com/graph/api/resources/user). */
export interface DirectoryUser extends Collected {
  id: string;
  displayName: string | null;
  userPrincipalName: string | null;
  mail: string | null;
  /** `accountEnabled`; null when not returned. */
  accountEnabled: boolean | null;
  /** `Member` or `Guest`. */
  userType: string | null;
  /** ISO 8601 UTC. */
  createdDateTime: string | null;
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
const USER_FIELDS = 'id,displayName,userPrincipalName,mail,accountEnabled,userType,createdDateTime,assignedLicenses';

/**
 * All users and guests of the tenant, by delta query: the first round reads everyone, later rounds only the changes
 * (removed users as ids). Needs User.Read.All (or Directory.Read.All).
 */
export const usersStream: Stream<'users', DirectoryUser, 'users'> = {
  name: 'users',
  inventory: { kind: 'users', position: 70 },
  capability: 'directory.users',
  primaryKey: ['id'],
  delta: true,
  resource: (ctx) => ctx.cloud.graph.resource,
  read: (ctx, _slice, cursor) => deltaPages(ctx, cursor ?? deltaUrl(ctx, 'users', USER_FIELDS), toDirectoryUser),
};
