/**
 * The shapes shared by every collection stream (`sources/`) and the store: what a collected record carries, an
 * estate object, and a parent row handed to a child stream's slicing. Each stream's own record (or attributes) type
 * lives in its stream file, `sources/<api>/streams/<name>.ts`, with the upstream documentation it follows; the names
 * and record types of all streams are derived from the registry (`StreamRecords`, `sources/index.ts`).
 */

/** Common part of every collected object. `raw` is the upstream JSON object exactly as received. */
export interface Collected {
  raw: Record<string, unknown>;
}

/**
 * An object of an estate stream (stored in `estate_objects`, migration 0008): every stream but the six with their
 * own tables (users, groups, memberships, environments, dataverseUsers, agents). `sliceKey` is the parent it was
 * read under (environment name, user id, or `*` for tenant-wide streams); `id` is unique within the stream
 * (composite ids are joined with `/`); `attrs` holds the normalised fields checks read (typed per stream by
 * `EstateAttrs`, `sources/index.ts`); `raw` the upstream JSON.
 */
export interface EstateObject<A extends object = Record<string, unknown>> extends Collected {
  sliceKey: string;
  id: string;
  name: string | null;
  attrs: A;
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
