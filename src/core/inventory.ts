/**
 * Inventory records as Vigil holds them: the normalised fields checks query, plus the raw upstream JSON.
 * Field meanings follow the upstream documentation cited on each type.
 */

/** Common part of every collected object. `raw` is the upstream JSON object exactly as received. */
export interface Collected {
  raw: Record<string, unknown>;
}

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

/** A Microsoft Entra ID group (Graph `group`). */
export interface DirectoryGroup extends Collected {
  id: string;
  displayName: string | null;
  mail: string | null;
  securityEnabled: boolean | null;
  mailEnabled: boolean | null;
  groupTypes: string[];
}

/** One direct member of a group (Graph `groups/{id}/members`), of any `@odata.type`. */
export interface GroupMembership extends Collected {
  groupId: string;
  memberId: string;
  /** `user`, `group`, `servicePrincipal`, `device`, … from `@odata.type` without `#microsoft.graph.`. */
  memberType: string;
}

/** A Power Platform environment (BAP `scopes/admin/environments`). */
export interface PowerPlatformEnvironment extends Collected {
  /** Environment name (a GUID, or `Default-<tenant id>`). */
  id: string;
  displayName: string | null;
  /** `Production`, `Sandbox`, `Developer`, `Trial`, `Default`. */
  sku: string | null;
  isDefault: boolean;
  region: string | null;
  /** Dataverse instance URL (`linkedEnvironmentMetadata.instanceUrl`), or null when the environment has no Dataverse. */
  dataverseUrl: string | null;
  /** `states.runtime.id`, e.g. `Enabled`. */
  state: string | null;
}

/** A Dataverse `systemuser` of one environment (people and application users). */
export interface DataverseUser extends Collected {
  environmentId: string;
  id: string;
  fullName: string | null;
  /** Microsoft Entra object id of the person (`azureactivedirectoryobjectid`). */
  aadObjectId: string | null;
  /** Set for application users (`applicationid`). */
  applicationId: string | null;
  isDisabled: boolean | null;
}

/**
 * A Copilot Studio agent (Dataverse `bot`, https://learn.microsoft.com/power-apps/developer/data-platform/reference/entities/bot).
 * `authenticationMode`: 0 Unspecified, 1 None, 2 Integrated, 3 Custom Azure AD, 4 Generic OAuth2.
 * `accessControlPolicy`: 0 Any, 1 Copilot readers, 2 Group membership.
 */
export interface Agent extends Collected {
  environmentId: string;
  id: string;
  name: string | null;
  schemaName: string | null;
  authenticationMode: number | null;
  authenticationTrigger: number | null;
  accessControlPolicy: number | null;
  /** `_ownerid_value`: a Dataverse systemuser or team id. */
  ownerId: string | null;
  /** ISO 8601 UTC timestamps. */
  publishedOn: string | null;
  modifiedOn: string | null;
  createdOn: string | null;
  stateCode: number | null;
  statusCode: number | null;
}

/** Record types by stream name. */
export interface StreamRecords {
  users: DirectoryUser;
  groups: DirectoryGroup;
  memberships: GroupMembership;
  environments: PowerPlatformEnvironment;
  dataverseUsers: DataverseUser;
  agents: Agent;
}

/** Names of the collection streams, in the order they run (parents before children). */
export const STREAM_NAMES = ['users', 'groups', 'memberships', 'environments', 'dataverseUsers', 'agents'] as const;
export type StreamName = (typeof STREAM_NAMES)[number];
