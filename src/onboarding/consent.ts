import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { ensureDefaultOrganization } from '../access/index.ts';
import { describeAction } from '../core/actions.ts';
import { VigilError, invalidInput } from '../core/errors.ts';
import { isGuid, newId, normalizeGuid } from '../core/ids.ts';
import type { CloudProfile } from '../config/cloud.ts';
import type { VigilConfig } from '../config/index.ts';
import { decryptSecret, encryptSecret, type Envelope, type KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import { signState, verifyState } from '../platform/crypto/signed-state.ts';
import type { HttpClient } from '../platform/http/client.ts';
import { discoverTenant, loadCertificateCredential } from '../platform/identity/index.ts';
import { authorizeUrl, IdTokenRejected, newNonce, newPkce, redeemAuthorizationCode, validateIdToken } from '../platform/identity/oidc.ts';
import type { Logger } from '../platform/log/index.ts';
import { nowIso } from '../store/db.ts';
import { getOrganization } from '../store/repositories/access.ts';
import * as flows from '../store/repositories/bindings.ts';
import type { Database } from '../store/schema.ts';
import { recordProof } from './tenants.ts';
import { managedAppClientId } from '../integration/index.ts';

/**
 * Mode B, step 1: admin consent to the operator-managed application, then the administrator's proof. Vigil builds the
 * consent link for one organization with a signed state naming a single-use consent flow; the redirect back
 * (`admin_consent=True&tenant=…`) consumes the flow's consent stage and sends the browser on to the tenant's
 * OpenID Connect sign-in (authorization code, PKCE, nonce); the second redirect consumes the sign-in stage, redeems the
 * code and validates the ID token (tenant, signature, nonce, a consent-capable role in `wids`) and only then binds the
 * tenant to the organization that asked for the link. Every documented failure (`permission_denied`,
 * `consent_required` / AADSTS65004, `access_denied`…) gets a fixed page: nothing of the query is echoed except an
 * `AADSTS<digits>` code.
 *
 * Sources: Microsoft identity platform "Admin consent" (https://learn.microsoft.com/entra/identity-platform/v2-admin-consent:
 * "do not trust tenant for authorization"), "client credentials flow" (`v2-oauth2-client-creds-grant-flow.md`,
 * "Request the permissions from a directory admin"), "OpenID Connect" (`v2-protocols-oidc.md`), "authorization code
 * flow" (`v2-oauth2-auth-code-flow.md`); the seed's call 1. Threat model: docs/security.md.
 */

/** What consent needs. */
export interface ConsentDeps {
  db: Kysely<Database>;
  http: HttpClient;
  cloud: CloudProfile;
  kek: KeyEncryptionKey;
  config: Pick<VigilConfig, 'managedApp' | 'consent'>;
  logger?: Logger | undefined;
}

/**
 * Resolves a tenant given as id or primary domain through OpenID discovery; when both a domain and an expected tenant
 * id are given, checks they are the same tenant.
 * @throws VigilError `invalid-input` / `DOMAIN_OF_ANOTHER_TENANT`, or `TENANT_NOT_FOUND` for an unknown tenant
 *   (discovery answered AADSTS90002).
 */
export async function resolveTenant(deps: Pick<ConsentDeps, 'http' | 'cloud'>, tenant: string, expectedTenantId?: string): Promise<string> {
  const input = normalizeGuid(tenant);
  if (!input)
    throw invalidInput('tenant', (name) => `${name('tenant')} is required.`, 'Give the tenant id (GUID) or its primary domain, e.g. contoso.onmicrosoft.com.');
  if (!isGuid(input) && !/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(input)) {
    throw invalidInput(
      'tenant',
      (name) => `${name('tenant')} '${input}' is neither a tenant id (GUID) nor a domain name.`,
      'Give the Tenant ID or the primary domain shown in Microsoft Entra admin center > Overview.',
    );
  }
  let tenantId: string;
  try {
    ({ tenantId } = await discoverTenant(deps.http, deps.cloud, input));
  } catch (e) {
    if (e instanceof VigilError && e.code === 'AADSTS90002') {
      throw new VigilError('TENANT_NOT_FOUND', `No tenant '${input}' exists (AADSTS90002).`, {
        field: 'tenant',
        detail: { upstreamCode: 'AADSTS90002' },
        cause: e,
      });
    }
    throw e;
  }
  if (expectedTenantId && tenantId !== expectedTenantId.toLowerCase()) {
    throw new VigilError('DOMAIN_OF_ANOTHER_TENANT', `The domain ${input} belongs to tenant ${tenantId}, not to tenant ${expectedTenantId}.`, {
      field: 'tenantId',
    });
  }
  return tenantId;
}

/** A consent link. */
export interface ConsentLink {
  url: string;
  tenantId: string;
  clientId: string;
  redirectUri: string;
  /** When the link stops being accepted, ISO 8601 UTC. It is accepted once. */
  expiresAt: string;
  instructions: string[];
}

/** Who asks for a consent link: the organization the tenant will be bound to, and the person or key (audit). */
export interface ConsentOrigin {
  /** Omitted: the default organization (the operator's CLI). */
  organizationId?: string | undefined;
  /** Who asked, as the API records an author (`actorOf`): the user's e-mail, `api-key:<name>`, or `operator`. */
  initiatedBy?: string | undefined;
}

/** Seconds the administrator has, after consenting, to finish the sign-in that proves the tenant. */
const SIGN_IN_STAGE_SECONDS = 600;

/**
 * Builds `{login}/{tenant}/adminconsent?client_id=…&redirect_uri=…&state=…` for a tenant id or primary domain, and
 * records the single-use consent flow (organization, initiator, tenant, expiry) the state names.
 * @throws VigilError as {@link resolveTenant} and {@link managedAppClientId}.
 */
export async function consentLink(deps: ConsentDeps, tenant: string, expectedTenantId?: string, origin: ConsentOrigin = {}): Promise<ConsentLink> {
  const clientId = managedAppClientId(deps.config);
  const tenantId = await resolveTenant(deps, tenant, expectedTenantId);
  const ttl = deps.config.consent.stateTtlSeconds;
  const organizationId = origin.organizationId ?? (await ensureDefaultOrganization(deps.db)).id;
  const now = Date.now();
  const expiresAt = new Date(now + ttl * 1000).toISOString();
  const id = newId('cf');
  await flows.deleteExpiredConsentFlows(deps.db, new Date(now - 86_400_000).toISOString());
  await flows.insertConsentFlow(deps.db, {
    id,
    organization_id: organizationId,
    initiated_by: origin.initiatedBy ?? 'operator',
    tenant_id: tenantId,
    stage: 'consent',
    nonce: null,
    verifier_envelope: null,
    created_at: new Date(now).toISOString(),
    expires_at: expiresAt,
    used_at: null,
  });
  const state = signState(deps.kek, { f: id, s: 'consent' }, ttl, now);
  const redirectUri = deps.config.consent.redirectUri;
  const url = `${deps.cloud.authorityHost}/${tenantId}/adminconsent?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, state })}`;
  const org = await getOrganization(deps.db, organizationId);
  return {
    url,
    tenantId,
    clientId,
    redirectUri,
    expiresAt,
    instructions: [
      'Open the link in a private (incognito) browser window, so that you sign in with the right account.',
      'Sign in as a Global Administrator or Privileged Role Administrator of the tenant, review the permissions, and choose Accept.',
      'Vigil then asks you to sign in once more with the same account: this proves that you administer the tenant.',
      `The tenant is then connected to the organization "${org?.name ?? organizationId}" of this Vigil deployment.`,
      `The link works once, until ${expiresAt.slice(0, 16).replace('T', ' ')} UTC.`,
    ],
  };
}

/** Outcome of the consent redirect, rendered as a page (or a redirect to the sign-in) by the server. */
export interface ConsentOutcome {
  status: 'granted' | 'denied' | 'declined' | 'invalid-state' | 'error' | 'sign-in';
  httpStatus: number;
  title: string;
  message: string;
  /** What the administrator should do next. */
  next: string[];
  tenantId?: string;
  /** `sign-in`: where the browser goes next (the tenant's authorize endpoint), answered as a 302. */
  redirect?: string;
}

const RETRY = 'Ask your Vigil operator or organization administrator for a new consent link ("Get consent link" in the portal).';

/** The `AADSTS<digits>` code in an error description, or undefined: the only part of upstream text shown on a page. */
function aadstsCode(description: string | undefined): string | undefined {
  return /AADSTS\d{1,9}/.exec(description ?? '')?.[0];
}

function invalid(title: string, message: string): ConsentOutcome {
  return { status: 'invalid-state', httpStatus: 400, title, message, next: [RETRY] };
}

/** A fixed page per documented error of the consent and sign-in redirects (never the query's own text). */
function errorOutcome(query: Record<string, string | undefined>, tenantId: string, stage: 'consent' | 'signin'): ConsentOutcome {
  const error = query.error ?? '';
  const code = aadstsCode(query.error_description);
  const suffix = code ? ` (${code})` : '';
  if (error === 'permission_denied' || error === 'access_denied') {
    return {
      status: 'denied',
      httpStatus: 200,
      tenantId,
      title: stage === 'consent' ? 'Consent was cancelled' : 'Sign-in was cancelled',
      message: `The administrator cancelled the request${suffix}; nothing was recorded.`,
      next: ['Open a new consent link and choose Accept, then complete the sign-in.', RETRY],
    };
  }
  if (error === 'consent_required' || code === 'AADSTS65004') {
    return {
      status: 'declined',
      httpStatus: 200,
      tenantId,
      title: `Consent was declined${suffix}`,
      message: 'The resource owner or authorization server denied the request; nothing was recorded.',
      next: [
        'Sign in with a Global Administrator or Privileged Role Administrator account: only they can grant consent for the organization.',
        'If your tenant routes consent through an admin consent workflow, approve the request under Enterprise applications > Admin consent requests.',
        RETRY,
      ],
    };
  }
  const known = [
    'invalid_request',
    'unauthorized_client',
    'server_error',
    'temporarily_unavailable',
    'invalid_resource',
    'login_required',
    'interaction_required',
    'unsupported_response_type',
    'invalid_client',
  ];
  return {
    status: 'error',
    httpStatus: 200,
    tenantId,
    title: stage === 'consent' ? 'Consent failed' : 'Sign-in failed',
    message: `Microsoft Entra ID answered ${known.includes(error) ? error : 'an error'}${suffix}; nothing was recorded.`,
    next: [code ? `Look up ${code} at https://login.microsoftonline.com/error?code=${code.slice(6)}.` : 'Try again in a private browser window.', RETRY],
  };
}

/**
 * Handles both redirects back to the consent callback. The state (HMAC-signed, expiring) names a consent flow and its
 * stage; each stage is consumed once (a replayed or concurrent second use is refused). The `tenant` parameter is only
 * trusted when it equals the flow's tenant (Microsoft: "do not trust tenant for authorization").
 * - consent stage, `admin_consent=True&tenant=…`: answers `sign-in` with the tenant's authorize URL (a 302).
 * - sign-in stage, `code=…`: redeems the code, validates the ID token and binds the tenant to the flow's organization.
 * Never throws for bad input: every outcome is a page.
 */
export async function handleConsentCallback(deps: ConsentDeps, query: Record<string, string | undefined>): Promise<ConsentOutcome> {
  const state = verifyState(deps.kek, query.state);
  if (!state.ok) {
    return state.reason === 'expired'
      ? invalid('This consent link has expired', 'The link was created too long ago; nothing was recorded.')
      : invalid('This consent link is not valid', 'The link was altered or not made by this Vigil deployment; nothing was recorded.');
  }
  const flow = state.data.f ? await flows.findConsentFlow(deps.db, state.data.f) : undefined;
  if (!flow || (state.data.s !== 'consent' && state.data.s !== 'signin'))
    return invalid('This consent link is not valid', 'The link was altered or not made by this Vigil deployment; nothing was recorded.');
  const used = (): ConsentOutcome => invalid('This consent link was already used', 'Each consent link works once; nothing was recorded.');
  const now = nowIso();
  if (state.data.s === 'consent') {
    if (flow.stage !== 'consent') return used();
    if (query.error) {
      if (!(await flows.advanceConsentFlow(deps.db, flow.id, 'consent', 'done', now))) return used();
      return errorOutcome(query, flow.tenant_id, 'consent');
    }
    if (query.admin_consent?.toLowerCase() !== 'true' || query.tenant?.toLowerCase() !== flow.tenant_id) {
      return invalid('Unexpected consent answer', 'The answer does not match the tenant this link was made for; nothing was recorded.');
    }
    const clientId = managedAppClientId(deps.config);
    const nonce = newNonce();
    const pkce = newPkce();
    const expiresAt = new Date(Date.now() + SIGN_IN_STAGE_SECONDS * 1000).toISOString();
    const envelope = JSON.stringify(encryptSecret(deps.kek, pkce.verifier, `consent-flow|${flow.id}`));
    if (!(await flows.advanceConsentFlow(deps.db, flow.id, 'consent', 'signin', now, { nonce, verifier_envelope: envelope, expires_at: expiresAt })))
      return used();
    const next = signState(deps.kek, { f: flow.id, s: 'signin' }, SIGN_IN_STAGE_SECONDS);
    return {
      status: 'sign-in',
      httpStatus: 302,
      tenantId: flow.tenant_id,
      title: 'Consent granted: now prove you administer the tenant',
      message: 'Sign in with the administrator account that granted consent.',
      next: [],
      redirect: authorizeUrl(deps.cloud, {
        tenantId: flow.tenant_id,
        clientId,
        redirectUri: deps.config.consent.redirectUri,
        state: next,
        nonce,
        codeChallenge: pkce.challenge,
      }),
    };
  }
  // Sign-in stage: consume it before anything else, so a replayed code or state is refused.
  if (flow.stage !== 'signin' || !flow.nonce || !flow.verifier_envelope) return used();
  if (!(await flows.advanceConsentFlow(deps.db, flow.id, 'signin', 'done', now, { verifier_envelope: null }))) return used();
  if (query.error) return errorOutcome(query, flow.tenant_id, 'signin');
  if (!query.code) return invalid('Unexpected sign-in answer', 'The answer carries no sign-in code; nothing was recorded.');
  const notProven = (message: string): ConsentOutcome => ({
    status: 'error',
    httpStatus: 403,
    tenantId: flow.tenant_id,
    title: 'The sign-in did not prove you administer this tenant',
    message,
    next: ['Open a new consent link in a private browser window and sign in as a Global Administrator or Privileged Role Administrator of this tenant.', RETRY],
  });
  let admin;
  try {
    const verifier = decryptSecret(deps.kek, JSON.parse(flow.verifier_envelope) as Envelope, `consent-flow|${flow.id}`);
    const clientId = managedAppClientId(deps.config);
    const file = deps.config.managedApp!.certificateFile;
    const idToken = await redeemAuthorizationCode({
      cloud: deps.cloud,
      http: deps.http,
      tenantId: flow.tenant_id,
      clientId,
      clientSecret: deps.config.managedApp!.clientSecret,
      certificate: file ? loadCertificateCredential(file, readFileSync(file, 'utf8')) : undefined,
      code: query.code,
      redirectUri: deps.config.consent.redirectUri,
      codeVerifier: verifier,
      nonce: flow.nonce,
    });
    admin = await validateIdToken({ cloud: deps.cloud, http: deps.http, tenantId: flow.tenant_id, clientId, nonce: flow.nonce, idToken });
  } catch (e) {
    deps.logger?.warn(
      {
        flowId: flow.id,
        tenantId: flow.tenant_id,
        code: e instanceof VigilError ? e.code : 'error',
        reason: e instanceof IdTokenRejected ? e.reason : undefined,
        detail: e instanceof VigilError ? e.message : undefined,
      },
      'consent sign-in did not prove the tenant',
    );
    if (e instanceof IdTokenRejected && e.reason === 'not-admin')
      return notProven('The account you signed in with holds no role that can grant admin consent in this tenant; nothing was recorded.');
    if (e instanceof IdTokenRejected && e.reason === 'no-roles-claim')
      return notProven(
        "The account you signed in with holds no role that can grant admin consent in this tenant (or, if it holds one, Vigil's application is not configured to show directory roles: tell the operator); nothing was recorded.",
      );
    const code = e instanceof VigilError && /^AADSTS\d+$/.test(e.code) ? ` (${e.code})` : '';
    return notProven(`The sign-in could not be verified${code}; nothing was recorded.`);
  }
  const outcome = await recordProof(deps.db, {
    tenantId: flow.tenant_id,
    organizationId: flow.organization_id,
    method: 'oidc-admin',
    provenBy: admin.username || null,
    provenByOid: admin.oid,
  });
  if (!outcome.bound) {
    // Shown only to a verified administrator of this very tenant: it names no organization.
    return {
      status: 'error',
      httpStatus: 409,
      tenantId: flow.tenant_id,
      title: 'This tenant is connected to another organization',
      message: 'Your tenant is already connected to another organization of this Vigil deployment; nothing was changed.',
      next: ['Ask your Vigil operator to move the tenant to another organization, or use the organization it is connected to.'],
    };
  }
  deps.logger?.info(
    { tenantId: flow.tenant_id, organizationId: flow.organization_id, method: 'oidc-admin', roles: admin.roles },
    'tenant proven by its administrator',
  );
  const clientId = deps.config.managedApp?.clientId ?? '<managed app id>';
  return {
    status: 'granted',
    httpStatus: 200,
    tenantId: flow.tenant_id,
    title: 'Consent granted',
    message: `Vigil's application now has a service principal in tenant ${flow.tenant_id}, and your sign-in as ${admin.roles[0]} proved that you administer it: the tenant is connected to your organization.`,
    next: [
      `Find its Object ID: Microsoft Entra admin center > Enterprise applications > search for "Vigil" (application ID ${clientId}) > Overview > Object ID. It is not the Application ID.`,
      `Then ${describeAction({ do: 'registerManagementApp', tenantId: flow.tenant_id, applicationId: clientId })}.`,
      `Then ${describeAction({ do: 'addManagedIntegration', tenantId: flow.tenant_id })}.`,
    ],
  };
}
