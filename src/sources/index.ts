import type { StreamName } from '../core/inventory.ts';
import { foundryAccountsStream, foundryDeploymentsStream, foundryProjectsStream } from './arm/streams.ts';
import { environmentsStream } from './bap/streams.ts';
import { agentComponentsStream, agentSettingsStream } from './dataverse/components.ts';
import { environmentSettingsStream } from './dataverse/organization.ts';
import { agentsStream, dataverseUsersStream } from './dataverse/streams.ts';
import { groupsStream, membershipsStream, usersStream } from './graph/streams.ts';
import { copilotInteractionsStream } from './graph/copilot.ts';
import { externalConnectionsStream, teamsAppsStream } from './graph/estate.ts';
import { powerBiSharedLinksStream, powerBiWorkspacesStream } from './powerBi/streams.ts';
import { connectionsStream, connectorsStream, dlpPoliciesStream, flowsStream, powerAppsStream, tenantSettingsStream } from './powerPlatform/streams.ts';
import { runOrder, type Stream } from './stream.ts';

/** Every collection stream (registration order; the run order is {@link STREAM_RUN_ORDER}). */
export const STREAMS: { [S in StreamName]: Stream<S> } = {
  users: usersStream,
  groups: groupsStream,
  memberships: membershipsStream,
  environments: environmentsStream,
  dataverseUsers: dataverseUsersStream,
  agents: agentsStream,
  agentComponents: agentComponentsStream,
  agentSettings: agentSettingsStream,
  foundryAccounts: foundryAccountsStream,
  foundryProjects: foundryProjectsStream,
  foundryDeployments: foundryDeploymentsStream,
  copilotInteractions: copilotInteractionsStream,
  powerBiWorkspaces: powerBiWorkspacesStream,
  powerBiSharedLinks: powerBiSharedLinksStream,
  powerApps: powerAppsStream,
  flows: flowsStream,
  connectors: connectorsStream,
  connections: connectionsStream,
  dlpPolicies: dlpPoliciesStream,
  tenantSettings: tenantSettingsStream,
  externalConnections: externalConnectionsStream,
  teamsApps: teamsAppsStream,
  environmentSettings: environmentSettingsStream,
};

/** The order the streams run in, derived from their parent links ({@link runOrder}): parents before their children. */
export const STREAM_RUN_ORDER: readonly StreamName[] = runOrder(Object.values(STREAMS));
