/**
 * Inventory records as Vigil holds them: the normalised fields checks query, plus the raw upstream JSON.
 * Field meanings follow the upstream documentation cited on each type.
 */

import type { CopilotInteractionAttrs } from './estate/copilotInteractions.ts';
import type { ExternalConnectionAttrs, TeamsAppAttrs } from './estate/graph.ts';
import type { AgentComponentAttrs, AgentSettingsAttrs } from './estate/agentcomponents.ts';
import type { FoundryAccountAttrs, FoundryDeploymentAttrs, FoundryProjectAttrs } from './estate/foundry.ts';
import type { PowerBiSharedLinkAttrs, PowerBiWorkspaceAttrs } from './estate/powerBi.ts';
import type { ConnectionAttrs, ConnectorAttrs, DlpPolicyAttrs, FlowAttrs, PowerAppAttrs, TenantSettingsAttrs } from './estate/powerPlatform.ts';
import type { EnvironmentSettingsAttrs } from './estate/environmentSettings.ts';

/** Common part of every collected object. `raw` is the upstream JSON object exactly as received. */
interface Collected {
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
 * `accessControlPolicy`: 0 Any, 1 Copilot readers, 2 Group membership, 3 Any (multitenant: users of any Entra tenant).
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

/**
 * An object of an estate stream (stored in `estate_objects`, migration 0008): everything beyond the first six
 * streams. `sliceKey` is the parent it was read under (environment name, user id, or `*` for tenant-wide streams);
 * `id` is unique within the stream (composite ids are joined with `/`); `attrs` holds the normalised fields checks
 * read (typed per stream by {@link EstateAttrs}); `raw` the upstream JSON.
 */
export interface EstateObject<A extends object = Record<string, unknown>> extends Collected {
  sliceKey: string;
  id: string;
  name: string | null;
  attrs: A;
}

/**
 * Normalised attributes per estate stream name. Each estate source adds its streams here (the attrs types live in
 * `core/estate/`), and the stream name to {@link STREAM_NAMES}.
 */
export interface EstateAttrs {
  copilotInteractions: CopilotInteractionAttrs;
  agentComponents: AgentComponentAttrs;
  agentSettings: AgentSettingsAttrs;
  foundryAccounts: FoundryAccountAttrs;
  foundryProjects: FoundryProjectAttrs;
  foundryDeployments: FoundryDeploymentAttrs;
  powerBiWorkspaces: PowerBiWorkspaceAttrs;
  powerBiSharedLinks: PowerBiSharedLinkAttrs;
  powerApps: PowerAppAttrs;
  flows: FlowAttrs;
  connectors: ConnectorAttrs;
  connections: ConnectionAttrs;
  dlpPolicies: DlpPolicyAttrs;
  tenantSettings: TenantSettingsAttrs;
  externalConnections: ExternalConnectionAttrs;
  teamsApps: TeamsAppAttrs;
  environmentSettings: EnvironmentSettingsAttrs;
}

/** Names of the estate streams. */
export type EstateStreamName = keyof EstateAttrs;

/** Record types of the first six streams, which have their own tables. */
export interface CoreStreamRecords {
  users: DirectoryUser;
  groups: DirectoryGroup;
  memberships: GroupMembership;
  environments: PowerPlatformEnvironment;
  dataverseUsers: DataverseUser;
  agents: Agent;
}

/** Record types by stream name. */
export type StreamRecords = CoreStreamRecords & { [K in EstateStreamName]: EstateObject<EstateAttrs[K]> };

/** Names of the streams with their own tables. */
const CORE_STREAM_NAMES = ['users', 'groups', 'memberships', 'environments', 'dataverseUsers', 'agents'] as const;

/** Names of the collection streams, in the order they run (parents before children). */
export const STREAM_NAMES = [
  ...CORE_STREAM_NAMES,
  'agentComponents',
  'agentSettings',
  'foundryAccounts',
  'foundryProjects',
  'foundryDeployments',
  'copilotInteractions',
  'powerBiWorkspaces',
  'powerBiSharedLinks',
  'powerApps',
  'flows',
  'connectors',
  'connections',
  'dlpPolicies',
  'tenantSettings',
  'externalConnections',
  'teamsApps',
  'environmentSettings',
] as const;
export type StreamName = (typeof STREAM_NAMES)[number];

/** Names of the streams stored in `estate_objects` (every stream but the core ones). */
export const ESTATE_STREAM_NAMES = STREAM_NAMES.filter((s): s is EstateStreamName => isEstateStream(s));

/** True for streams stored in `estate_objects`. */
export function isEstateStream(stream: string): boolean {
  return !(CORE_STREAM_NAMES as readonly string[]).includes(stream);
}

/**
 * A row of a parent stream handed to a child stream's slicing (`Stream.slice` / `Stream.slices`): groups carry only
 * the id; environments their Dataverse URL; users their UPN, type and stored `$select`ed Graph JSON (`raw`); agents
 * their environment and its Dataverse URL.
 */
export interface ParentRow {
  id: string;
  display_name?: string | null;
  dataverse_url?: string | null;
  environment_id?: string;
  user_principal_name?: string | null;
  user_type?: string | null;
  account_enabled?: number | null;
  /** Users: the stored Graph JSON (`assignedLicenses` included); estate parents: their attrs JSON. */
  raw?: string;
}
