/**
 * Coercion of parsed upstream JSON (`unknown`) into the typed fields Vigil keeps: each helper returns the value when
 * it has the expected JSON type and a neutral value (null, `{}`, `[]`) otherwise. Never throws; no conversion
 * between types (the string `"1"` is not a number), so a field Microsoft sends with another type reads as absent.
 * Imports nothing (core layer).
 */

/** A JSON object as parsed. */
export type Json = Record<string, unknown>;

/** The string, or null for any other value. */
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The string, or `''` for any other value (token claims, where absent reads as empty). */
export const text = (v: unknown): string => str(v) ?? '';

/** The string when it is not empty, or null (audit records send `""` for absent values). */
export const nonEmptyStr = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** The number, or null for any other value (numeric strings included). */
export const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The boolean, or null for any other value. */
export const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/** The object (not an array), or null for any other value. */
export const objOrNull = (v: unknown): Json | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);

/** The object (not an array), or `{}` for any other value: nested reads (`obj(obj(p.states).runtime).id`) never throw. */
export const obj = (v: unknown): Json => objOrNull(v) ?? {};

/** The array, or `[]` for any other value. */
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The object elements (arrays included, null and scalars dropped) of an array, or `[]` when it is not an array. */
export const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter((x): x is Json => !!x && typeof x === 'object') : []);
