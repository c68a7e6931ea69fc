import type { InventorySource } from './inventory.ts';
import type { CheckContext, CheckMetadata, CheckResult, CoverageGap, InventoryName } from './types.ts';

/**
 * "Not evaluated" is the engine's rule, not each check's (DESIGN.md, "A check"): after a check runs, its results are
 * held against the coverage of the run for every stream the check declares (`reads`, `paged`). A result for a
 * resource whose inputs came from an errored, unfinished or never-collected slice becomes `not_evaluated` with the
 * reason (stream, slice, error code) — whatever the check's code returned, pass or fail: a missing owner list makes a
 * false "owner gone" fail just as surely as a false pass. Every gap of a declared stream is visible in the results,
 * and a check always returns at least one result.
 *
 * Which slices a resource depends on is decided here, once for every check, from the inventory the check was given:
 * - a tenant-wide result (resource type `tenant`, or a resource found nowhere in the inventory, e.g. a group folded
 *   over many users) depends on every slice of every stream the check reads;
 * - any other resource depends on the slices keyed by its own id (an environment, a user), by its environment (an
 *   agent's `environment_id`, an estate row's slice key) and by the `environmentId` / `parent` its result names.
 * Streams read whole (slice `*`: environments, users, DLP policies, tenant settings) have one slice, so every result
 * depends on it.
 */

/** The collection stream behind an inventory part (the store's `directoryUsers` are the Graph `users` stream). */
function streamOf(name: InventoryName): string {
  return name === 'directoryUsers' ? 'users' : name;
}

/** One gap of a stream a check reads: `sliceKey` `*` for the whole stream. */
export interface ReadGap extends CoverageGap {
  stream: string;
  sliceKey: string;
}

/**
 * The gaps of `streams` in the latest collection: whole-stream gaps (slice key `*`) and, for streams read as a whole,
 * their errored slices.
 */
export function streamGaps(ctx: Pick<CheckContext, 'coverage'>, streams: readonly string[]): { whole: ReadGap[]; slices: ReadGap[] } {
  const whole: ReadGap[] = [];
  const slices: ReadGap[] = [];
  for (const stream of streams) {
    const g = ctx.coverage.streamGap(stream);
    if (g) whole.push({ ...g, stream, sliceKey: '*' });
    else for (const s of ctx.coverage.sliceGaps(stream)) slices.push({ code: s.code, message: s.message, stream, sliceKey: s.sliceKey });
  }
  return { whole, slices };
}

/** The gaps of the streams a check declares, whole-stream gaps first. */
function readGaps(ctx: Pick<CheckContext, 'coverage'>, check: Pick<CheckMetadata, 'reads' | 'paged'>): ReadGap[] {
  const { whole, slices } = streamGaps(ctx, [...new Set([...check.reads, ...check.paged].map(streamOf))]);
  return [...whole, ...slices];
}

/**
 * The sentence a person reads for a gap, e.g. `Not evaluated: 'dataverseUsers' of environment Sales (env2) could not
 * be read (0x80040220). …`; `sliceName` is the slice's display name when known (an environment's).
 */
export function gapReason(gap: ReadGap, sliceName?: string | null): string {
  const part =
    gap.sliceKey === '*'
      ? `'${gap.stream}'`
      : sliceName
        ? `'${gap.stream}' of environment ${sliceName} (${gap.sliceKey})`
        : `'${gap.stream}' for ${gap.sliceKey}`;
  return `Not evaluated: ${part} could not be read (${gap.code}). ${gap.message}`;
}

/**
 * The keys of the slices a result's resource depends on, or null when it depends on every slice (tenant-wide, or not
 * found in the inventory the check was given).
 */
function resourceKeys(result: CheckResult, source: InventorySource, index: () => Map<string, Set<string>>): Set<string> | null {
  if (result.resourceType === 'tenant') return null;
  const located = index().get(result.resourceId);
  const keys = new Set<string>([result.resourceId, ...(located ?? [])]);
  let found = located !== undefined;
  for (const field of ['environmentId', 'parent'] as const) {
    const v = result.detail?.[field];
    if (typeof v === 'string' && v !== '*') {
      keys.add(v);
      found = true;
    }
  }
  if (!found && source.loaded.environments?.some((e) => e.id === result.resourceId)) found = true;
  if (!found && source.loaded.directoryUsers?.has(result.resourceId)) found = true;
  return found ? keys : null;
}

/** Resource id → the slice keys it lives under, over the inventory parts loaded for the check. */
function buildIndex(source: InventorySource): Map<string, Set<string>> {
  const index = new Map<string, Set<string>>();
  const add = (id: string, key: string) => {
    const s = index.get(id) ?? new Set<string>();
    if (key !== '*') s.add(key);
    index.set(id, s);
  };
  for (const e of source.loaded.environments ?? []) add(e.id, e.id);
  for (const a of source.loaded.agents ?? []) add(a.id, a.environment_id);
  for (const u of source.loaded.dataverseUsers?.values() ?? []) add(u.id, u.environment_id);
  for (const rows of source.loaded.estate.values()) for (const r of rows) add(r.id, r.sliceKey);
  return index;
}

