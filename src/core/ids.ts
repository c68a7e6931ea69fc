import { randomUUID } from 'node:crypto';

/** Matches a GUID in its canonical 8-4-4-4-12 hexadecimal form (any case), as Entra ID shows tenant and app ids. */
export const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a GUID in canonical form. */
export function isGuid(value: string): boolean {
  return GUID_PATTERN.test(value);
}

/**
 * A new Vigil-side identifier: a prefix naming the kind plus a random UUID without dashes, e.g. `int_3f2a…`.
 * IDs are generated in code (DESIGN.md, Storage) so both SQL dialects agree.
 */
export function newId(prefix: 'int' | 'run' | 'fnd' | 'alr' | 'seg' | 'fhe' | 'org' | 'usr' | 'key' | 'cf'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
