/**
 * Access-token issuing and validation (v1.0 app-only and user tokens signed RS256 with the emulator key).
 *
 * Claims follow https://learn.microsoft.com/entra/identity-platform/access-token-claims-reference (reference §1.8):
 * app tokens carry `roles` (omitted when nothing is granted for the resource), `appid`/`azp`, `appidacr: "1"`,
 * `idtyp: "app"`, `oid` = `sub` = the service principal object id, `iss` = `https://sts.windows.net/{tid}/`.
 */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomBytes } from 'node:crypto';
import type { SigningMaterial } from './keys.ts';
import type { AppRegistration, DirectoryUser, Tenant } from './tenant.ts';

/** Default `expires_in` of issued tokens, seconds (what Entra answers for client credentials). */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 3599;

/** First-party client id used as `appid` of minted user tokens (Azure PowerShell; reference §3.1). */
const USER_TOKEN_CLIENT_ID = '1950a258-227b-4e31-a9cf-717495945fc2';

const VERIFIED_CACHE_LIMIT = 10_000;

/** Decoded claims of an emulator access token. Times are epoch seconds. */
export interface AccessTokenClaims {
  aud: string;
  iss: string;
  iat: number;
  nbf: number;
  exp: number;
  ver: '1.0';
  tid: string;
  oid: string;
  sub: string;
  idtyp: 'app' | 'user';
  appid: string;
  azp?: string;
  appidacr: string;
  idp?: string;
  roles?: string[];
  scp?: string;
  upn?: string;
  unique_name?: string;
  name?: string;
  /** User tokens: the signed-in user's directory role template ids (absent when none). */
  wids?: string[];
  /** User tokens from the password (`pwd`) and device-code (`pwd`, `mfa`) grants: authentication methods. */
  amr?: string[];
  uti: string;
}

/** Why a token was refused by `TokenService.verify`. */
type TokenRejection = 'missing' | 'malformed' | 'signature' | 'expired' | 'not-yet-valid';

/** Result of `TokenService.verify`. */
export type VerifyResult = { ok: true; claims: AccessTokenClaims } | { ok: false; reason: TokenRejection };

/** Options of `TokenService.mint` beyond the subject. */
export interface MintOptions {
  /** Token audience (resource identifier, no trailing slash). */
  resource: string;
  /** Seconds from now until `exp`; may be negative for an already expired token. Default: the service lifetime. */
  expiresInSeconds?: number;
  /** Override the `roles` claim of an app token (default: the app's grantedRoles for the resource). */
  roles?: string[];
  /** User tokens: the client the user signed in with (`appid`). Default `USER_TOKEN_CLIENT_ID` (Azure PowerShell). */
  clientId?: string;
  /** User tokens: the `scp` claim. Default `user_impersonation`. */
  scp?: string;
  /** User tokens: `amr` (authentication methods), e.g. `['pwd']`. Omitted by default. */
  amr?: string[];
}

/** Options of `TokenService.issueIdToken`. */
export interface IdTokenOptions {
  /** The `nonce` of the authorize request, echoed as a claim. */
  nonce?: string | undefined;
  /** Emit `wids` (the client's `groupMembershipClaims` includes directory roles). */
  wids?: boolean;
  /** Seconds until `exp` (negative: already expired). Default: the service lifetime. */
  expiresInSeconds?: number;
}

/** Signs and verifies access tokens. The lifetime is mutable at run time (`setLifetime`). */
export class TokenService {
  readonly #keys: SigningMaterial;
  readonly #verified = new Map<string, AccessTokenClaims>();
  #lifetime: number;

  /**
   * @param keys signing material from `generateSigningMaterial`.
   * @param lifetimeSeconds default token lifetime (`expires_in`), seconds, ≥ 1.
   */
  constructor(keys: SigningMaterial, lifetimeSeconds = DEFAULT_TOKEN_LIFETIME_SECONDS) {
    this.#keys = keys;
    this.#lifetime = lifetimeSeconds;
  }

