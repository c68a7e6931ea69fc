import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet } from 'jose';
import type { CloudProfile } from '../../config/cloud.ts';
import { VigilError } from '../../core/errors.ts';
import type { HttpClient } from '../http/client.ts';
import { fetchTenantKeys, TenantKeysUnavailable } from './callerToken.ts';
import { aadstsError, PipelineNetworkModule, type CertificateCredential } from './index.ts';

/**
 * The administrator's OpenID Connect sign-in that proves a tenant (Mode B): the authorization-code flow with PKCE and a
 * nonce, the code redeemed by the managed application (confidential client, through MSAL and Vigil's HTTP pipeline),
 * and the ID token validated here — signature against the tenant's published keys, issuer, audience, lifetime, nonce,
 * tenant, and a directory role that may grant tenant-wide admin consent in `wids`.
 *
 * Sources: Microsoft identity platform "OpenID Connect on the Microsoft identity platform"
 * (https://learn.microsoft.com/entra/identity-platform/v2-protocols-oidc: `response_type=code`, `scope=openid profile`,
 * `nonce`, the tenant's discovery document and its `jwks_uri`, `iss` = `{authority}/{tid}/v2.0`), "OAuth 2.0
 * authorization code flow" (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow:
 * `code_challenge`/`code_challenge_method=S256`, redemption with `code_verifier`), "ID token claims reference"
 * (https://learn.microsoft.com/entra/identity-platform/id-token-claims-reference: `aud` = the client id, `iss`, `tid`,
 * `oid`, `nonce`, `exp`, `preferred_username`), "Microsoft Entra built-in roles" (role template ids, below), and
 * RFC 7636 (PKCE).
 */

/**
 * Directory roles whose holders can grant tenant-wide admin consent to Microsoft Graph application permissions, by
 * role template id (https://learn.microsoft.com/entra/identity/role-based-access-control/permissions-reference, "All
 * roles" table). "Grant tenant-wide admin consent to an application" lists Cloud Application and Application
 * Administrators too, but they cannot consent to Graph *application* permissions, which Vigil's app needs: only a
 * Global or Privileged Role Administrator could have given the consent, so only they may bind a tenant.
 */
const CONSENT_ADMIN_ROLES: Readonly<Record<string, string>> = {
  '62e90394-69f5-4237-9190-012177145e10': 'Global Administrator',
  'e8611ab8-c189-46e8-94e1-60213ab1f814': 'Privileged Role Administrator',
};

/** A PKCE pair (RFC 7636 §4.1–4.2): a 43-character base64url verifier and its S256 challenge. */
export function newPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A random OIDC nonce (base64url, 128 bits). */
export function newNonce(): string {
  return randomBytes(16).toString('base64url');
}

/** Parameters of {@link authorizeUrl}. */
export interface AuthorizeRequest {
  tenantId: string;
  clientId: string;
  redirectUri: string;
  state: string;
  nonce: string;
  codeChallenge: string;
}

/**
 * `{authority}/{tenant}/oauth2/v2.0/authorize?client_id&response_type=code&redirect_uri&response_mode=query&scope=openid
 * profile&state&nonce&code_challenge&code_challenge_method=S256&prompt=select_account` — the tenant-specific endpoint,
 * so an account of another tenant cannot answer (it would be refused there, and its `tid` would not match anyway).
 */
export function authorizeUrl(cloud: CloudProfile, r: AuthorizeRequest): string {
  const q = new URLSearchParams({
    client_id: r.clientId,
    response_type: 'code',
    redirect_uri: r.redirectUri,
    response_mode: 'query',
    scope: 'openid profile',
    state: r.state,
    nonce: r.nonce,
    code_challenge: r.codeChallenge,
    code_challenge_method: 'S256',
    prompt: 'select_account',
  });
  return `${cloud.authorityHost}/${r.tenantId}/oauth2/v2.0/authorize?${q}`;
}

