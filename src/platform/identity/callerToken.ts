import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { DEFAULT_V1_ISSUER_HOST, type CloudProfile } from '../../config/cloud.ts';
import { VigilError } from '../../core/errors.ts';
import type { HttpClient } from '../http/client.ts';

/**
 * Authentication of a caller that presents an Entra access token issued by a customer's tenant for the customer's own
 * application — Copilot Studio calling Vigil's threat-detection endpoints (issue 19) — and the tenant signing keys that
 * both this and the administrator's ID-token check (oidc.ts) read.
 *
 * Sources: "Access tokens in the Microsoft identity platform" (https://learn.microsoft.com/entra/identity-platform/access-tokens:
 * validate the signature with the tenant's keys from the OpenID configuration's `jwks_uri`, and `iss`, `aud`, `tid`,
 * `nbf`/`exp`), "Access token claims reference"
 * (https://learn.microsoft.com/entra/identity-platform/access-token-claims-reference: v1.0 `iss` =
 * `https://sts.windows.net/{tid}/` and `appid`, v2.0 `iss` = `{authority}/{tid}/v2.0` and `azp`; `aud` = the
 * application's client id or Application ID URI), "Signing key rollover"
 * (https://learn.microsoft.com/entra/identity-platform/signing-key-rollover: keys change; refresh on an unknown `kid`,
 * cache otherwise), https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers
 * (the webhook's `Authorization: Bearer`), ../shared/reference/threat-detection-webhook.md.
 */

/** The tenant's OpenID configuration could not give its keys (the message names the tenant, never a token). */
export class TenantKeysUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TenantKeysUnavailable';
  }
}

/**
 * Reads a tenant's published token-signing keys: `{authorityHost}/{tenant}/v2.0/.well-known/openid-configuration`, whose
 * `issuer` must be `{authorityHost}/{tenant}/v2.0` and whose `jwks_uri` must be served by the authority host, then that
 * key set — both through the HTTP pipeline (api `identity`).
 * @throws TenantKeysUnavailable when either cannot be read or the discovery document names another issuer or key host.
 */
export async function fetchTenantKeys(cloud: CloudProfile, http: HttpClient, tenantId: string): Promise<JSONWebKeySet> {
  const tenant = tenantId.toLowerCase();
  const authorityHost = cloud.authorityHost.replace(/\/+$/, '');
  const authority = new URL(authorityHost);
  let discovery: { issuer?: string; jwks_uri?: string } | undefined;
  try {
    discovery = (
      await http.send<{ issuer?: string; jwks_uri?: string }>({ api: 'identity', url: `${authorityHost}/${tenant}/v2.0/.well-known/openid-configuration` })
    ).body;
  } catch (e) {
    throw new TenantKeysUnavailable(`The signing keys of tenant ${tenant} could not be read.`, { cause: e });
  }
  if (discovery?.issuer !== `${authorityHost}/${tenant}/v2.0`)
    throw new TenantKeysUnavailable(`The OpenID configuration of tenant ${tenant} names another issuer.`);
  let jwksUri: URL;
  try {
    jwksUri = new URL(discovery.jwks_uri ?? '');
  } catch {
    throw new TenantKeysUnavailable(`The OpenID configuration of tenant ${tenant} has no valid jwks_uri.`);
  }
  if (jwksUri.origin !== authority.origin)
    throw new TenantKeysUnavailable(`The OpenID configuration of tenant ${tenant} points its keys outside ${authority.host}.`);
  try {
    const keys = (await http.send<JSONWebKeySet>({ api: 'identity', url: jwksUri.href })).body;
    if (!keys || !Array.isArray(keys.keys)) throw new Error('no keys array');
    return keys;
  } catch (e) {
    throw new TenantKeysUnavailable(`The signing keys of tenant ${tenant} could not be read.`, { cause: e });
  }
}

/** Why a caller's token was refused. */
export type CallerTokenRejection = 'missing' | 'malformed' | 'keys' | 'signature' | 'issuer' | 'tenant' | 'audience' | 'app' | 'expired';

/** A caller's token that proves nothing; `reason` names the failed check. The message never holds the token. */
export class CallerTokenRejected extends VigilError {
  constructor(
    readonly reason: CallerTokenRejection,
    message: string,
  ) {
    super('CALLER_TOKEN_REJECTED', message);
  }
}

/** Verified tokens remembered per key cache (about 2 KB each). */
const VERIFIED_TOKENS_MAX = 5000;

/** Default lifetime of a tenant's cached key set, milliseconds (1 hour). */
const KEYS_TTL_MS = 60 * 60 * 1000;
/** Least time between two reads of a tenant's keys caused by an unknown `kid`, milliseconds (5 minutes). */
const KEYS_MIN_REFRESH_MS = 5 * 60 * 1000;

