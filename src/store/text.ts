import {
  OperationNodeTransformer,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type PrimitiveValueListNode,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type ValueNode,
} from 'kysely';

/**
 * U+0000 (NUL) in stored text (issue 14, point 6). PostgreSQL `text` cannot hold U+0000 (a parameter containing it
 * fails with 22021 "invalid byte sequence for encoding UTF8: 0x00") and `jsonb` / the `->>` of `json` reject the
 * `\u0000` escape (22P05 "unsupported Unicode escape sequence"); SQLite stores it. Upstream data can carry it — a user's
 * display name, a field of an audit record — and one such value used to fail a whole page of records (the users stream
 * and its children) or a whole audit content blob (its clean records were never stored and the cursor stuck).
 *
 * The rule, on both dialects so they hold the same data: **no text column of Vigil's store holds U+0000; it is stored
 * as U+FFFD (REPLACEMENT CHARACTER)**, the character Unicode provides for a value that cannot be represented. It
 * applies to the normalised columns only. The upstream records themselves keep it: inventory `raw` and `attrs` are JSON
 * text, where JSON.stringify writes U+0000 as the six characters `\u0000` (valid in PostgreSQL `text`, and JSON.parse
 * gives the original back); raw audit records are kept byte-exact in compressed segments (`bytea` / BLOB).
 *
 * One place: {@link StorableTextPlugin}, installed on every store by `openStore`, rewrites every string parameter of
 * every Kysely query; the hot paths that bypass Kysely's parameters — audit event rows (SQLite's prepared statement,
 * PostgreSQL's rows-as-one-JSON-parameter) and inventory upserts (a compiled statement with positional parameters,
 * repositories/inventory.ts `upsertRecords`) — call {@link storableText} on each column.
 * Sources: https://www.postgresql.org/docs/current/datatype-character.html ("The character with code zero … cannot be
 * stored"), https://www.postgresql.org/docs/current/datatype-json.html (\u0000 rejected by jsonb), Unicode §23.8 (U+FFFD).
 */

/** What U+0000 becomes in a stored text column. */
export const NUL_REPLACEMENT = '\uFFFD';

/** A value as Vigil stores it: a string with every U+0000 replaced by U+FFFD; anything else unchanged. */
export function storableText<T>(value: T): T {
  return typeof value === 'string' && value.includes('\u0000') ? (value.replaceAll('\u0000', NUL_REPLACEMENT) as T) : value;
}

class StorableTextTransformer extends OperationNodeTransformer {
  protected override transformValue(node: ValueNode): ValueNode {
    const value = storableText(node.value);
    return value === node.value ? node : Object.freeze({ ...node, value });
  }

  protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
    return node.values.some((v) => typeof v === 'string' && v.includes('\u0000'))
      ? Object.freeze({ ...node, values: Object.freeze(node.values.map(storableText)) })
      : node;
  }
}

/**
 * Whether a query's operation tree holds a string parameter with U+0000: a `ValueNode` whose value is such a string,
 * or a `PrimitiveValueListNode` holding one. Walks the nodes (plain objects with a `kind`, and arrays of them) without
 * copying them; a parameter's own value (a string, a Date, a Buffer) is not walked into.
 */
function holdsNul(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(holdsNul);
  if (node === null || typeof node !== 'object') return false;
  const n = node as { kind?: string; value?: unknown; values?: unknown[] };
  if (n.kind === 'ValueNode') return typeof n.value === 'string' && n.value.includes('\u0000');
  if (n.kind === 'PrimitiveValueListNode') return n.values!.some((v) => typeof v === 'string' && v.includes('\u0000'));
  for (const key in n) {
    const child = (n as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object' && holdsNul(child)) return true;
  }
  return false;
}

/**
 * Kysely plugin applying {@link storableText} to every parameter of every query (inserts, updates and the values a
 * query compares with, so a look-up finds what was stored). Results are returned as read.
 */
export class StorableTextPlugin implements KyselyPlugin {
  readonly #transformer = new StorableTextTransformer();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    // Kysely's transformer copies every node of the tree; almost no query holds U+0000, so look first (no copy).
    return holdsNul(args.node) ? this.#transformer.transformNode(args.node, args.queryId) : args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