/** Parameters of {@link redeemAuthorizationCode}: the managed application's credential and the code. */
export interface CodeRedemption {
  cloud: CloudProfile;
  http: HttpClient;
  tenantId: string;
  clientId: string;
  clientSecret?: string | undefined;
  certificate?: CertificateCredential | undefined;
  code: string;
  redirectUri: string;
  codeVerifier: string;
  /** The nonce sent to the authorize endpoint (MSAL refuses an ID token whose `nonce` differs). */
  nonce: string;
}

/**
 * Redeems an authorization code at the tenant's token endpoint (MSAL `acquireTokenByCode`, network through Vigil's
 * pipeline) and returns the raw ID token. The access token that comes with it is not kept.
 * @throws VigilError `AADSTS<n>` when Entra ID refuses the code (reused, expired, wrong verifier); `ID_TOKEN_MISSING`.
 */
export async function redeemAuthorizationCode(r: CodeRedemption): Promise<string> {
  const authorityUrl = new URL(r.cloud.authorityHost);
  // MSAL is loaded here, on the sign-in that needs it, not when the module is (CLI start-up).
  const { ConfidentialClientApplication, LogLevel } = await import('@azure/msal-node');
  const app = new ConfidentialClientApplication({
    auth: {
      clientId: r.clientId,
      ...(r.certificate
        ? { clientCertificate: { privateKey: r.certificate.privateKey, thumbprintSha256: r.certificate.thumbprintSha256, x5c: r.certificate.certificatePem } }
        : { clientSecret: r.clientSecret }),
      authority: `${r.cloud.authorityHost}/${r.tenantId}`,
      ...(r.cloud.name === 'public' ? {} : { knownAuthorities: [authorityUrl.host] }),
    },
    system: {
      networkClient: new PipelineNetworkModule(r.http),
      loggerOptions: { logLevel: LogLevel.Error, piiLoggingEnabled: false, loggerCallback: () => undefined },
    },
  });
  let idToken: string | undefined;
  try {
    idToken = (
      await app.acquireTokenByCode(
        { code: r.code, scopes: ['openid', 'profile'], redirectUri: r.redirectUri, codeVerifier: r.codeVerifier, nonce: r.nonce },
        { code: r.code, nonce: r.nonce },
      )
    )?.idToken;
  } catch (e) {
    const err = e as { errorCode?: string; errorMessage?: string; message?: string };
    const text = `${err.errorMessage ?? ''} ${err.message ?? ''}`;
    const m = /AADSTS(\d+)/.exec(text);
    throw m
      ? aadstsError(m[1]!, text.slice(text.indexOf(`AADSTS${m[1]}`)), e)
      : new VigilError('TOKEN_REQUEST_FAILED', `The sign-in code could not be redeemed (${err.errorCode ?? 'no code'}).`, { cause: e });
  }
  if (!idToken) throw new VigilError('ID_TOKEN_MISSING', 'The token endpoint answered without an ID token.');
  return idToken;
}

/** What a validated ID token says about the administrator. */
export interface AdminIdentity {
  tid: string;
  oid: string;
  /** `preferred_username` (the UPN, usually), or '' when absent. */
  username: string;
  /** Names of the consent-capable directory roles held (from `wids`). */
  roles: string[];
}

/** Why an ID token was refused (for logs and tests; the page shows one fixed text). */
export type IdTokenRejection = 'discovery' | 'signature' | 'issuer' | 'audience' | 'expired' | 'nonce' | 'tenant' | 'claims' | 'no-roles-claim' | 'not-admin';

/** An ID token that did not prove anything; `reason` says which check failed. */
export class IdTokenRejected extends VigilError {
  constructor(
    readonly reason: IdTokenRejection,
    message: string,
  ) {
    super('ID_TOKEN_REJECTED', message, {
      remediation:
        'Open a new consent link and sign in as a Global Administrator, Privileged Role Administrator, Cloud Application Administrator or Application Administrator of the tenant.',
    });
  }
}

