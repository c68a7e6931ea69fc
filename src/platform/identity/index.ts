import type { ConfidentialClientApplication, Configuration, INetworkModule, NetworkRequestOptions, NetworkResponse } from '@azure/msal-node';
import { X509Certificate } from 'node:crypto';
import { decodeJwt } from 'jose';
import { type ErrorText, VigilError } from '../../core/errors.ts';
import { text } from '../../core/json.ts';
import type { CloudProfile } from '../../config/cloud.ts';
import { type HttpClient, UpstreamHttpError } from '../http/client.ts';

/**
 * Tokens for the service principal: the OAuth 2.0 client-credentials grant through MSAL (`@azure/msal-node`),
 * with MSAL's network calls sent through Vigil's HTTP pipeline (so the profile's CA is trusted explicitly and
 * retries are shared), plus OpenID discovery to resolve and check a tenant.
 *
 * Sources: Microsoft identity platform "OAuth 2.0 client credentials flow" (`v2-oauth2-client-creds-grant-flow.md`:
 * `scope={resource}/.default`, no refresh token), "Access token claims reference" (`roles`, `oid`, `tid`, `appid`,
 * `azp`), "AADSTS error codes" (`reference-error-codes.md`), OpenID Connect discovery (`v2-protocols-oidc.md`).
 */

/** The claims Vigil reads from an app-only access token. */
interface AccessTokenClaims {
  /** Audience: the resource the token is for. */
  aud: string;
  /** Tenant id. */
  tid: string;
  /** Object ID of the service principal in the tenant. */
  oid: string;
  /** Application (client) ID (`appid` in v1 tokens, `azp` in v2). */
  appId: string;
  /** Application permissions granted for this resource (empty when none). */
  roles: string[];
  /** Expiry, seconds since the Unix epoch. */
  exp: number;
}

/** A token and what it says. The token itself must never be logged or stored. */
export interface AcquiredToken {
  accessToken: string;
  claims: AccessTokenClaims;
}

/** The claims of the tokens decoded last (MSAL hands out the same cached token for every request of a run). */
const decoded = new Map<string, AccessTokenClaims>();

/**
 * Decodes (does not verify: the token is our own, fresh from the token endpoint) the claims Vigil relies on. The
 * claims of the last 8 tokens are kept: every request of a collection asks for its token (measured: decoding it
 * again each time was 85 ms of CPU in a 5,000-user collection).
 */
function readClaims(accessToken: string): AccessTokenClaims {
  let claims = decoded.get(accessToken);
  if (!claims) {
    if (decoded.size >= 8) decoded.delete(decoded.keys().next().value!);
    decoded.set(accessToken, (claims = decodeClaims(accessToken)));
  }
  return claims;
}

function decodeClaims(accessToken: string): AccessTokenClaims {
  const c = decodeJwt(accessToken) as Record<string, unknown>;
  return {
    aud: text(c.aud),
    tid: text(c.tid),
    oid: text(c.oid),
    appId: text(c.appid) || text(c.azp),
    roles: Array.isArray(c.roles) ? c.roles.filter((r): r is string => typeof r === 'string') : [],
    exp: typeof c.exp === 'number' ? c.exp : 0,
  };
}

/** The claims Vigil reads from a delegated (user) token. */
export interface UserTokenClaims {
  tid: string;
  /** Object ID of the signed-in user. */
  oid: string;
  upn: string;
  /** Directory role template ids of the user (`wids`). */
  wids: string[];
  /** Delegated permissions granted in the token (`scp`, split on spaces); empty when absent. */
  scp: string[];
  /** `idtyp` (`user` or `app`) when the token carries it. */
  idtyp?: string;
}

/** Decodes a user token's claims (not verified: the token comes straight from the token endpoint). */
export function readUserClaims(accessToken: string): UserTokenClaims {
  const c = decodeJwt(accessToken) as Record<string, unknown>;
  return {
    tid: text(c.tid),
    oid: text(c.oid),
    upn: text(c.upn) || text(c.preferred_username) || text(c.unique_name),
    wids: Array.isArray(c.wids) ? c.wids.filter((w): w is string => typeof w === 'string') : [],
    scp: text(c.scp)
      .split(' ')
      .filter((p) => p.length > 0),
    ...(typeof c.idtyp === 'string' ? { idtyp: c.idtyp } : {}),
  };
}

