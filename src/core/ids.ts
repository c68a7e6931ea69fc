import { randomUUID } from 'node:crypto';
import { VigilError } from './errors.ts';

/** Matches a GUID in its canonical 8-4-4-4-12 hexadecimal form (any case), as Entra ID shows tenant and app ids. */
const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a GUID in canonical form. */
export function isGuid(value: string): boolean {
  return GUID_PATTERN.test(value);
}

/**
 * A new Vigil-side identifier: a prefix naming the kind plus a random UUID without dashes, e.g. `int_3f2a…`.
 * IDs are generated in code (DESIGN.md, Storage) so both SQL dialects agree.
 */
export function newId(prefix: 'int' | 'run' | 'fnd' | 'alr' | 'seg' | 'fhe' | 'org' | 'usr' | 'key' | 'cf' | 'alh'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

/**
 * A GUID as people paste it, in canonical form: trimmed, lower case, braces removed (`{…}`, as the registry and some
 * admin centres show it) and dashes put back into 32 bare hexadecimal digits. Anything else is returned trimmed and
 * unchanged, for the caller's validation to refuse with its own message.
 */
export function normalizeGuid(value: string): string {
  let v = value.trim();
  if (/^\{.*\}$/.test(v)) v = v.slice(1, -1).trim();
  if (/^[0-9a-f]{32}$/i.test(v)) v = `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20)}`;
  return isGuid(v) ? v.toLowerCase() : value.trim();
}

/** Hexadecimal digits after the kind prefix that a short id shows at least (`fnd_3f2a9b1c`). */
const SHORT_ID_DIGITS = 8;

/**
 * Short forms of Vigil ids for display: the kind prefix and the first {@link SHORT_ID_DIGITS} hexadecimal digits,
 * longer where two of `ids` would otherwise look the same (as `git` abbreviates commits). Ids without a kind prefix
 * (upstream GUIDs) are cut the same way, to 8 characters. Returns a map from each id to its short form.
 */
export function shortIds(ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const head = (id: string) => /^[a-z]+_/.exec(id)?.[0].length ?? 0;
  let len = SHORT_ID_DIGITS;
  const unique = [...new Set(ids)];
  for (;;) {
    const cut = unique.map((id) => id.slice(0, head(id) + len));
    if (new Set(cut).size === unique.length || unique.every((id, i) => cut[i] === id)) {
      unique.forEach((id, i) => out.set(id, cut[i]!));
      return out;
    }
    len++;
  }
}

/**
 * Picks the one id among `candidates` (ids starting with what the user typed) that `input` names.
 * @returns the id, or undefined when there is no candidate (the caller reports "not found", exit 4).
 * @throws VigilError `invalid-input` (exit 2) when the prefix names several ids, listing them (at most 10).
 */
export function pickByPrefix(input: string, candidates: readonly string[], what: { field: string; kind: string }): string | undefined {
  if (candidates.length === 0) return undefined;
  const exact = candidates.find((c) => c === input);
  if (exact) return exact;
  if (candidates.length === 1) return candidates[0];
  const short = shortIds(candidates);
  const shown = candidates
    .slice(0, 10)
    .map((c) => short.get(c)!)
    .join(', ');
  throw new VigilError(
    'AMBIGUOUS_ID',
    `'${input}' could be ${candidates.length > 10 ? 'more than 10' : candidates.length} ${what.kind}s: ${shown}${candidates.length > 10 ? ', …' : '.'}`,
    {
      field: what.field,
      remediation: (_, act) => `Type more characters of the id, or ${act({ do: 'copyWholeId' })}.`,
    },
  );
}

/**
 * The id prefix to look up for what a user typed: lower case, with the kind prefix added when only the digits were
 * given (`3f2a9b1c` → `fnd_3f2a9b1c`); undefined when `input` cannot be the start of an id of that kind.
 */
export function idPrefix(input: string, kind: string): string | undefined {
  const v = input.trim().toLowerCase();
  if (new RegExp(`^${kind}_[0-9a-f]{1,32}$`).test(v)) return v;
  if (/^[0-9a-f]{4,32}$/.test(v)) return `${kind}_${v}`;
  return undefined;
}
