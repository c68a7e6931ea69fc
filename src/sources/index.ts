import type { CapabilityId } from '../core/capabilities.ts';
import type { StreamName } from '../core/inventory.ts';
import { foundryAccountsStream } from './arm/streams/foundryAccounts.ts';
import { foundryDeploymentsStream } from './arm/streams/foundryDeployments.ts';
import { foundryProjectsStream } from './arm/streams/foundryProjects.ts';
import { environmentsStream } from './bap/streams/environments.ts';
import { agentComponentsStream } from './dataverse/streams/agentComponents.ts';
import { agentSettingsStream } from './dataverse/streams/agentSettings.ts';
import { agentsStream } from './dataverse/streams/agents.ts';
import { dataverseUsersStream } from './dataverse/streams/dataverseUsers.ts';
import { environmentSettingsStream } from './dataverse/streams/environmentSettings.ts';
import { groupsStream } from './graph/streams/groups.ts';
import { membershipsStream } from './graph/streams/memberships.ts';
import { usersStream } from './graph/streams/users.ts';
import { copilotInteractionsStream } from './graph/streams/copilotInteractions.ts';
import { externalConnectionsStream } from './graph/streams/externalConnections.ts';
import { teamsAppsStream } from './graph/streams/teamsApps.ts';
import { powerBiSharedLinksStream } from './powerBi/streams/powerBiSharedLinks.ts';
import { powerBiWorkspacesStream } from './powerBi/streams/powerBiWorkspaces.ts';
import { connectionsStream } from './powerPlatform/streams/connections.ts';
import { connectorsStream } from './powerPlatform/streams/connectors.ts';
import { dlpPoliciesStream } from './powerPlatform/streams/dlpPolicies.ts';
import { flowsStream } from './powerPlatform/streams/flows.ts';
import { powerAppsStream } from './powerPlatform/streams/powerApps.ts';
import { tenantSettingsStream } from './powerPlatform/streams/tenantSettings.ts';
import { runOrder, type Stream } from './stream.ts';

/**
 * Every collection stream (registration order; the run order is {@link STREAM_RUN_ORDER}).
 *
 * A stream is one file, `sources/<api>/streams/<name>.ts`, exporting a {@link Stream}: its name, parent (the stream
 * whose stored rows give its slices), primary key, cursor (what `read` resumes from), slices, refresh interval,
 * capability (the permission that gates it) and record type (`StreamRecords[name]`). What the streams of one API
 * share lives beside them (`graph/delta.ts`, `dataverse/entity.ts`, `powerPlatform/admin.ts`, …); a plain OData list
 * is declared with `odataListStream` (`sources/odata.ts`).
 *
 * Adding one: the stream file; its import and entry here; its name in `STREAM_NAMES` and, for an estate stream
 * (stored in `estate_objects`, no migration), its attributes type in `core/estate/` and `EstateAttrs`
 * (`core/inventory.ts`, which imports nothing from here). A stream with its own table also needs a migration and a
 * repository mapping in `store/`. The run order follows from the parent links (test/unit/streams.test.ts).
 */
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

/** The streams a permission capability gates (those declaring it), in run order. */
export function streamsGatedBy(capability: CapabilityId): StreamName[] {
  return STREAM_RUN_ORDER.filter((name) => STREAMS[name].capability === capability);
}