interface CachedKeys {
  keys: JSONWebKeySet;
  verifier: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

/**
 * Signing keys per tenant, cached for an hour and read again on a token whose `kid` is unknown at most every five
 * minutes (keys roll over; a flood of forged `kid`s must not become a flood of requests to Entra ID). Concurrent
 * callers of one tenant share a read in flight.
 */
export class TenantKeyCache {
  readonly #entries = new Map<string, CachedKeys>();
  readonly #inFlight = new Map<string, Promise<CachedKeys>>();
  /** Tokens whose signature was verified, by their signature segment: the whole token and its claims. */
  readonly #verified = new Map<string, { tenant: string; token: string; payload: JWTPayload; keysAt: number }>();

  /**
   * The claims of `token` when its signature was already verified with `tenant`'s keys (Copilot Studio presents the
   * same token for its lifetime: verifying RS256 once per token, not once per call). The whole token must be the one
   * verified, so a reused signature with other claims is no hit; and the tenant's key set must be the one it was
   * verified with and still fresh, so a key Entra ID withdrew stops being trusted when the keys are read again. Expiry
   * is checked by the caller every time.
   */
  verified(tenant: string, token: string): JWTPayload | undefined {
    const hit = this.#verified.get(token.slice(token.lastIndexOf('.') + 1));
    const keys = this.#entries.get(tenant);
    if (!hit || !keys || hit.tenant !== tenant || hit.token !== token) return undefined;
    return hit.keysAt === keys.fetchedAt && this.now() - keys.fetchedAt < this.ttlMs ? hit.payload : undefined;
  }