/**
 * Remediation text per AADSTS code the client-credentials grant meets (reference-error-codes.md); each code's kind
 * is the catalogue's.
 */
const AADSTS_HELP: Record<string, { field?: string; message: string; remediation: ErrorText }> = {
  '7000215': {
    field: 'clientSecret',
    message: 'The client secret was rejected (AADSTS7000215). Vigil needs the secret VALUE, not the secret ID.',
    remediation:
      'In the Microsoft Entra admin center open App registrations > your app > Certificates & secrets, create a new client secret and copy its Value column (shown once), not the Secret ID.',
  },
  '7000222': {
    field: 'clientSecret',
    message: 'The client secret has expired (AADSTS7000222).',
    remediation: 'Create a new client secret under App registrations > your app > Certificates & secrets, then give Vigil the new value.',
  },
  '7000218': {
    field: 'clientSecret',
    message: 'No client secret was sent (AADSTS7000218).',
    remediation: 'Give the Value of the client secret (App registrations > your app > Certificates & secrets).',
  },
  '700016': {
    field: 'clientId',
    message: 'The application (client) ID was not found in this tenant (AADSTS700016).',
    remediation: (name) =>
      `Copy the Application (client) ID from App registrations > your app > Overview, and check that ${name('tenantId')} is that app's Directory (tenant) ID.`,
  },
  '90002': {
    field: 'tenantId',
    message: 'The tenant was not found (AADSTS90002).',
    remediation: 'Copy the Tenant ID from Microsoft Entra admin center > Overview, and check that the cloud (VIGIL_CLOUD) is the one the tenant lives in.',
  },
  '70011': {
    message: 'The token scope was refused (AADSTS70011).',
    remediation: 'The scope must be `{resource}/.default`; check the endpoints profile (VIGIL_ENDPOINTS_FILE) for a wrong resource.',
  },
  '500011': {
    message: 'The resource is not available in this tenant (AADSTS500011).',
    remediation: 'The service behind this API is not enabled for the tenant, or the endpoints profile names a wrong resource.',
  },
};

/**
 * Turns an AADSTS error (from MSAL or a raw token response) into a {@link VigilError} whose code is `AADSTS<n>`
 * and whose remediation names the field and portal page. Unknown codes keep Microsoft's first description line.
 */
export function aadstsError(code: string, description: string, cause?: unknown): VigilError {
  const help = AADSTS_HELP[code];
  const firstLine = description.split(/\r?\n/)[0] ?? description;
  if (help) {
    return new VigilError(`AADSTS${code}`, help.message, {
      field: help.field,
      remediation: help.remediation,
      detail: { upstream: firstLine },
      cause,
    });
  }
  return new VigilError(`AADSTS${code}`, `Microsoft Entra ID refused the request: ${firstLine}`, {
    remediation: `Look up AADSTS${code} at https://login.microsoftonline.com/error?code=${code}.`,
    cause,
  });
}

function fromMsalError(e: unknown): VigilError {
  if (e instanceof VigilError) return e;
  const err = e as { errorCode?: string; errorMessage?: string; message?: string };
  const text = `${err.errorMessage ?? ''} ${err.message ?? ''}`;
  const m = /AADSTS(\d+)/.exec(text);
  if (m) return aadstsError(m[1]!, text.slice(text.indexOf(`AADSTS${m[1]}`)), e);
  return new VigilError(
    'TOKEN_REQUEST_FAILED',
    `Token request failed: ${err.errorCode ?? ''} ${(err.errorMessage ?? err.message ?? '').split(/\r?\n/)[0]}`.trim(),
    { cause: e },
  );
}

/**
 * MSAL's network module routed through {@link HttpClient}: MSAL reads error bodies itself, so error statuses are
 * returned, not thrown.
 */
