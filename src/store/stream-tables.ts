import type { EstateObject } from '../core/inventory.ts';
import type { PowerPlatformEnvironment } from '../sources/bap/streams/environments.ts';
import type { Agent } from '../sources/dataverse/streams/agents.ts';
import type { DataverseUser } from '../sources/dataverse/streams/dataverseUsers.ts';
import type { DirectoryGroup } from '../sources/graph/streams/groups.ts';
import type { GroupMembership } from '../sources/graph/streams/memberships.ts';
import type { DirectoryUser } from '../sources/graph/streams/users.ts';
import type { EstateStreamName, OwnTableStreamName, StreamName, StreamRecords } from '../sources/index.ts';
import type { InventoryTable } from './schema.ts';

/**
 * Where each collection stream is stored: the six streams with their own tables, mapped column by column, and every
 * other stream in `estate_objects` under its name. A leaf module (types only, no query builder), so what needs only
 * to know a stream's table (the checks loader, the inventory list) does not load the repositories.
 */

const bool = (v: boolean | null): number | null => (v === null ? null : v ? 1 : 0);

/** How one stream's records map to a table. */
export interface TableMapping<R> {
  table: InventoryTable;
  /** Key columns besides integration_id. */
  key: string[];
  /** Column holding the slice key for child streams (deletions are scoped per slice). */
  sliceColumn?: string;
  /** Parent table and its live-row condition for orphan marking. */
  parentTable?: InventoryTable;
  /** Estate streams share `estate_objects`: every statement also filters `stream = discriminator`. */
  discriminator?: string;
  /** Column holding the object's display name (the inventory list shows and searches it); absent: not listable. */
  nameColumn?: string;
  toRow(r: R): Record<string, unknown>;
}

/**
 * How the records of the streams with their own tables map to them (every other stream is an estate stream, in
 * `estate_objects`). Typed by the registry: a stream whose records are not estate objects does not compile until it
 * has its mapping here (and its table a migration).
 */
const CORE_TABLES: { [S in OwnTableStreamName]: TableMapping<StreamRecords[S]> } = {
  users: {
    table: 'directory_users',
    key: ['id'],
    nameColumn: 'display_name',
    toRow: (u: DirectoryUser) => ({
      id: u.id,
      display_name: u.displayName,
      user_principal_name: u.userPrincipalName,
      mail: u.mail,
      account_enabled: bool(u.accountEnabled),
      user_type: u.userType,
      created_date_time: u.createdDateTime,
    }),
  },
  groups: {
    table: 'directory_groups',
    key: ['id'],
    nameColumn: 'display_name',
    toRow: (g: DirectoryGroup) => ({
      id: g.id,
      display_name: g.displayName,
      mail: g.mail,
      security_enabled: bool(g.securityEnabled),
      mail_enabled: bool(g.mailEnabled),
      group_types: JSON.stringify(g.groupTypes),
    }),
  },
  memberships: {
    table: 'group_memberships',
    key: ['group_id', 'member_id'],
    sliceColumn: 'group_id',
    parentTable: 'directory_groups',
    toRow: (m: GroupMembership) => ({ group_id: m.groupId, member_id: m.memberId, member_type: m.memberType }),
  },
  environments: {
    table: 'environments',
    key: ['id'],
    nameColumn: 'display_name',
    toRow: (e: PowerPlatformEnvironment) => ({
      id: e.id,
      display_name: e.displayName,
      sku: e.sku,
      is_default: e.isDefault ? 1 : 0,
      region: e.region,
      dataverse_url: e.dataverseUrl,
      state: e.state,
    }),
  },
  dataverseUsers: {
    table: 'dataverse_users',
    key: ['environment_id', 'id'],
    sliceColumn: 'environment_id',
    parentTable: 'environments',
    nameColumn: 'full_name',
    toRow: (u: DataverseUser) => ({
      environment_id: u.environmentId,
      id: u.id,
      full_name: u.fullName,
      aad_object_id: u.aadObjectId,
      application_id: u.applicationId,
      is_disabled: bool(u.isDisabled),
    }),
  },
  agents: {
    table: 'agents',
    key: ['environment_id', 'id'],
    sliceColumn: 'environment_id',
    parentTable: 'environments',
    nameColumn: 'name',
    toRow: (a: Agent) => ({
      environment_id: a.environmentId,
      id: a.id,
      name: a.name,
      schema_name: a.schemaName,
      authentication_mode: a.authenticationMode,
      authentication_trigger: a.authenticationTrigger,
      access_control_policy: a.accessControlPolicy,
      owner_id: a.ownerId,
      published_on: a.publishedOn,
      modified_on: a.modifiedOn,
      created_on: a.createdOn,
      state_code: a.stateCode,
      status_code: a.statusCode,
    }),
  },
};

/** The mapping of an estate stream onto `estate_objects`. */
function estateMapping(stream: string): TableMapping<EstateObject> {
  return {
    table: 'estate_objects',
    key: ['stream', 'id'],
    sliceColumn: 'slice_key',
    discriminator: stream,
    nameColumn: 'name',
    toRow: (o) => ({ stream, id: o.id, slice_key: o.sliceKey, name: o.name, attrs: JSON.stringify(o.attrs) }),
  };
}

/** True for the streams stored in `estate_objects`: every stream without a table of its own. */
export function isEstateStream(stream: string): stream is EstateStreamName {
  return !Object.hasOwn(CORE_TABLES, stream);
}

/** How a stream's records map to a table. */
export function mappingOf<S extends StreamName>(stream: S): TableMapping<StreamRecords[S]> {
  return (isEstateStream(stream) ? estateMapping(stream) : CORE_TABLES[stream as OwnTableStreamName]) as TableMapping<StreamRecords[S]>;
}

/** Where the API's inventory list reads a stream's live objects (see `pageInventory`, `queries.ts`). */
export interface ListedTable {
  table: 'agents' | 'environments' | 'directory_users' | 'directory_groups' | 'dataverse_users' | 'estate_objects';
  /** The `stream` of `estate_objects`. */
  stream?: string;
  /** Column of the display name. */
  name: string;
  /** Column of the environment id (the `environmentId` filter), when the objects belong to an environment. */
  environment?: string;
}

/**
 * The table, name column and environment column the inventory list reads for a stream.
 * @param environment the stream's objects belong to an environment (its slice column holds the environment id).
 * @throws Error when the stream's table has no name column (memberships) or no slice column to filter by environment.
 */
export function listedTableOf(stream: StreamName, environment: boolean): ListedTable {
  const m = mappingOf(stream);
  if (!m.nameColumn) throw new Error(`stream ${stream} cannot be listed: its table ${m.table} has no name column`);
  if (environment && !m.sliceColumn) throw new Error(`stream ${stream} cannot be filtered by environment: its table ${m.table} has no slice column`);
  return {
    table: m.table as ListedTable['table'],
    ...(m.discriminator && { stream: m.discriminator }),
    name: m.nameColumn,
    ...(environment && { environment: m.sliceColumn }),
  };
}
