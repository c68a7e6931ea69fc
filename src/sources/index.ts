import type { CapabilityId } from '../core/capabilities.ts';
import type { EstateObject } from '../core/inventory.ts';
import { foundryAccountsStream } from './arm/streams/foundryAccounts.ts';
import { foundryDeploymentsStream } from './arm/streams/foundryDeployments.ts';
import { foundryDiagnosticSettingsStream } from './arm/streams/foundryDiagnosticSettings.ts';
import { foundryRaiPoliciesStream } from './arm/streams/foundryRaiPolicies.ts';
import { foundryProjectsStream } from './arm/streams/foundryProjects.ts';
import { environmentsStream } from './bap/streams/environments.ts';
import { agentComponentsStream } from './dataverse/streams/agentComponents.ts';
import { agentSettingsStream } from './dataverse/streams/agentSettings.ts';
import { agentsStream } from './dataverse/streams/agents.ts';
import { conversationTranscriptsStream } from './dataverse/streams/conversationTranscripts.ts';
import { dataverseUsersStream } from './dataverse/streams/dataverseUsers.ts';
import { environmentSettingsStream } from './dataverse/streams/environmentSettings.ts';
import { groupsStream } from './graph/streams/groups.ts';
import { membershipsStream } from './graph/streams/memberships.ts';
import { usersStream } from './graph/streams/users.ts';
import { copilotInteractionsStream } from './graph/streams/copilotInteractions.ts';
import { externalConnectionsStream } from './graph/streams/externalConnections.ts';
import { teamsAppsStream } from './graph/streams/teamsApps.ts';
import { powerBiSharedLinksStream } from './powerBi/streams/powerBiSharedLinks.ts';
import { powerBiTenantSettingsStream } from './powerBi/streams/powerBiTenantSettings.ts';
import { powerBiWorkspacesStream } from './powerBi/streams/powerBiWorkspaces.ts';
import { connectionsStream } from './powerPlatform/streams/connections.ts';
import { connectorsStream } from './powerPlatform/streams/connectors.ts';
import { dlpPoliciesStream } from './powerPlatform/streams/dlpPolicies.ts';
import { flowsStream } from './powerPlatform/streams/flows.ts';
import { powerAppsStream } from './powerPlatform/streams/powerApps.ts';
import { tenantSettingsStream } from './powerPlatform/streams/tenantSettings.ts';
import { runOrder, type AnyStream, type InventoryListing, type Stream } from './stream.ts';

/**
 * Every collection stream (registration order; the run order is {@link STREAM_RUN_ORDER}). The single list of
 * streams: their names ({@link StreamName}), record types ({@link StreamRecords}), estate attributes
 * ({@link EstateAttrs}), run order and inventory kinds ({@link INVENTORY}) are all derived from it.
 *
 * A stream is one file, `sources/<api>/streams/<name>.ts`, exporting a {@link Stream} annotated with its name, record
 * type and inventory kind (`Stream<'powerApps', EstateObject<PowerAppAttrs>, 'apps'>`) and declaring its parent (the
 * stream whose stored rows give its slices), primary key, cursor (what `read` resumes from), slices, refresh interval,
 * capability (the permission that gates it) and, when the API lists it, its inventory kind (`inventory`). The file
 * also holds its record type: for an estate stream (stored in `estate_objects`) the attributes type, with the
 * upstream documentation it follows. What the streams of one API share lives beside them (`graph/delta.ts`,
 * `dataverse/entity.ts`, `powerPlatform/admin.ts`, …); a plain OData list is declared with `odataListStream`
 * (`sources/odata.ts`).
 *
 * Adding one: the stream file, and its import and entry here (registered under its own name). Nothing else for an
 * estate stream; a stream with its own table also needs a migration and its table's mapping in `CORE_TABLES`
 * (`store/stream-tables.ts`, which does not compile until it covers every stream whose records are not estate
 * objects). The run order follows from the parent links; test/unit/streams.test.ts checks names, parents and
 * inventory kinds. Commands that never collect must not import this module (it loads every stream):
 * `vigil --version` and `vigil findings` start without it.
 */
