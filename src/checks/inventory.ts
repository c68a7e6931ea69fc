import type { EstateAttrs, EstateStreamName } from '../sources/index.ts';
import type { Executor } from '../store/db.ts';
import { listAgents, listAllUsers, listDataverseUsers, listEnvironments, listEstateObjects, pageEstateObjects } from '../store/repositories/inventory.ts';
import { CORE_INVENTORY_PARTS, ESTATE_PAGE_SIZE, type CheckInventory, type CheckMetadata, type EstateRow, type InventoryName } from './types.ts';

/**
 * The inventory checks read, loaded per check from what its metadata declares, so an evaluation holds at most the
 * inventory of the checks still to run — never the whole tenant — and streams the largest estate streams page by page.
 */

/** The parts with their own tables (the rest are estate streams). */
type CorePart = (typeof CORE_INVENTORY_PARTS)[number];
const CORE_PARTS: ReadonlySet<string> = new Set<CorePart>(CORE_INVENTORY_PARTS);
const isCorePart = (name: InventoryName): name is CorePart => CORE_PARTS.has(name);

/** Where a check's inventory comes from: the loaded parts, and a pager for the large streams. */
export interface InventorySource {
  loaded: Partial<Pick<CheckInventory, CorePart>> & { estate: Map<string, EstateRow<unknown>[]> };
  pages(stream: EstateStreamName): AsyncIterable<EstateRow<unknown>[]>;
}

/**
 * The inventory one check sees: what its metadata declares (`reads`, `paged`), nothing else.
 * @throws Error on reading an undeclared part, naming the check and the declaration to add (the evaluation records
 *   it as the check's `not_evaluated` result; the check tests fail on it).
 */
export function inventoryView(source: InventorySource, check: Pick<CheckMetadata, 'id' | 'reads' | 'paged'>): CheckInventory {
  const reads = new Set<string>(check.reads);
  const paged = new Set<string>(check.paged);
  const need = (name: InventoryName) => {
    if (!reads.has(name)) throw new Error(`check ${check.id} reads '${name}' but its metadata.json does not list it in "reads"`);
    if (isCorePart(name)) {
      const v = source.loaded[name];
      if (!v) throw new Error(`inventory '${name}' was not loaded for check ${check.id}`);
      return v;
    }
    return source.loaded.estate.get(name) ?? [];
  };
  return {
    get environments() {
      return need('environments') as CheckInventory['environments'];
    },
    get agents() {
      return need('agents') as CheckInventory['agents'];
    },
    get dataverseUsers() {
      return need('dataverseUsers') as CheckInventory['dataverseUsers'];
    },
    get directoryUsers() {
      return need('directoryUsers') as CheckInventory['directoryUsers'];
    },
    estate: (<S extends EstateStreamName>(stream: S) => need(stream) as EstateRow<EstateAttrs[S]>[]) as CheckInventory['estate'],
    estatePages: (<S extends EstateStreamName>(stream: S) => {
      if (!paged.has(stream)) throw new Error(`check ${check.id} reads pages of '${stream}' but its metadata.json does not list it in "paged"`);
      return source.pages(stream) as AsyncIterable<EstateRow<EstateAttrs[S]>[]>;
    }) as CheckInventory['estatePages'],
  };
}

/**
 * Loads the inventory of an integration part by part as checks need it and releases each part when no remaining
 * check reads it. Reads go through the executor given (the evaluation's transaction).
 */
export class InventoryCache {
  readonly source: InventorySource;
  private readonly remaining = new Map<InventoryName, number>();

  /** @param checks the checks about to run, in order: their `reads` decide what is loaded and for how long. */
  constructor(
    private readonly db: Executor,
    private readonly integrationId: string,
    checks: Pick<CheckMetadata, 'reads'>[],
  ) {
    for (const c of checks) for (const r of c.reads) this.remaining.set(r, (this.remaining.get(r) ?? 0) + 1);
    this.source = { loaded: { estate: new Map() }, pages: (stream) => estatePages(db, integrationId, stream) };
  }

  /** Loads what a check reads (parts already loaded are kept). */
  async load(reads: readonly InventoryName[]): Promise<void> {
    const l = this.source.loaded;
    for (const name of reads) {
      switch (name) {
        case 'environments':
          l.environments ??= await listEnvironments(this.db, this.integrationId);
          break;
        case 'agents':
          l.agents ??= await listAgents(this.db, this.integrationId);
          break;
        case 'dataverseUsers':
          l.dataverseUsers ??= new Map((await listDataverseUsers(this.db, this.integrationId)).map((u) => [`${u.environment_id}/${u.id}`, u]));
          break;
        case 'directoryUsers':
          l.directoryUsers ??= new Map((await listAllUsers(this.db, this.integrationId)).map((u) => [u.id, u]));
          break;
        default:
          if (!l.estate.has(name)) l.estate.set(name, await listEstateObjects(this.db, this.integrationId, name));
      }
    }
  }

  /** Marks a check done: parts no remaining check reads are dropped. */
  release(reads: readonly InventoryName[]): void {
    for (const name of reads) {
      const n = (this.remaining.get(name) ?? 1) - 1;
      this.remaining.set(name, n);
      if (n > 0) continue;
      if (isCorePart(name)) delete this.source.loaded[name];
      else this.source.loaded.estate.delete(name);
    }
  }
}

/** Live objects of an estate stream in pages of {@link ESTATE_PAGE_SIZE}, by id (keyset: no page read twice). */
async function* estatePages(db: Executor, integrationId: string, stream: EstateStreamName): AsyncGenerator<EstateRow<unknown>[]> {
  let after: string | null = null;
  for (;;) {
    const page: EstateRow<unknown>[] = await pageEstateObjects(db, integrationId, stream, after, ESTATE_PAGE_SIZE);
    if (page.length > 0) yield page;
    if (page.length < ESTATE_PAGE_SIZE) return;
    after = page.at(-1)!.id;
  }
}