export class PipelineNetworkModule implements INetworkModule {
  private lastError: VigilError | undefined;
  constructor(private readonly http: HttpClient) {}
  /**
   * The pipeline's own error of the last failed request (e.g. `UPSTREAM_UNREACHABLE` naming the host), cleared on
   * reading. MSAL replaces any error of its network module by its generic `network_error`; callers put this one back.
   */
  takeError(): VigilError | undefined {
    const e = this.lastError;
    this.lastError = undefined;
    return e;
  }
  async sendGetRequestAsync<T>(url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> {
    return this.forward<T>('GET', url, options);
  }
  async sendPostRequestAsync<T>(url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> {
    return this.forward<T>('POST', url, options);
  }
  private async forward<T>(method: 'GET' | 'POST', url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> {
    try {
      const res = await this.http.send<T>({ api: 'identity', method, url, headers: options?.headers, body: options?.body });
      return { status: res.status, headers: res.headers, body: res.body };
    } catch (e) {
      if (e instanceof UpstreamHttpError) {
        // Give MSAL the error body so it can raise its ServerError with the AADSTS description.
        const body = (e.body ?? { error: e.upstreamCode, error_description: e.upstreamMessage ?? '' }) as T;
        return { status: e.status, headers: {}, body };
      }
      if (e instanceof VigilError) this.lastError = e;
      throw e;
    }
  }
}

/** A certificate credential: the PEM private key and the certificate's SHA-256 thumbprint (hex). */
export interface CertificateCredential {
  privateKey: string;
  thumbprintSha256: string;
  /** The certificate (PEM), sent as `x5c` so Entra ID can check the chain (subject name / issuer auth). */
  certificatePem: string;
}

/**
 * Reads a PEM file holding a certificate and its private key (the managed application's certificate credential).
 * @throws VigilError `configuration` naming VIGIL_MANAGED_APP_CERTIFICATE_FILE when either part is missing.
 */
export function loadCertificateCredential(path: string, pem: string): CertificateCredential {
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  const key = /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC )?PRIVATE KEY-----/.exec(pem)?.[0];
  if (!cert || !key) {
    throw new VigilError('CERTIFICATE_INVALID', `${path} must hold a PEM certificate and its PEM private key.`, {
      field: 'VIGIL_MANAGED_APP_CERTIFICATE_FILE',
    });
  }
  const thumbprintSha256 = new X509Certificate(cert).fingerprint256.replaceAll(':', '').toLowerCase();
  return { privateKey: key, thumbprintSha256, certificatePem: cert };
}

/**
 * How long before expiry a token MSAL returned stops being reused without asking MSAL, ms: MSAL's own renewal offset
 * (`DEFAULT_TOKEN_RENEWAL_OFFSET_SEC`, 300 s, msal-common Constants) plus a minute, so a reused token is one MSAL's cache
 * still holds and would hand out.
 */
const TOKEN_REUSE_MARGIN_MS = 360_000;

/** Parameters of {@link ClientCredentialProvider}: a client secret or a certificate. */
export interface ClientCredentialOptions {
  cloud: CloudProfile;
  tenantId: string;
  clientId: string;
  clientSecret?: string;
  certificate?: CertificateCredential;
  http: HttpClient;
}

/**
 * Client-credentials tokens for one service principal, one MSAL confidential client per integration (MSAL caches
 * tokens per resource until shortly before expiry).
 */
export class ClientCredentialProvider {
  /** MSAL's configuration; the client is created (and MSAL loaded) on the first token request. */
  private readonly configuration: Configuration;
  private app: Promise<ConfidentialClientApplication> | undefined;
  private readonly network: PipelineNetworkModule;
  /**
   * The last token MSAL returned per scope, with the time (ms since the epoch) until which MSAL would return it again
   * from its cache: every request of a collection asks for its token, and MSAL's cache lookup (authority, cache keys,
   * scope sets, a new result object) was about 0.3 s of CPU in a 5,000-user collection.
   */
  private readonly lastTokens = new Map<string, { token: AcquiredToken; reuseUntil: number }>();
  /** The tenant the tokens are for. */
  readonly tenantId: string;
  /** The application (client) ID the tokens are issued to. */
  readonly clientId: string;

  constructor(private readonly options: ClientCredentialOptions) {
    this.tenantId = options.tenantId;
    this.clientId = options.clientId;
    const authorityUrl = new URL(options.cloud.authorityHost);
    this.network = new PipelineNetworkModule(options.http);
    this.configuration = {
      auth: {
        clientId: options.clientId,
        ...(options.certificate
          ? {
              clientCertificate: {
                privateKey: options.certificate.privateKey,
                thumbprintSha256: options.certificate.thumbprintSha256,
                x5c: options.certificate.certificatePem,
              },
            }
          : { clientSecret: options.clientSecret }),
        authority: `${options.cloud.authorityHost}/${options.tenantId}`,
        // Outside the public cloud (emulator, custom endpoint sets) the authority host is trusted as configured
        // instead of being checked against Microsoft's instance-discovery list.
        ...(options.cloud.name === 'public' ? {} : { knownAuthorities: [authorityUrl.host] }),
      },
      system: {
        networkClient: this.network,
        // LogLevel.Error (0): MSAL's own logging is off; errors reach the caller.
        loggerOptions: { logLevel: 0, piiLoggingEnabled: false, loggerCallback: () => undefined },
      },
    };
  }

  /** The MSAL confidential client, loaded on first use (commands that request no token start without MSAL). */
  private client(): Promise<ConfidentialClientApplication> {
    this.app ??= import('@azure/msal-node').then((msal) => new msal.ConfidentialClientApplication(this.configuration));
    return this.app;
  }

  /**
   * A token for `resource` (scope `{resource}/.default`; a resource ending in `/` gets the documented double slash).
   *
   * @throws VigilError `AADSTS<n>` with the remediation for the code (wrong secret, expired secret, unknown app…).
   */
  async token(resource: string, forceRefresh = false): Promise<AcquiredToken> {
    const scope = `${resource}/.default`;
    const kept = this.lastTokens.get(scope);
    if (!forceRefresh && kept && Date.now() < kept.reuseUntil) return kept.token;
    let result;
    this.network.takeError();
    try {
      result = await (await this.client()).acquireTokenByClientCredential({ scopes: [scope], skipCache: forceRefresh });
    } catch (e) {
      throw this.network.takeError() ?? fromMsalError(e);
    }
    if (!result?.accessToken) throw new VigilError('TOKEN_EMPTY', `No access token was returned for ${resource}.`);
    const token = { accessToken: result.accessToken, claims: readClaims(result.accessToken) };
    // MSAL answers from its cache until 5 minutes before expiry (DEFAULT_TOKEN_RENEWAL_OFFSET_SEC) or the token's
    // `refresh_in` time: this copy is reused a minute less long, so it is always the token MSAL would return.
    const expires = result.expiresOn?.getTime() ?? 0;
    const refresh = result.refreshOn?.getTime() ?? Infinity;
    this.lastTokens.set(scope, { token, reuseUntil: Math.min(expires - TOKEN_REUSE_MARGIN_MS, refresh - 60_000) });
    return token;
  }

  /** The application permissions granted for `resource` (the token's `roles` claim). */
  async roles(resource: string): Promise<string[]> {
    return (await this.token(resource)).claims.roles;
  }

  /** A token function for the HTTP pipeline: `(forceRefresh) => bearer token` for one resource. */
  bearer(resource: string): (forceRefresh: boolean) => Promise<string> {
    return async (forceRefresh) => (await this.token(resource, forceRefresh)).accessToken;
  }
}

/** Result of {@link discoverTenant}. */
export interface TenantDiscovery {
  /** The tenant id (GUID) taken from the discovery document's issuer. */
  tenantId: string;
  issuer: string;
  tokenEndpoint: string;
}

/**
 * Resolves a tenant id or primary domain through OpenID Connect discovery
 * (`{authority}/{tenant}/v2.0/.well-known/openid-configuration`), and so checks that the tenant exists.
 *
 * @throws VigilError `AADSTS90002` when the tenant does not exist; `upstream` errors from the pipeline.
 */
export async function discoverTenant(http: HttpClient, cloud: CloudProfile, tenant: string): Promise<TenantDiscovery> {
  try {
    const res = await http.send<{ issuer?: string; token_endpoint?: string }>({
      api: 'identity',
      url: `${cloud.authorityHost}/${encodeURIComponent(tenant)}/v2.0/.well-known/openid-configuration`,
    });
    const issuer = res.body?.issuer ?? '';
    const m = /\/([0-9a-f-]{36})\/v2\.0\/?$/i.exec(issuer);
    if (!m) throw new VigilError('DISCOVERY_INVALID', `OpenID discovery for '${tenant}' returned no tenant id in its issuer.`);
    return { tenantId: m[1]!.toLowerCase(), issuer, tokenEndpoint: res.body?.token_endpoint ?? '' };
  } catch (e) {
    if (e instanceof UpstreamHttpError && e.status === 400) {
      const m = /AADSTS(\d+)/.exec(e.upstreamMessage ?? '');
      throw aadstsError(m?.[1] ?? '90002', e.upstreamMessage ?? `Tenant '${tenant}' not found.`, e);
    }
    throw e;
  }
}
