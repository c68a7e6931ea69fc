import { exportJWK, generateKeyPair, SignJWT, type JSONWebKeySet, type JWTPayload } from 'jose';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import { beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_CLOUD } from '../../../src/config/cloud.ts';
import { CallerTokenRejected, TenantKeyCache, validateCallerToken, type CallerTokenRejection } from '../../../src/platform/identity/callerToken.ts';

const TENANT = '11111111-1111-4111-8111-111111111111';
const OTHER_TENANT = '33333333-3333-4333-8333-333333333333';
const APP = '22222222-2222-4222-8222-222222222222';
const BASE = 'https://vigil.example.test/protection/pe_abc';

let keys: { privateKey: SigningKey; jwks: JSONWebKeySet };
let rogue: SigningKey;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', use: 'sig', alg: 'RS256' };
  keys = { privateKey: pair.privateKey, jwks: { keys: [jwk] } };
  rogue = (await generateKeyPair('RS256')).privateKey;
});

/** A v2.0 app token of the tenant for the endpoint, with claims overridden. */
async function token(claims: JWTPayload = {}, options: { key?: SigningKey; kid?: string; expSeconds?: number } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tid: TENANT, azp: APP, oid: 'sp-oid', iss: `${PUBLIC_CLOUD.authorityHost}/${TENANT}/v2.0`, aud: BASE, ver: '2.0', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? 'k1', typ: 'JWT' })
    .setIssuedAt(now - 60)
    .setNotBefore(now - 60)
    .setExpirationTime(now + (options.expSeconds ?? 3600))
    .sign(options.key ?? keys.privateKey);
}

function cache(counter = { reads: 0 }, now = () => Date.now()) {
  return new TenantKeyCache(async (tenant) => {
    counter.reads++;
    if (tenant !== TENANT) throw new Error('unknown tenant');
    return keys.jwks;
  }, now);
}