/** Parameters of {@link validateIdToken}. */
export interface IdTokenCheck {
  cloud: CloudProfile;
  http: HttpClient;
  tenantId: string;
  clientId: string;
  nonce: string;
  idToken: string;
  /** Clock skew allowed on `exp`/`nbf`/`iat`, seconds. @default 300 (MSAL's default skew) */
  clockToleranceSeconds?: number;
}

/**
 * Validates an ID token for the tenant: fetches the tenant's OpenID configuration and its `jwks_uri` through the
 * pipeline (the key set must be served by the cloud profile's authority host), verifies the RS256 signature (no other
 * algorithm, so `alg: none` and HMAC tokens fail), `iss` = `{authorityHost}/{tid}/v2.0` and equal to the discovery
 * document's issuer, `aud` = the managed application, `exp`/`nbf`, `nonce`, `tid` = the tenant, and `wids` holding one
 * of {@link CONSENT_ADMIN_ROLES}.
 *
 * `wids` is emitted in ID tokens only when the application asks for directory roles in its group claims
 * (app manifest `groupMembershipClaims` including `DirectoryRole`, or Token configuration > Add groups claim >
 * Directory roles; https://learn.microsoft.com/entra/identity-platform/reference-app-manifest): a token without the
 * claim is refused as `no-roles-claim`, naming that configuration.
 *
 * @throws IdTokenRejected (`authentication` / `ID_TOKEN_REJECTED`) with the failing check as `reason`.
 */
export async function validateIdToken(c: IdTokenCheck): Promise<AdminIdentity> {
  const tenantId = c.tenantId.toLowerCase();
  const expectedIssuer = `${c.cloud.authorityHost.replace(/\/+$/, '')}/${tenantId}/v2.0`;
  let jwks: JSONWebKeySet;
  try {
    jwks = await fetchTenantKeys(c.cloud, c.http, tenantId);
  } catch (e) {
    throw new IdTokenRejected('discovery', e instanceof TenantKeysUnavailable ? e.message : `The signing keys of tenant ${tenantId} could not be read.`);
  }
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(c.idToken, createLocalJWKSet(jwks), {
      algorithms: ['RS256'],
      issuer: expectedIssuer,
      audience: c.clientId,
      clockTolerance: c.clockToleranceSeconds ?? 300,
      requiredClaims: ['exp', 'iat', 'tid', 'oid', 'nonce'],
    }));
  } catch (e) {
    if (e instanceof joseErrors.JWTExpired) throw new IdTokenRejected('expired', 'The ID token has expired.');
    if (e instanceof joseErrors.JWTClaimValidationFailed) {
      if (e.claim === 'iss') throw new IdTokenRejected('issuer', 'The ID token was issued for another tenant.');
      if (e.claim === 'aud') throw new IdTokenRejected('audience', 'The ID token is for another application.');
      throw new IdTokenRejected('claims', `The ID token lacks or has an invalid '${e.claim}' claim.`);
    }
    throw new IdTokenRejected('signature', "The ID token is not signed by the tenant's published keys.");
  }
  if (payload.nonce !== c.nonce) throw new IdTokenRejected('nonce', 'The ID token was not issued for this sign-in (nonce).');
  if (typeof payload.tid !== 'string' || payload.tid.toLowerCase() !== tenantId)
    throw new IdTokenRejected('tenant', 'The ID token was issued by another tenant.');
  if (!Array.isArray(payload.wids)) {
    throw new IdTokenRejected(
      'no-roles-claim',
      'The ID token carries no directory roles (wids): the managed application must emit directory roles in its group claims (groupMembershipClaims "DirectoryRole").',
    );
  }
  const roles = payload.wids
    .filter((w): w is string => typeof w === 'string')
    .map((w) => CONSENT_ADMIN_ROLES[w.toLowerCase()])
    .filter((r): r is string => r !== undefined);
  if (roles.length === 0) throw new IdTokenRejected('not-admin', 'The account that signed in holds no role that can grant admin consent in the tenant.');
  return { tid: tenantId, oid: String(payload.oid), username: typeof payload.preferred_username === 'string' ? payload.preferred_username : '', roles };
}
