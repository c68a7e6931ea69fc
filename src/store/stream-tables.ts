import type { EstateObject } from '../core/inventory.ts';
import type { PowerPlatformEnvironment } from '../sources/bap/streams/environments.ts';
import type { Agent } from '../sources/dataverse/streams/agents.ts';
import type { TranscriptTurn } from '../sources/dataverse/streams/conversationTranscripts.ts';
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
  /** The columns a record fills (key columns included; not integration_id, raw or the run stamps), in `write`'s order. */
  columns: readonly string[];
  /** Appends a record's values of {@link columns}, in order, to `out` (the upsert's positional parameters). */
  write(r: R, out: unknown[]): void;
  /** The record's key (its {@link key} columns' values joined by U+0000): the last of a batch's copies is kept. */
  keyOf(r: R): string;
  /** The record as `{ column: value }` (the values `write` appends). */
  toRow(r: R): Record<string, unknown>;
}

/** A mapping whose `toRow` is made from its `columns` and `write`. */
function mapped<R>(m: Omit<TableMapping<R>, 'toRow'>): TableMapping<R> {
  return {
    ...m,
    toRow: (r) => {
      const values: unknown[] = [];
      m.write(r, values);
      return Object.fromEntries(m.columns.map((c, i) => [c, values[i]]));
    },
  };
}

/**
 * How the records of the streams with their own tables map to them (every other stream is an estate stream, in
 * `estate_objects`). Typed by the registry: a stream whose records are not estate objects does not compile until it
 * has its mapping here (and its table a migration).
 */
const CORE_TABLES: { [S in OwnTableStreamName]: TableMapping<StreamRecords[S]> } = {
  users: mapped({
    table: 'directory_users',
    key: ['id'],
    nameColumn: 'display_name',
    columns: ['id', 'display_name', 'user_principal_name', 'mail', 'account_enabled', 'user_type', 'created_date_time'],
    write: (u: DirectoryUser, out) => {
      out.push(u.id, u.displayName, u.userPrincipalName, u.mail, bool(u.accountEnabled), u.userType, u.createdDateTime);
    },
    keyOf: (u) => u.id,
  }),
  groups: mapped({
    table: 'directory_groups',
    key: ['id'],
    nameColumn: 'display_name',
    columns: ['id', 'display_name', 'mail', 'security_enabled', 'mail_enabled', 'group_types'],
    write: (g: DirectoryGroup, out) => {
      out.push(g.id, g.displayName, g.mail, bool(g.securityEnabled), bool(g.mailEnabled), JSON.stringify(g.groupTypes));
    },
    keyOf: (g) => g.id,
  }),
  memberships: mapped({
    table: 'group_memberships',
    key: ['group_id', 'member_id'],
    sliceColumn: 'group_id',
    parentTable: 'directory_groups',
    columns: ['group_id', 'member_id', 'member_type'],
    write: (m: GroupMembership, out) => {
      out.push(m.groupId, m.memberId, m.memberType);
    },
    keyOf: (m) => `${m.groupId}\u0000${m.memberId}`,
  }),
  environments: mapped({
    table: 'environments',
    key: ['id'],
    nameColumn: 'display_name',
    columns: ['id', 'display_name', 'sku', 'is_default', 'region', 'dataverse_url', 'state'],
    write: (e: PowerPlatformEnvironment, out) => {
      out.push(e.id, e.displayName, e.sku, e.isDefault ? 1 : 0, e.region, e.dataverseUrl, e.state);
    },
    keyOf: (e) => e.id,
  }),
  dataverseUsers: mapped({
    table: 'dataverse_users',
    key: ['environment_id', 'id'],
    sliceColumn: 'environment_id',
    parentTable: 'environments',
    nameColumn: 'full_name',
    columns: ['environment_id', 'id', 'full_name', 'aad_object_id', 'application_id', 'is_disabled'],
    write: (u: DataverseUser, out) => {
      out.push(u.environmentId, u.id, u.fullName, u.aadObjectId, u.applicationId, bool(u.isDisabled));
    },
    keyOf: (u) => `${u.environmentId}\u0000${u.id}`,
  }),
  agents: mapped({
    table: 'agents',
    key: ['environment_id', 'id'],
    sliceColumn: 'environment_id',
    parentTable: 'environments',
    nameColumn: 'name',
    columns: [
      'environment_id',
      'id',
      'name',
      'schema_name',
      'authentication_mode',
      'authentication_trigger',
      'access_control_policy',
      'owner_id',
      'published_on',
      'modified_on',
      'created_on',
      'state_code',
      'status_code',
    ],
    write: (a: Agent, out) => {
      out.push(
        a.environmentId,
        a.id,
        a.name,
        a.schemaName,
        a.authenticationMode,
        a.authenticationTrigger,
        a.accessControlPolicy,
        a.ownerId,
        a.publishedOn,
        a.modifiedOn,
        a.createdOn,
        a.stateCode,
        a.statusCode,
      );
    },
    keyOf: (a) => `${a.environmentId}\u0000${a.id}`,
  }),
  // Transcript turns: masked text and inspection counts; `injection`, `jailbreak`, `markers` and `evaluated_at` are
  // the post-processing's (protection/transcripts.ts), not written here, so a turn read again keeps them.
  conversationTranscripts: mapped({
    table: 'transcript_turns',
    key: ['environment_id', 'id'],
    sliceColumn: 'environment_id',
    parentTable: 'environments',
    columns: [
      'environment_id',
      'id',
      'transcript_id',
      'conversation_id',
      'agent_id',
      'agent_name',
      'user_id',
      'channel_id',
      'turn_at',
      'role',
      'tool_name',
      'text',
      'text_length',
      'secrets',
      'personal',
      'finding_types',
      'transcript_modified_on',
    ],
    write: (t: TranscriptTurn, out) => {
      out.push(
        t.environmentId,
        t.id,
        t.transcriptId,
        t.conversationId,
        t.agentId,
        t.agentName,
        t.userId,
        t.channelId,
        t.at,
        t.role,
        t.toolName,
        t.text,
        t.textLength,
        t.secrets,
        t.personal,
        JSON.stringify(t.findingTypes),
        t.transcriptModifiedOn,
      );
    },
    keyOf: (t) => `${t.environmentId}\u0000${t.id}`,
  }),
};

const estateMappings = new Map<string, TableMapping<EstateObject>>();

/** The mapping of an estate stream onto `estate_objects` (one per stream, made once). */
function estateMapping(stream: string): TableMapping<EstateObject> {
  let m = estateMappings.get(stream);
  if (!m) {
    m = mapped<EstateObject>({
      table: 'estate_objects',
      key: ['stream', 'id'],
      sliceColumn: 'slice_key',
      discriminator: stream,
      nameColumn: 'name',
      columns: ['stream', 'id', 'slice_key', 'name', 'attrs'],
      write: (o, out) => {
        out.push(stream, o.id, o.sliceKey, o.name, JSON.stringify(o.attrs));
      },
      keyOf: (o) => o.id,
    });
    estateMappings.set(stream, m);
  }
  return m;
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