/**
 * Holds a check's results against the gaps of the streams it reads (see the module comment): results for resources
 * that depend on a gap become `not_evaluated` (the check's own status kept in `detail.checkStatus`); a gap no result
 * shows is added as its own `not_evaluated` result (resource `tenant`, id `{tenant}/{stream}/{slice}`); an empty
 * result list becomes one tenant-wide result — a pass saying nothing was in scope, or not evaluated under a gap.
 *
 * @param source the inventory the check was given (still loaded).
 */
export function guardResults(
  check: Pick<CheckMetadata, 'id' | 'reads' | 'paged'>,
  ctx: Pick<CheckContext, 'coverage' | 'tenantId'>,
  source: InventorySource,
  results: CheckResult[],
): CheckResult[] {
  const out = results.length
    ? results
    : [
        {
          resourceType: 'tenant' as const,
          resourceId: ctx.tenantId,
          resourceName: null,
          status: 'pass' as const,
          reason: 'Nothing in scope: the collected inventory holds no resource this check covers.',
        },
      ];
  const gaps = readGaps(ctx, check);
  if (gaps.length === 0) return out;
  let index: Map<string, Set<string>> | null = null;
  const lazyIndex = () => (index ??= buildIndex(source));
  const shown = new Set<ReadGap>();
  const envNames = new Map((source.loaded.environments ?? []).map((e) => [e.id, e.display_name]));
  const reason = (g: ReadGap) => gapReason(g, envNames.get(g.sliceKey));
  // The gaps by slice key (positions in `gaps`, ascending) and the streams of slice gaps: a result is matched with its
  // gaps by lookups, not by a scan of every gap (a per-user stream can have thousands of errored slices).
  const positions = new Map<string, number[]>();
  const sliceStreams = new Set<string>();
  gaps.forEach((g, i) => {
    if (g.sliceKey === '*') return;
    sliceStreams.add(g.stream);
    const list = positions.get(g.sliceKey);
    if (list) list.push(i);
    else positions.set(g.sliceKey, [i]);
  });
  const whole = gaps.filter((g) => g.sliceKey === '*');
  /** The gaps a not-evaluated result shows: whole-stream ones, those of its own id or `detail.slice`, and `{tenant}/{stream}/{slice}` ids. */
  const showGapsOf = (r: CheckResult) => {
    for (const g of whole) shown.add(g);
    const show = (key: unknown, stream?: string) => {
      if (typeof key !== 'string') return;
      for (const i of positions.get(key) ?? []) if (stream === undefined || gaps[i]!.stream === stream) shown.add(gaps[i]!);
    };
    show(r.resourceId);
    show(r.detail?.slice);
    for (const stream of sliceStreams) {
      const infix = `/${stream}/`;
      for (let at = r.resourceId.indexOf(infix); at !== -1; at = r.resourceId.indexOf(infix, at + 1)) show(r.resourceId.slice(at + infix.length), stream);
    }
  };
  /** The first gap (in `gaps` order) a resource with these slice keys depends on. */
  const firstGap = (keys: Set<string> | null): ReadGap | undefined => {
    if (keys === null || whole.length > 0) return gaps[0];
    let first = Infinity;
    for (const k of keys) first = Math.min(first, positions.get(k)?.[0] ?? Infinity);
    return first === Infinity ? undefined : gaps[first];
  };
  const guarded = out.map((r): CheckResult => {
    if (r.status === 'not_evaluated') {
      showGapsOf(r);
      return r;
    }
    const gap = firstGap(resourceKeys(r, source, lazyIndex));
    if (!gap) return r;
    shown.add(gap);
    return {
      ...r,
      status: 'not_evaluated',
      reason: reason(gap),
      detail: { ...(r.detail ?? {}), code: gap.code, stream: gap.stream, slice: gap.sliceKey, checkStatus: r.status },
    };
  });
  for (const g of gaps) {
    if (shown.has(g)) continue;
    guarded.push({
      resourceType: 'tenant',
      resourceId: g.sliceKey === '*' ? ctx.tenantId : `${ctx.tenantId}/${g.stream}/${g.sliceKey}`,
      resourceName: g.sliceKey === '*' ? null : (envNames.get(g.sliceKey) ?? g.sliceKey),
      status: 'not_evaluated',
      reason: reason(g),
      detail: { code: g.code, stream: g.stream, slice: g.sliceKey },
    });
  }
  return guarded;
}
