import type { CloudProfile } from '../config/cloud.ts';
import type { CapabilityId } from '../core/capabilities.ts';
import type { ParentRow } from '../core/inventory.ts';
import type { HttpClient } from '../platform/http/client.ts';
import type { Logger } from '../platform/log/index.ts';
import type { ParentStream } from './index.ts';

/**
 * The unit of collection: a stream is an async generator of pages of records, with a primary key, a resumable
 * cursor (the next page's URL) and slices (one per group, one per environment). Sources never touch the
 * database: the sync engine stores each page and checkpoints the cursor after it.
 * Model: faros-ai airbyte-cdk `stream-base.ts`.
 */

/** One slice of a stream: `key` is stable across runs (a group id, an environment name, or `*`). */
export interface Slice {
  key: string;
  params: Record<string, string>;
  /**
   * The parent keys this slice reads, when it reads several at once (a Graph `$batch` of 20 users); default
   * `[key]`. A completed slice marks unseen rows only under these parents.
   */
  covers?: string[];
}

/** One page read from upstream, with the cursor from which the next page is read (null on the last page). */
export interface StreamPage<R> {
  records: R[];
  nextCursor: string | null;
  /** Delta rounds: ids of objects removed upstream since the previous round. */
  removed?: string[];
  /** Delta-capable streams: the link the next round starts from, on the last page of a complete round. */
  deltaLink?: string;
}

/** Tokens for the integration's service principal, per resource. */
interface TokenSource {
  /** `(forceRefresh) => bearer token` for a resource (scope `{resource}/.default`). */
  bearer(resource: string): (forceRefresh: boolean) => Promise<string>;
  /** The `roles` claim of a token for the resource. */
  roles(resource: string): Promise<string[]>;
}

/** What a stream needs to read. */
export interface StreamContext {
  /** The tenant read, for its shared throttling budgets. */
  tenantId: string;
  http: HttpClient;
  cloud: CloudProfile;
  tokens: TokenSource;
  logger: Logger;
  /** Page size asked of Dataverse (`Prefer: odata.maxpagesize`), 1–5000. @default 5000 */
  dataversePageSize?: number;
  /** Page size asked of Graph (`$top`), 1–999. @default 999 */
  graphPageSize?: number;
  /** Stops the read: waits for throttling budgets end with the signal's reason (the run is stopped, not failed). */
  signal?: AbortSignal | undefined;
}

/**
 * How the API's inventory (`/api/v1/inventory/{kind}`, the portal's Inventory page) lists a stream's live objects.
 * The kinds, their order and the store's mapping are derived from these declarations (`INVENTORY`, `sources/index.ts`).
 */
export interface InventoryListing<K extends string> {
  /** The kind's name in the API path and the portal (`apps`, `powerbi-workspaces`), unique across streams. */
  kind: K;
  /** Where the portal lists the kind: kinds are ordered by ascending position (tens, so a new kind fits between two). */
  position: number;
  /**
   * The objects belong to a Power Platform environment, the stream's slice (the list's `environmentId` filter).
   * @default false
   */
  environment?: boolean;
}

/**
 * A stream definition: `N` its name (its key in `STREAMS`), `R` its record type, `K` its inventory kind (none unless
 * it declares {@link Stream.inventory}). A stream file writes this type out on its constant
 * (`export const flowsStream: Stream<'flows', EstateObject<FlowAttrs>, 'flows'> = …`): the registry derives the names
 * and record types from it, and a type inferred from the initializer would depend on the registry itself (`parent`).
 */
export interface Stream<N extends string = string, R = unknown, K extends string = never> {
  name: N;
  /** Primary key fields of the records. */
  primaryKey: string[];
  /** For child streams: the stream whose stored rows give the slices. */
  parent?: ParentStream;
  /** Builds the slice for one parent row, or null when the row has nothing to read (environment without Dataverse). */
  slice?(row: ParentRow): Slice | null;
  /**
   * Instead of {@link slice}: builds slices from a page of parent rows at once (batches of parents, with `covers`).
   * Called once per page of parents (up to 5,000, ordered by id), so a batch never spans two pages.
   */
  slices?(rows: ParentRow[]): Slice[];
  /**
   * False when the slices need nothing of a parent user but its keys: the users are then read without their stored
   * Graph JSON (`raw`), the largest column (at 50,000 users, some 25 MB read and dropped per stream). @default true
   */
  parentRaw?: boolean;
  /**
   * Streams with no incremental read upstream (no delta query, no change filter) and a high request cost (one per
   * environment or per 20 users): a complete read younger than this many seconds is reused instead of read again
   * (a full collection — `vigil collect --full` — reads it regardless). Unset: read every run.
   */
  refreshSeconds?: number;
  /**
   * History streams (Copilot interactions): records are kept when a later round no longer returns them; nothing is
   * marked deleted.
   */
  retain?: boolean;
  /**
   * The permission capability without which the stream cannot run (`core/capabilities.ts`): the engine skips it with
   * `MISSING_PERMISSION` when the token's `roles` lack it (unless the capability is judged by the API's answer).
   */
  capability?: CapabilityId;
  /** The token resource this stream reads (for the permission pre-check). */
  resource(ctx: StreamContext, slice: Slice): string;
  /**
   * The stream reads Graph delta rounds: `read` also accepts a saved delta link as its cursor, and its last page
   * carries the next delta link.
   */
  delta?: boolean;
  /** Reads the slice from the cursor (null = from the start). */
  read(ctx: StreamContext, slice: Slice, cursor: string | null): AsyncGenerator<StreamPage<R>>;
  /** The stream is listed by the API's inventory as this kind (absent: not listed). */
  inventory?: InventoryListing<K>;
}

/** Any stream, whatever its name, records and inventory kind (what the engine and the registry handle). */
export type AnyStream = Stream<string, unknown, string>;

/** The single slice of a stream that has no parent. */
export const ROOT_SLICE: Slice = Object.freeze({ key: '*', params: {} }) as Slice;

/**
 * Refresh intervals (seconds) of the costly streams, see {@link Stream.refreshSeconds}. Power Platform inventory has no
 * incremental read and costs a request per environment and stream; Teams app installations cost a `$batch` per 20
 * users; Copilot interaction history is incremental but still one request per licensed user. Changes in between
 * reach Vigil through the audit feed (Power Platform admin activity, CopilotInteraction records) and `--full`.
 */
export const REFRESH_SECONDS = { environmentInventory: 6 * 3600, perUserInventory: 24 * 3600, interactionHistory: 6 * 3600 } as const;

/**
 * The run order of a set of streams, derived from their `parent` links: every parent before its children, and
 * otherwise the order in which the streams are given (registration order), so a registry already in order keeps it.
 * @throws Error naming the streams when a parent is missing from the set or the links form a cycle.
 */
export function runOrder<N extends string>(streams: readonly { name: N; parent?: string | undefined }[]): N[] {
  const names = new Set<string>(streams.map((s) => s.name));
  for (const s of streams) if (s.parent !== undefined && !names.has(s.parent)) throw new Error(`stream ${s.name}: parent ${s.parent} is not registered`);
  const order: N[] = [];
  const placed = new Set<string>();
  let pending = [...streams];
  while (pending.length > 0) {
    // The first pending stream whose parent is placed goes next (registration order among the ready ones).
    const next = pending.find((s) => s.parent === undefined || placed.has(s.parent));
    if (!next) throw new Error(`stream parent links form a cycle: ${pending.map((s) => `${s.name} → ${s.parent}`).join(', ')}`);
    order.push(next.name);
    placed.add(next.name);
    pending = pending.filter((s) => s !== next);
  }
  return order;
}
