import type { EstateAttrs, EstateStreamName } from '../sources/index.ts';
import type { CheckStatus, Severity } from '../core/types.ts';
import type { AgentsTable, DataverseUsersTable, DirectoryUsersTable, EnvironmentsTable } from '../store/schema.ts';

/**
 * What a check is handed: the integration's inventory and the coverage of the latest collection run. A check never
 * calls an upstream API and never imports a global client: its data arrives as an argument (STYLE.md §4).
 */

/** Why a stream or slice was not collected. */
export interface CoverageGap {
  code: string;
  message: string;
}

/** What the latest collection run could and could not read. */
export interface Coverage {
  /** The run the inventory comes from, or null when the integration was never collected. */
  runId: string | null;
  /** The gap of a whole stream (missing permission, parent failed, no run), or null when it ran. */
  streamGap(stream: string): CoverageGap | null;
  /** The gap of one slice (an environment, a group), or the stream's gap, or null when it was read. */
  sliceGap(stream: string, sliceKey: string): CoverageGap | null;
  /** The errored or unfinished slices of a stream (not its whole-stream gap). */
  sliceGaps(stream: string): (CoverageGap & { sliceKey: string })[];
}

/** Kinds of resource a check result is about. */
export const RESOURCE_TYPES = [
  'tenant',
  'environment',
  'agent',
  'agentComponent',
  'app',
  'flow',
  'connector',
  'connection',
  'dlpPolicy',
  'user',
  'group',
  'externalConnection',
  'teamsApp',
  'copilotInteraction',
  'powerBiWorkspace',
  'powerBiReport',
  'powerBiDataset',
  'foundryAccount',
  'foundryProject',
  'foundryDeployment',
] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** A live object of an estate stream as checks see it (timestamps ISO 8601 UTC). */
export interface EstateRow<A> {
  id: string;
  /** The parent it was read under: environment name, user id, or `*`. */
  sliceKey: string;
  name: string | null;
  attrs: A;
  firstSeenAt: string;
  lastSeenAt: string;
}

/** The parts of the inventory a check may read that have their own tables (`directoryUsers`: the users stream's rows). */
export const CORE_INVENTORY_PARTS = ['environments', 'agents', 'dataverseUsers', 'directoryUsers'] as const;

/**
 * What a check may read from the inventory, declared in its metadata (`reads`): a core part or an estate stream,
 * loaded whole before the check runs and released when no later check needs it.
 */
export type InventoryName = (typeof CORE_INVENTORY_PARTS)[number] | EstateStreamName;

/**
 * The inventory a check reads. Rows are the store's (snake_case columns). Only what the check's metadata declares is
 * readable: `reads` (loaded whole) and `paged` (estate streams too large to load, read page by page); reading
 * anything else throws, naming the check and the missing declaration.
 */
export interface CheckInventory {
  /** Live objects of an estate stream (empty when the stream was never collected). Needs `reads`. */
  estate<S extends EstateStreamName>(stream: S): EstateRow<EstateAttrs[S]>[];
  /**
   * Live objects of a large estate stream page by page (ordered by id, pages of at most {@link ESTATE_PAGE_SIZE}),
   * without holding the stream in memory: Teams installations, Copilot interaction history. Needs `paged`.
   */
  estatePages<S extends EstateStreamName>(stream: S): AsyncIterable<EstateRow<EstateAttrs[S]>[]>;

  environments: EnvironmentsTable[];
  agents: AgentsTable[];
  /** Dataverse users keyed `${environmentId}/${systemuserid}`. */
  dataverseUsers: Map<string, DataverseUsersTable>;
  /** All live directory users (members and guests), keyed by object id. */
  directoryUsers: Map<string, Pick<DirectoryUsersTable, 'id' | 'display_name' | 'user_principal_name' | 'account_enabled' | 'user_type'>>;
}

/** The integration's own health facts (setup mode, secret expiry, credential state). */
interface IntegrationFacts {
  mode: string;
  /** ISO 8601 UTC, or null when unknown or not applicable (managed app). */
  secretExpiresAt: string | null;
  /** `ok`, `expired` or `rejected`. */
  credentialState: string;
  credentialError: string | null;
}

/** Input of a check. */
export interface CheckContext {
  integrationId: string;
  tenantId: string;
  integration: IntegrationFacts;
  /** Evaluation time. */
  now: Date;
  inventory: CheckInventory;
  coverage: Coverage;
}

/** One result of a check, for one resource. */
export interface CheckResult {
  resourceType: ResourceType;
  resourceId: string;
  resourceName: string | null;
  status: CheckStatus;
  /** Why it failed or could not be evaluated; for a pass, optional. */
  reason: string | null;
  detail?: Record<string, unknown>;
}

/** Rows per page of {@link CheckInventory.estatePages}. */
export const ESTATE_PAGE_SIZE = 2000;

/**
 * A check's code: a function of its context alone (no upstream calls, no global clients). Asynchronous only when it
 * reads pages ({@link CheckInventory.estatePages}).
 */
export type CheckFunction = (ctx: CheckContext) => CheckResult[] | Promise<CheckResult[]>;

/** Validated metadata of a check (the `metadata.json` beside `check.ts`). */
export interface CheckMetadata {
  id: string;
  title: string;
  area: string;
  severity: Severity;
  resourceType: CheckResult['resourceType'];
  risk: string;
  remediation: string;
  references: string[];
  frameworks: Record<string, string[]>;
  /** Peer checks matched or exceeded (Maester, ScubaGear, …), for docs/checks.md. */
  peers: string[];
  /** Inventory the check reads whole (see {@link CheckInventory}). */
  reads: InventoryName[];
  /** Estate streams the check reads page by page. */
  paged: EstateStreamName[];
}

/** A loaded check. */
export interface LoadedCheck {
  metadata: CheckMetadata;
  run: CheckFunction;
}