async function reason(authorization: string | undefined, c = cache()): Promise<CallerTokenRejection | 'accepted'> {
  try {
    await validateCallerToken({ cloud: PUBLIC_CLOUD, keys: c, authorization, tenantId: TENANT, appId: APP, audiences: [APP, `api://${APP}`, BASE] });
    return 'accepted';
  } catch (e) {
    if (e instanceof CallerTokenRejected) {
      expect(e.message).not.toContain(authorization?.slice(7, 40) ?? '\u0001');
      return e.reason;
    }
    throw e;
  }
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('validateCallerToken', () => {
  it('accepts a v2.0 token of the tenant for the app and the base URL, and a v1.0 one for api://{app}', async () => {
    const identity = await validateCallerToken({
      cloud: PUBLIC_CLOUD,
      keys: cache(),
      authorization: `Bearer ${await token()}`,
      tenantId: TENANT,
      appId: APP,
      audiences: [BASE],
    });
    expect(identity).toEqual({ tenantId: TENANT, appId: APP, objectId: 'sp-oid' });
    const v1 = await token({ iss: `https://sts.windows.net/${TENANT}/`, azp: undefined, appid: APP, aud: `api://${APP}`, ver: '1.0' });
    expect(await reason(`Bearer ${v1}`)).toBe('accepted');
    // A trailing slash on the audience is the same URL.
    expect(await reason(`Bearer ${await token({ aud: `${BASE}/` })}`)).toBe('accepted');
  });

  it('refuses each failed check with its reason', async () => {
    expect(await reason(undefined)).toBe('missing');
    expect(await reason('Basic dXNlcjpwYXNz')).toBe('malformed');
    expect(await reason('Bearer not-a-jwt')).toBe('malformed');
    expect(await reason(`Bearer ${await token({ tid: OTHER_TENANT, iss: `https://sts.windows.net/${OTHER_TENANT}/` })}`)).toBe('tenant');
    expect(await reason(`Bearer ${await token({ iss: `https://sts.windows.net/${OTHER_TENANT}/` })}`)).toBe('issuer');
    expect(await reason(`Bearer ${await token({ iss: `https://evil.example/${TENANT}/v2.0` })}`)).toBe('issuer');
    expect(await reason(`Bearer ${await token({ aud: 'https://graph.microsoft.com' })}`)).toBe('audience');
    expect(await reason(`Bearer ${await token({ azp: '44444444-4444-4444-8444-444444444444' })}`)).toBe('app');
    expect(await reason(`Bearer ${await token({}, { expSeconds: -301 })}`)).toBe('expired');
    // Within the 300 s skew it is still accepted.
    expect(await reason(`Bearer ${await token({}, { expSeconds: -200 })}`)).toBe('accepted');
    expect(await reason(`Bearer ${await token({}, { key: rogue })}`)).toBe('signature');
  });

  it('refuses unsigned, HMAC and tampered tokens as signature failures', async () => {
    const good = await token();
    const [, payload, signature] = good.split('.');
    expect(await reason(`Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`)).toBe('signature');
    const { SignJWT: Sign } = await import('jose');
    const hs = await new Sign({ tid: TENANT, azp: APP, aud: BASE, iss: `${PUBLIC_CLOUD.authorityHost}/${TENANT}/v2.0` })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!'));
    expect(await reason(`Bearer ${hs}`)).toBe('signature');
    const tampered = `${good.split('.')[0]}.${b64({ tid: TENANT, azp: APP, aud: BASE, iss: `${PUBLIC_CLOUD.authorityHost}/${TENANT}/v2.0`, exp: 9999999999, admin: true })}.${signature}`;
    expect(await reason(`Bearer ${tampered}`)).toBe('signature');
  });

  it('reports keys it cannot read as keys, without a token in the message', async () => {
    const broken = new TenantKeyCache(async () => {
      throw new Error('network down');
    });
    expect(await reason(`Bearer ${await token()}`, broken)).toBe('keys');
  });

  it('remembers a verified token by its whole text: the same signature on other claims, or the token once expired, is refused', async () => {
    const c = cache();
    const good = await token({}, { expSeconds: 3600 });
    expect(await reason(`Bearer ${good}`, c)).toBe('accepted');
    expect(await reason(`Bearer ${good}`, c)).toBe('accepted');
    // Claims swapped under the remembered signature: a miss, verified anew, refused.
    const [header, , signature] = good.split('.');
    const forged = `${header}.${b64({ tid: TENANT, iss: `https://sts.windows.net/${TENANT}/`, aud: BASE, appid: APP, exp: 9_999_999_999 })}.${signature}`;
    expect(await reason(`Bearer ${forged}`, c)).toBe('signature');
    // A remembered token still expires: its exp is checked on every call (here two hours later).
    const later = validateCallerToken({
      cloud: PUBLIC_CLOUD,
      keys: c,
      authorization: `Bearer ${good}`,
      tenantId: TENANT,
      appId: APP,
      audiences: [BASE],
      now: new Date(Date.now() + 2 * 3600_000),
    });
    await expect(later).rejects.toMatchObject({ reason: 'expired' });
  });

  it('caches keys per tenant and reads them again on an unknown kid at most every 5 minutes', async () => {
    const counter = { reads: 0 };
    let now = 1_000_000;
    const c = cache(counter, () => now);
    expect(await reason(`Bearer ${await token()}`, c)).toBe('accepted');
    expect(await reason(`Bearer ${await token()}`, c)).toBe('accepted');
    expect(counter.reads).toBe(1);
    // An unknown kid within 5 minutes of the last read: no new read, refused.
    now += 60_000;
    expect(await reason(`Bearer ${await token({}, { kid: 'k-new' })}`, c)).toBe('signature');
    expect(counter.reads).toBe(1);
    // After 5 minutes an unknown kid reads the keys again (once).
    now += 5 * 60_000;
    expect(await reason(`Bearer ${await token({}, { kid: 'k-new' })}`, c)).toBe('signature');
    expect(counter.reads).toBe(2);
    // After an hour the keys are read again anyway.
    now += 60 * 60_000;
    expect(await reason(`Bearer ${await token()}`, c)).toBe('accepted');
    expect(counter.reads).toBe(3);
  });
});
