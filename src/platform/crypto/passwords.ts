import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing and opaque tokens for the service's own access control.
 *
 * Passwords: scrypt with N = 2^15, r = 8, p = 3 and a 16-byte random salt, 32-byte output — one of the parameter sets
 * OWASP's Password Storage Cheat Sheet lists as equivalent to its minimum (N = 2^17, r = 8, p = 1) at a quarter of
 * the memory (32 MiB per hash). Stored as `scrypt$N$r$p$salt$hash` (base64url) so parameters can be raised later
 * and old hashes still verify. Node's `crypto.scrypt` (OpenSSL) does the work.
 *
 * Tokens (session cookies, CSRF tokens, API keys): 32 random bytes, base64url; stored only as their SHA-256 (hex). A
 * slow hash is for guessable secrets; 256 random bits are not guessable, so SHA-256 is enough and keeps look-ups
 * indexed (the approach of GitHub's and Stripe's API tokens).
 *
 * Source: https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html (scrypt);
 * RFC 7914 (scrypt); https://nodejs.org/api/crypto.html#cryptoscryptpassword-salt-keylen-options-callback.
 */

const PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hashes a password for storage. @returns `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, KEY_LENGTH, { ...PARAMS, maxmem: 128 * PARAMS.N * PARAMS.r * 2 });
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when `password` matches a hash from {@link hashPassword} (constant-time comparison); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const N = Number(n);
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, { N, r: Number(r), p: Number(p), maxmem: 128 * N * Number(r) * 2 });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash that verifies no password, to spend the same time on unknown accounts as on known ones. */
export const DUMMY_PASSWORD_HASH = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_LENGTH).toString('base64url')}`;

/** A new opaque token: 32 random bytes, base64url, with an optional readable prefix (`vgl_` for API keys). */
export function newToken(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 (hex) of a token: what the store keeps. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
