/**
 * Seeded pseudo-random numbers for the emulator's generator and fault injector.
 *
 * Everything the emulator invents (tenant ids, names, secrets, which responses fail) comes from here so that a seed
 * reproduces the same tenant and the same fault sequence on every machine. Not cryptographic.
 */

/** A seeded random source: `next()` returns a float in [0, 1). */
export interface Rng {
  /** Next float in [0, 1). */
  next(): number;
  /** Integer in [min, max] (both inclusive). Throws RangeError when max < min. */
  int(min: number, max: number): number;
  /** One element of a non-empty array. Throws RangeError on an empty array. */
  pick<T>(items: readonly T[]): T;
  /** True with probability p (0..1). */
  chance(p: number): boolean;
  /** A new array with the elements in a seeded random order (Fisher–Yates). The input is not modified. */
  shuffle<T>(items: readonly T[]): T[];
  /** A random GUID in the canonical lower-case 8-4-4-4-12 form, RFC 4122 version 4 bits set. */
  guid(): string;
  /** `length` characters drawn from `alphabet`. */
  chars(length: number, alphabet: string): string;
}

/**
 * Turns a number or string seed into a 32-bit unsigned integer: integers (and strings of decimal digits, so that a CLI's
 * `--seed 42` equals `seed: 42`) are used as is, modulo 2^32; other strings are hashed with FNV-1a.
 */
export function seedToUint32(seed: number | string): number {
  if (typeof seed === 'number' && Number.isInteger(seed)) return seed >>> 0;
  if (typeof seed === 'string' && /^\d{1,15}$/.test(seed)) return Number(seed) >>> 0;
  const text = String(seed);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * mulberry32 PRNG (public-domain 32-bit generator by Tommy Ettinger) wrapped with helpers.
 * @param seed any integer or string; equal seeds give equal sequences.
 */
export function createRng(seed: number | string): Rng {
  let state = seedToUint32(seed);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => {
    if (max < min) throw new RangeError(`int(${min}, ${max}): max < min`);
    return min + Math.floor(next() * (max - min + 1));
  };
  const hex = '0123456789abcdef';
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('pick() from an empty array');
      return items[Math.floor(next() * items.length)] as T;
    },
    chance: (p: number) => next() < p,
    shuffle<T>(items: readonly T[]): T[] {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        const tmp = out[i] as T;
        out[i] = out[j] as T;
        out[j] = tmp;
      }
      return out;
    },
    guid(): string {
      let s = '';
      for (let i = 0; i < 32; i++) {
        let d = Math.floor(next() * 16);
        if (i === 12) d = 4; // version 4
        if (i === 16) d = 8 + (d & 3); // RFC 4122 variant
        s += hex[d];
      }
      return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
    },
    chars(length: number, alphabet: string): string {
      let s = '';
      for (let i = 0; i < length; i++) s += alphabet[Math.floor(next() * alphabet.length)];
      return s;
    },
  };
}
