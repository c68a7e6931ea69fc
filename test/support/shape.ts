/**
 * JSON shapes for comparing the emulator's answers with real, recorded ones (`test/fixtures/real/`): which keys an
 * object has, the JSON type of each value, and arrays by the shape of their elements. Several samples merge into one
 * shape (a key seen in any sample is part of it; a value seen as a string in one sample and null in another is
 * "string or null").
 *
 * Used by `test/emulator/conformance.test.ts`: every field the emulator sends must exist in the real shape for the
 * same API, with a JSON type the real API also sends, at the same nesting.
 */

/** The JSON type of a value. */
type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** The merged shape of one or more JSON values at one position. */
export interface Shape {
  /** Every JSON type seen at this position. */
  types: Set<JsonType>;
  /** Objects: the shape of each key seen. */
  fields: Map<string, Shape>;
  /** Arrays: the merged shape of every element (null when only empty arrays were seen). */
  element: Shape | null;
}

const typeOf = (v: unknown): JsonType => (v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as JsonType));

const empty = (): Shape => ({ types: new Set(), fields: new Map(), element: null });

/** Merges `value` into `into` (created when absent) and returns it. */
function addSample(value: unknown, into: Shape = empty()): Shape {
  const t = typeOf(value);
  into.types.add(t);
  if (t === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const child = into.fields.get(k) ?? empty();
      into.fields.set(k, addSample(v, child));
    }
  } else if (t === 'array') {
    for (const v of value as unknown[]) into.element = addSample(v, into.element ?? empty());
  }
  return into;
}

/** The merged shape of several values (e.g. every item of every recorded page). */
export function shapeOf(values: readonly unknown[]): Shape {
  const s = empty();
  for (const v of values) addSample(v, s);
  return s;
}

/** Options of {@link deviations}. */
export interface CompareOptions {
  /**
   * Paths (as reported, e.g. `properties.connectorGroups` or `value[].x`) whose deviations are known and explained
   * elsewhere; matched exactly or as a prefix followed by `.` or `[`.
   */
  allow?: readonly string[];
  /**
   * Objects whose keys are data, not field names (maps keyed by ids, e.g. `connectionReferences`): their keys are not
   * compared, only the shapes of their values merged together. Given as paths.
   */
  maps?: readonly string[];
}

const allowed = (path: string, allow: readonly string[]): boolean => allow.some((a) => path === a || path.startsWith(`${a}.`) || path.startsWith(`${a}[`));

function mapValues(s: Shape): Shape {
  const out = empty();
  out.types.add('object');
  const merged = empty();
  for (const f of s.fields.values()) mergeInto(merged, f);
  out.fields.set('*', merged);
  return out;
}

function mergeInto(into: Shape, s: Shape): void {
  for (const t of s.types) into.types.add(t);
  for (const [k, f] of s.fields) {
    const child = into.fields.get(k) ?? empty();
    mergeInto(child, f);
    into.fields.set(k, child);
  }
  if (s.element) {
    into.element ??= empty();
    mergeInto(into.element, s.element);
  }
}

/**
 * What `actual` (the emulator's shape) has that `real` (the corpus shape) does not: a key absent from the real shape,
 * or a JSON type the real API never sent there. A `null` on either side is compatible with any type (a real
 * document's null says nothing about the type the field has when set). Returns one line per deviation, e.g.
 * `value[].properties.foo: not in the real shape`, sorted.
 */
export function deviations(actual: Shape, real: Shape, options: CompareOptions = {}, path = ''): string[] {
  const allow = options.allow ?? [];
  const maps = options.maps ?? [];
  const out: string[] = [];
  if (allowed(path, allow) && path !== '') return out;
  const realTypes = new Set([...real.types].filter((t) => t !== 'null'));
  const actualTypes = [...actual.types].filter((t) => t !== 'null');
  if (realTypes.size > 0) {
    for (const t of actualTypes) if (!realTypes.has(t)) out.push(`${path || '(root)'}: ${t}, the real API sends ${[...realTypes].join('|')}`);
  }
  if (actual.types.has('object') && real.types.has('object')) {
    const isMap = maps.includes(path);
    const a = isMap ? mapValues(actual) : actual;
    const r = isMap ? mapValues(real) : real;
    for (const [k, f] of a.fields) {
      const p = path ? `${path}.${k}` : k;
      const rf = r.fields.get(k);
      if (!rf) {
        if (!allowed(p, allow)) out.push(`${p}: not in the real shape`);
        continue;
      }
      out.push(...deviations(f, rf, options, p));
    }
  }
  if (actual.element && real.element) out.push(...deviations(actual.element, real.element, options, `${path}[]`));
  return out.sort();
}