export const STREAMS = {
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
  foundryRaiPolicies: foundryRaiPoliciesStream,
  foundryDiagnosticSettings: foundryDiagnosticSettingsStream,
  copilotInteractions: copilotInteractionsStream,
  powerBiWorkspaces: powerBiWorkspacesStream,
  powerBiSharedLinks: powerBiSharedLinksStream,
  powerBiTenantSettings: powerBiTenantSettingsStream,
  powerApps: powerAppsStream,
  flows: flowsStream,
  connectors: connectorsStream,
  connections: connectionsStream,
  dlpPolicies: dlpPoliciesStream,
  tenantSettings: tenantSettingsStream,
  externalConnections: externalConnectionsStream,
  teamsApps: teamsAppsStream,
  environmentSettings: environmentSettingsStream,
  conversationTranscripts: conversationTranscriptsStream,
};

/** Names of the collection streams (the keys of {@link STREAMS}). */
export type StreamName = keyof typeof STREAMS;

/** The record type a stream yields. */
type RecordOf<S> = S extends Stream<string, infer R, string> ? R : never;

/** Record types by stream name. */
export type StreamRecords = { [S in StreamName]: RecordOf<(typeof STREAMS)[S]> };

/** Names of the estate streams: those whose records are {@link EstateObject}s (stored in `estate_objects`). */
export type EstateStreamName = { [S in StreamName]: StreamRecords[S] extends EstateObject<object> ? S : never }[StreamName];

/** Names of the streams with their own tables (users, groups, memberships, environments, dataverseUsers, agents). */
export type OwnTableStreamName = Exclude<StreamName, EstateStreamName>;

/** Normalised attributes per estate stream name (each declared in its stream file). */
export type EstateAttrs = { [S in EstateStreamName]: StreamRecords[S] extends EstateObject<infer A> ? A : never };

/** The streams a child stream can be sliced by (whose rows the store lists as parents): four core streams, or any estate stream. */
export type ParentStream = 'groups' | 'environments' | 'users' | 'agents' | EstateStreamName;

/** The inventory kinds the streams declare (`inventory.kind`). */
export type InventoryKind = { [S in StreamName]: (typeof STREAMS)[S] extends Stream<string, unknown, infer K> ? K : never }[StreamName];

/** The order the streams run in, derived from their parent links ({@link runOrder}): parents before their children. */
export const STREAM_RUN_ORDER: readonly StreamName[] = runOrder(Object.values(STREAMS) as AnyStream[]) as StreamName[];

/** The streams a permission capability gates (those declaring it), in run order. */
export function streamsGatedBy(capability: CapabilityId): StreamName[] {
  return STREAM_RUN_ORDER.filter((name) => STREAMS[name].capability === capability);
}

/** One kind of the API's inventory: the stream it lists, and whether its objects belong to an environment. */
export interface InventoryEntry {
  kind: InventoryKind;
  stream: StreamName;
  environment: boolean;
}

/** The API's inventory kinds in the order the portal shows them (by `inventory.position`), from the streams' declarations. */
export const INVENTORY: readonly InventoryEntry[] = (Object.values(STREAMS) as AnyStream[])
  .filter((s): s is AnyStream & { inventory: InventoryListing<string> } => s.inventory !== undefined)
  .sort((a, b) => a.inventory.position - b.inventory.position)
  .map((s) => ({ kind: s.inventory.kind as InventoryKind, stream: s.name as StreamName, environment: s.inventory.environment ?? false }));

/** The kinds of {@link INVENTORY}, in order (the enum of `/api/v1/inventory/{kind}`). */
export const INVENTORY_KINDS = INVENTORY.map((e) => e.kind) as [InventoryKind, ...InventoryKind[]];