  /** Current lifetime of issued tokens, seconds. */
  get lifetimeSeconds(): number {
    return this.#lifetime;
  }

  /** Sets the lifetime of tokens issued from now on (seconds, integer ≥ 1); throws RangeError otherwise. */
  setLifetime(seconds: number): void {
    if (!Number.isInteger(seconds) || seconds < 1) throw new RangeError(`token lifetime must be an integer ≥ 1, got ${String(seconds)}`);
    this.#lifetime = seconds;
  }

  /** The public JWKS document (`{"keys":[…]}`) for an issuer. */
  jwks(issuer: string): { keys: Record<string, unknown>[] } {
    const k = this.#keys;
    return { keys: [{ kty: 'RSA', use: 'sig', kid: k.kid, x5t: k.x5t, n: k.n, e: k.e, x5c: k.x5c, issuer }] };
  }

  /**
   * Issues an app-only token for `app` in `tenant` (client-credentials grant). `roles` = the app's grantedRoles for the
   * resource (the claim is omitted when empty). Returns the compact JWT and its lifetime in seconds.
   */
  async issueAppToken(tenant: Tenant, app: AppRegistration, options: MintOptions): Promise<{ token: string; expiresIn: number }> {
    const roles = options.roles ?? grantedRolesFor(app, options.resource);
    const claims: Record<string, unknown> = {
      aud: options.resource,
      iss: `https://sts.windows.net/${tenant.id}/`,
      idp: `https://sts.windows.net/${tenant.id}/`,
      appid: app.appId,
      azp: app.appId,
      appidacr: '1',
      idtyp: 'app',
      oid: app.servicePrincipalObjectId,
      sub: app.servicePrincipalObjectId,
      tid: tenant.id,
      ver: '1.0',
      uti: randomBytes(16).toString('base64url').slice(0, 22),
    };
    if (roles.length > 0) claims.roles = [...roles];
    return this.#sign(claims, options.expiresInSeconds);
  }

  /**
   * Issues a delegated (user) token for `user` in `tenant`, as an administrator signed in with Azure PowerShell would
   * get: `idtyp: "user"`, `scp` (default `user_impersonation`), `upn`, `name`, `oid` = the user's object id, `appid` =
   * `options.clientId` (default Azure PowerShell), `wids` = the user's `directoryRoles` (omitted when none).
   */
  async issueUserToken(tenant: Tenant, user: DirectoryUser, options: MintOptions): Promise<{ token: string; expiresIn: number }> {
    const claims: Record<string, unknown> = {
      aud: options.resource,
      iss: `https://sts.windows.net/${tenant.id}/`,
      idp: `https://sts.windows.net/${tenant.id}/`,
      appid: options.clientId ?? USER_TOKEN_CLIENT_ID,
      appidacr: '0',
      idtyp: 'user',
      oid: user.id,
      sub: randomBytes(32).toString('base64url').slice(0, 43),
      tid: tenant.id,
      ver: '1.0',
      scp: options.scp ?? 'user_impersonation',
      upn: user.userPrincipalName,
      unique_name: user.userPrincipalName,
      name: user.displayName,
      uti: randomBytes(16).toString('base64url').slice(0, 22),
    };
    if (options.amr && options.amr.length > 0) claims.amr = [...options.amr];
    if (user.directoryRoles && user.directoryRoles.length > 0) claims.wids = [...user.directoryRoles];
    if (options.roles && options.roles.length > 0) claims.roles = [...options.roles];
    return this.#sign(claims, options.expiresInSeconds);
  }