  /** Remembers a token verified with `tenant`'s keys (at most {@link VERIFIED_TOKENS_MAX}; the oldest go first). */
  rememberVerified(tenant: string, token: string, payload: JWTPayload): void {
    if (this.#verified.size >= VERIFIED_TOKENS_MAX) this.#verified.delete(this.#verified.keys().next().value!);
    const keysAt = this.#entries.get(tenant)?.fetchedAt;
    if (keysAt !== undefined) this.#verified.set(token.slice(token.lastIndexOf('.') + 1), { tenant, token, payload, keysAt });
  }

  /**
   * @param fetchKeys reads a tenant's key set (default: {@link fetchTenantKeys}).
   * @param now the clock, milliseconds since the epoch (tests move it).
   */
  constructor(
    private readonly fetchKeys: (tenantId: string) => Promise<JSONWebKeySet>,
    private readonly now: () => number = Date.now,
    private readonly ttlMs = KEYS_TTL_MS,
    private readonly minRefreshMs = KEYS_MIN_REFRESH_MS,
  ) {}

  /** A cache that reads keys through the pipeline from the profile's authority. */
  static forCloud(cloud: CloudProfile, http: HttpClient, now: () => number = Date.now): TenantKeyCache {
    return new TenantKeyCache((tenantId) => fetchTenantKeys(cloud, http, tenantId), now);
  }

  /** The tenant's keys: cached unless older than the TTL, or read again when `unknownKid` and the last read is old enough. */
  async get(tenantId: string, unknownKid = false): Promise<CachedKeys> {
    const tenant = tenantId.toLowerCase();
    const entry = this.#entries.get(tenant);
    const age = entry ? this.now() - entry.fetchedAt : Infinity;
    if (entry && age < this.ttlMs && !(unknownKid && age >= this.minRefreshMs)) return entry;
    let pending = this.#inFlight.get(tenant);
    if (!pending) {
      pending = this.fetchKeys(tenant)
        .then((keys) => {
          const fresh = { keys, verifier: createLocalJWKSet(keys), fetchedAt: this.now() };
          this.#entries.set(tenant, fresh);
          return fresh;
        })
        .finally(() => this.#inFlight.delete(tenant));
      this.#inFlight.set(tenant, pending);
    }
    try {
      return await pending;
    } catch (e) {
      // A failed refresh keeps the keys already known (Entra ID briefly unreachable must not refuse every call).
      if (entry) return entry;
      throw e;
    }
  }
}

/** What a caller's token must prove. */
export interface CallerTokenCheck {
  cloud: CloudProfile;
  keys: TenantKeyCache;
  /** The `Authorization` header as received (`Bearer <token>`), or undefined. */
  authorization: string | undefined;
  /** The tenant the endpoint serves (the integration's): `tid` and the issuer's tenant. */
  tenantId: string;
  /** The customer's application (client) id: `appid` (v1.0) or `azp` (v2.0). */
  appId: string;
  /** Accepted `aud` values (compared exactly, and without a trailing slash). */
  audiences: readonly string[];
  /** Clock skew allowed on `exp`/`nbf`, seconds. @default 300 */
  clockToleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date;
}

/** Who called, from a validated token. */
export interface CallerIdentity {
  tenantId: string;
  appId: string;
  /** `oid`: the application's service principal in the tenant ('' when absent). */
  objectId: string;
}

const claimString = (p: JWTPayload, name: string): string => (typeof p[name] === 'string' ? (p[name] as string) : '');
const bare = (s: string) => s.replace(/\/+$/, '').toLowerCase();

/**
 * Validates the bearer token of a caller: an RS256 signature by one of the tenant's published keys (`alg: none`, HMAC
 * and any other algorithm are refused), `tid` = the endpoint's tenant, `iss` = `{authorityHost}/{tid}/v2.0` or the v1.0
 * issuer `{v1IssuerHost}/{tid}/`, `aud` one of `audiences`, `appid`/`azp` = `appId`, `exp`/`nbf` within the skew.
 * @throws CallerTokenRejected (`authentication` / `CALLER_TOKEN_REJECTED`) whose `reason` names the failed check.
 */
export async function validateCallerToken(c: CallerTokenCheck): Promise<CallerIdentity> {
  const header = c.authorization?.trim();
  if (!header) throw new CallerTokenRejected('missing', 'The call carries no Authorization header.');
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) throw new CallerTokenRejected('malformed', 'The Authorization header is not a bearer token.');
  const token = m[1]!;
  let kid: string | undefined;
  try {
    const h = decodeProtectedHeader(token);
    if (h.alg !== 'RS256') throw new CallerTokenRejected('signature', `The token is not signed with RS256 (alg ${String(h.alg).slice(0, 16)}).`);
    kid = h.kid;
  } catch (e) {
    if (e instanceof CallerTokenRejected) throw e;
    throw new CallerTokenRejected('malformed', 'The bearer token is not a JSON Web Token.');
  }
  if (token.split('.').length !== 3) throw new CallerTokenRejected('malformed', 'The bearer token is not a signed JSON Web Token.');
  const tenant = c.tenantId.toLowerCase();
  const verify = async (unknownKid: boolean) => {
    let keys: CachedKeys;
    try {
      keys = await c.keys.get(tenant, unknownKid);
    } catch {
      throw new CallerTokenRejected('keys', `The signing keys of tenant ${tenant} could not be read.`);
    }
    return jwtVerify(token, keys.verifier, {
      algorithms: ['RS256'],
      clockTolerance: c.clockToleranceSeconds ?? 300,
      requiredClaims: ['exp'],
      ...(c.now ? { currentDate: c.now } : {}),
    });
  };
  let payload: JWTPayload;
  const remembered = c.keys.verified(tenant, token);
  try {
    if (remembered) {
      // Verified before: only its validity period is checked again (as jwtVerify does, with the same tolerance).
      const now = Math.floor((c.now ?? new Date()).getTime() / 1000);
      const tolerance = c.clockToleranceSeconds ?? 300;
      if (typeof remembered.exp === 'number' && now - tolerance >= remembered.exp) throw new CallerTokenRejected('expired', 'The token has expired.');
      if (typeof remembered.nbf === 'number' && now + tolerance < remembered.nbf)
        throw new CallerTokenRejected('expired', "The token is not valid at this time ('nbf').");
      payload = remembered;
    } else {
      try {
        ({ payload } = await verify(false));
      } catch (e) {
        if (!(e instanceof joseErrors.JWKSNoMatchingKey) || !kid) throw e;
        ({ payload } = await verify(true));
      }
      c.keys.rememberVerified(tenant, token, payload);
    }
  } catch (e) {
    if (e instanceof CallerTokenRejected) throw e;
    if (e instanceof joseErrors.JWTExpired) throw new CallerTokenRejected('expired', 'The token has expired.');
    if (e instanceof joseErrors.JWTClaimValidationFailed) {
      if (e.claim === 'nbf' || e.claim === 'exp') throw new CallerTokenRejected('expired', `The token is not valid at this time ('${e.claim}').`);
      throw new CallerTokenRejected('malformed', `The token lacks or has an invalid '${e.claim}' claim.`);
    }
    if (e instanceof joseErrors.JWTInvalid) throw new CallerTokenRejected('malformed', 'The token claims are not valid JSON.');
    throw new CallerTokenRejected('signature', "The token is not signed by the tenant's published keys.");
  }
  const tid = claimString(payload, 'tid').toLowerCase();
  if (tid !== tenant) throw new CallerTokenRejected('tenant', "The token was issued by another tenant than the endpoint's.");
  const iss = claimString(payload, 'iss');
  const v1 = `${(c.cloud.v1IssuerHost ?? DEFAULT_V1_ISSUER_HOST).replace(/\/+$/, '')}/${tenant}/`;
  const v2 = `${c.cloud.authorityHost.replace(/\/+$/, '')}/${tenant}/v2.0`;
  if (iss.toLowerCase() !== v1 && iss.toLowerCase() !== v2) throw new CallerTokenRejected('issuer', 'The token was issued by another issuer than the tenant.');
  const audiences = new Set(c.audiences.map(bare));
  const aud = payload.aud;
  const audList = Array.isArray(aud) ? aud : typeof aud === 'string' ? [aud] : [];
  if (!audList.some((a) => audiences.has(bare(a)))) throw new CallerTokenRejected('audience', 'The token is for another audience than this endpoint.');
  const appId = (claimString(payload, 'appid') || claimString(payload, 'azp')).toLowerCase();
  if (appId !== c.appId.toLowerCase())
    throw new CallerTokenRejected('app', 'The token was issued to another application than the one configured for this endpoint.');
  return { tenantId: tid, appId, objectId: claimString(payload, 'oid') };
}
