import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyEncryptionKey } from './envelope.ts';

/**
 * Signed, expiring state tokens for OAuth redirects (the admin consent link): `payload.signature`, both base64url,
 * HMAC-SHA256 under a key derived (HKDF-SHA256) from the master key, so no separate secret is configured and a token
 * cannot be forged or replayed after its expiry. Source: RFC 6749 §10.12 (state against CSRF), RFC 5869 (HKDF),
 * RFC 2104 (HMAC).
 */

/** Why a state token was refused. */
export type StateRejection = 'malformed' | 'bad-signature' | 'expired';

function stateKey(kek: KeyEncryptionKey): Buffer {
  return Buffer.from(hkdfSync('sha256', kek.key, Buffer.alloc(0), 'vigil consent state v1', 32));
}

/** Signs `data` with an expiry `ttlSeconds` from `now` and a random nonce. */
export function signState(kek: KeyEncryptionKey, data: Record<string, string>, ttlSeconds: number, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ ...data, exp: Math.floor(now / 1000) + ttlSeconds, n: randomBytes(9).toString('base64url') })).toString(
    'base64url',
  );
  const signature = createHmac('sha256', stateKey(kek)).update(payload).digest('base64url');
  return `${payload}.${signature}`;
}

/** Checks a state token; returns its data or why it was refused. */
export function verifyState(
  kek: KeyEncryptionKey,
  token: string | undefined,
  now = Date.now(),
): { ok: true; data: Record<string, string> } | { ok: false; reason: StateRejection } {
  const [payload, signature, extra] = (token ?? '').split('.');
  if (!payload || !signature || extra !== undefined) return { ok: false, reason: 'malformed' };
  const expected = createHmac('sha256', stateKey(kek)).update(payload).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad-signature' };
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof data.exp !== 'number' || data.exp * 1000 < now) return { ok: false, reason: 'expired' };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) if (typeof v === 'string') out[k] = v;
  return { ok: true, data: out };
}