  /**
   * Issues a v2.0 ID token for a signed-in user (https://learn.microsoft.com/entra/identity-platform/id-token-claims-reference):
   * `iss` = `issuer` (`{authority host}/{tid}/v2.0`), `aud` = the client id, `oid`, `sub`, `tid`, `name`,
   * `preferred_username`, `ver: "2.0"`, plus `nonce` when the authorize request sent one and `wids` (the user's
   * directory role template ids, omitted when none) when the client's manifest asks for directory roles.
   */
  async issueIdToken(issuer: string, tenant: Tenant, user: DirectoryUser, clientId: string, options: IdTokenOptions = {}): Promise<string> {
    const claims: Record<string, unknown> = {
      aud: clientId,
      iss: issuer,
      name: user.displayName,
      oid: user.id,
      preferred_username: user.userPrincipalName,
      sub: user.id.replace(/-/g, '').slice(0, 22),
      tid: tenant.id,
      ver: '2.0',
      uti: randomBytes(16).toString('base64url').slice(0, 22),
    };
    if (options.nonce !== undefined) claims.nonce = options.nonce;
    if (options.wids && user.directoryRoles && user.directoryRoles.length > 0) claims.wids = [...user.directoryRoles];
    return (await this.#sign(claims, options.expiresInSeconds)).token;
  }

  /**
   * Verifies signature (RS256, emulator key), `exp` and `nbf` with no clock skew. Audience and tenant are checked by
   * the caller, which knows what it serves.
   */
  async verify(token: string | null): Promise<VerifyResult> {
    if (!token) return { ok: false, reason: 'missing' };
    // Signatures are checked once per token; lifetime is checked on every use (keeps benchmarks CPU-light).
    const cached = this.#verified.get(token);
    if (cached) {
      const now = Math.floor(Date.now() / 1000);
      if (now >= cached.exp) return { ok: false, reason: 'expired' };
      if (now < cached.nbf) return { ok: false, reason: 'not-yet-valid' };
      return { ok: true, claims: cached };
    }
    try {
      const { payload } = await jwtVerify(token, this.#keys.publicKey, { algorithms: ['RS256'] });
      if (typeof payload.aud !== 'string' || typeof payload.tid !== 'string' || typeof payload.appid !== 'string') {
        return { ok: false, reason: 'malformed' };
      }
      const claims = payload as unknown as AccessTokenClaims;
      if (this.#verified.size >= VERIFIED_CACHE_LIMIT) this.#verified.clear();
      this.#verified.set(token, claims);
      return { ok: true, claims };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
      if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'nbf') return { ok: false, reason: 'not-yet-valid' };
      if (err instanceof joseErrors.JWSSignatureVerificationFailed) return { ok: false, reason: 'signature' };
      return { ok: false, reason: 'malformed' };
    }
  }

  async #sign(claims: Record<string, unknown>, expiresInSeconds: number | undefined): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(Date.now() / 1000);
    const lifetime = expiresInSeconds ?? this.#lifetime;
    const exp = now + lifetime;
    const iat = Math.min(now, exp - 60);
    const token = await new SignJWT({ ...claims, iat, nbf: iat, exp })
      .setProtectedHeader({ typ: 'JWT', alg: 'RS256', x5t: this.#keys.x5t, kid: this.#keys.kid })
      .sign(this.#keys.privateKey);
    return { token, expiresIn: lifetime };
  }
}

/**
 * The application permissions an app holds for a resource: exact key match on `grantedRoles`, ignoring a trailing
 * slash; BAP's two audiences share one entry.
 */
function grantedRolesFor(app: AppRegistration, resource: string): string[] {
  const norm = (r: string): string => r.replace(/\/+$/, '').toLowerCase();
  const target = norm(resource);
  const aliases = new Set([target]);
  if (target === 'https://service.powerapps.com') aliases.add('https://api.bap.microsoft.com');
  if (target === 'https://api.bap.microsoft.com') aliases.add('https://service.powerapps.com');
  const out: string[] = [];
  for (const [r, roles] of Object.entries(app.grantedRoles)) {
    if (aliases.has(norm(r))) for (const role of roles) if (!out.includes(role)) out.push(role);
  }
  return out;
}
