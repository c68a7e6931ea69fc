import { readFileSync } from 'node:fs';
import { VigilError, invalidInput } from '../core/errors.ts';
import { isGuid } from '../core/ids.ts';
import type { CloudProfile } from '../config/cloud.ts';
import type { VigilConfig } from '../config/index.ts';
import type { KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import { signState, verifyState } from '../platform/crypto/signed-state.ts';
import type { HttpClient } from '../platform/http/client.ts';
import { ClientCredentialProvider, discoverTenant, loadCertificateCredential } from '../platform/identity/index.ts';

/**
 * Mode B, step 1: admin consent to the operator-managed application. Vigil builds the consent link with a signed,
 * expiring state, and handles the redirect back: success (`admin_consent=True&tenant=…`) and every documented
 * failure (`permission_denied`, `consent_required` / AADSTS65004), each with a page that says what to do.
 *
 * Sources: Microsoft identity platform "Admin consent" (`v2-admin-consent.md`) and "client credentials flow"
 * (`v2-oauth2-client-creds-grant-flow.md`, "Request the permissions from a directory admin"); the seed's call 1.
 */

/** What consent needs. */
export interface ConsentDeps {
  http: HttpClient;
  cloud: CloudProfile;
  kek: KeyEncryptionKey;
  config: Pick<VigilConfig, 'managedApp' | 'consent'>;
}

/**
 * The managed application's id.
 * @throws VigilError `configuration` when VIGIL_MANAGED_APP_CLIENT_ID is not set.
 */
export function managedAppClientId(config: Pick<VigilConfig, 'managedApp'>): string {
  if (!config.managedApp) {
    throw new VigilError('configuration', 'MANAGED_APP_NOT_CONFIGURED', 'This Vigil deployment has no operator-managed application configured.', {
      field: 'VIGIL_MANAGED_APP_CLIENT_ID',
      remediation: 'Set VIGIL_MANAGED_APP_CLIENT_ID and VIGIL_MANAGED_APP_CLIENT_SECRET (or VIGIL_MANAGED_APP_CERTIFICATE_FILE), or use --mode customer-app.',
    });
  }
  return config.managedApp.clientId;
}

/**
 * Tokens of the managed application in a customer tenant (its secret or certificate comes from the operator's
 * configuration, never from the integration).
 */
export function managedAppCredentials(deps: Pick<ConsentDeps, 'http' | 'cloud' | 'config'>, tenantId: string): ClientCredentialProvider {
  const clientId = managedAppClientId(deps.config);
  const file = deps.config.managedApp!.certificateFile;
  const certificate = file ? loadCertificateCredential(file, readFileSync(file, 'utf8')) : undefined;
  return new ClientCredentialProvider({ cloud: deps.cloud, tenantId, clientId, clientSecret: deps.config.managedApp!.clientSecret, certificate, http: deps.http });
}

/**
 * Resolves a tenant given as id or primary domain through OpenID discovery; when both a domain and an expected tenant
 * id are given, checks they are the same tenant.
 * @throws VigilError `invalid-input` / `DOMAIN_OF_ANOTHER_TENANT`, or `AADSTS90002` for an unknown tenant.
 */
export async function resolveTenant(deps: Pick<ConsentDeps, 'http' | 'cloud'>, tenant: string, expectedTenantId?: string): Promise<string> {
  const input = tenant.trim();
  if (!input) throw invalidInput('--tenant', '--tenant is required.', 'Give the tenant id (GUID) or its primary domain, e.g. contoso.onmicrosoft.com.');
  if (!isGuid(input) && !/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(input)) {
    throw invalidInput('--tenant', `--tenant '${input}' is neither a tenant id (GUID) nor a domain name.`, 'Give the Tenant ID or the primary domain shown in Microsoft Entra admin center > Overview.');
  }
  let tenantId: string;
  try {
    ({ tenantId } = await discoverTenant(deps.http, deps.cloud, input));
  } catch (e) {
    if (e instanceof VigilError && e.code === 'AADSTS90002') {
      throw new VigilError('invalid-input', 'AADSTS90002', `No tenant '${input}' exists (AADSTS90002).`, { field: '--tenant', remediation: 'Give the Tenant ID or the primary domain shown in Microsoft Entra admin center > Overview of the customer tenant.', cause: e });
    }
    throw e;
  }
  if (expectedTenantId && tenantId !== expectedTenantId.toLowerCase()) {
    throw new VigilError('invalid-input', 'DOMAIN_OF_ANOTHER_TENANT', `The domain ${input} belongs to tenant ${tenantId}, not to tenant ${expectedTenantId}.`, {
      field: '--tenant-id',
      remediation: 'Check the tenant id and the primary domain in Microsoft Entra admin center > Overview of the tenant you mean to connect.',
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
  /** When the link's state stops being accepted, ISO 8601 UTC. */
  expiresAt: string;
  instructions: string[];
}

/**
 * Builds `{login}/{tenant}/adminconsent?client_id=…&redirect_uri=…&state=…` for a tenant id or primary domain.
 * @throws VigilError as {@link resolveTenant} and {@link managedAppClientId}.
 */
export async function consentLink(deps: ConsentDeps, tenant: string, expectedTenantId?: string): Promise<ConsentLink> {
  const clientId = managedAppClientId(deps.config);
  const tenantId = await resolveTenant(deps, tenant, expectedTenantId);
  const ttl = deps.config.consent.stateTtlSeconds;
  const state = signState(deps.kek, { tid: tenantId }, ttl);
  const redirectUri = deps.config.consent.redirectUri;
  const url = `${deps.cloud.authorityHost}/${tenantId}/adminconsent?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, state })}`;
  return {
    url,
    tenantId,
    clientId,
    redirectUri,
    expiresAt: new Date(Date.now() + ttl * 1000).toISOString(),
    instructions: [
      'Open the link in a private (incognito) browser window, so that you sign in with the right account.',
      'Sign in as a Global Administrator or Privileged Role Administrator of the tenant, review the permissions, and choose Accept.',
      `The link is valid until ${new Date(Date.now() + ttl * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    ],
  };
}

/** Outcome of the consent redirect, rendered as a page by the server. */
export interface ConsentOutcome {
  status: 'granted' | 'denied' | 'declined' | 'invalid-state' | 'error';
  httpStatus: number;
  title: string;
  message: string;
  /** What the administrator should do next. */
  next: string[];
  tenantId?: string;
}

/**
 * Handles the redirect back from the admin consent endpoint. The `tenant` parameter is only trusted when it equals
 * the tenant the signed state was issued for (Microsoft: "do not trust tenant for authorization").
 */
export function handleConsentCallback(deps: Pick<ConsentDeps, 'kek' | 'config'>, query: Record<string, string | undefined>): ConsentOutcome {
  const state = verifyState(deps.kek, query.state);
  const retry = 'Ask your Vigil operator for a new consent link (`vigil consent-url --tenant <tenant id or domain>`).';
  if (!state.ok) {
    return {
      status: 'invalid-state',
      httpStatus: 400,
      title: state.reason === 'expired' ? 'This consent link has expired' : 'This consent link is not valid',
      message: state.reason === 'expired' ? 'The link was created too long ago; nothing was recorded.' : 'The link was altered or not made by this Vigil deployment; nothing was recorded.',
      next: [retry],
    };
  }
  const tenantId = state.data.tid;
  const error = query.error;
  if (error === 'permission_denied' || error === 'access_denied') {
    return { status: 'denied', httpStatus: 200, tenantId, title: 'Consent was cancelled', message: query.error_description ?? 'The administrator cancelled the request.', next: ['Open the link again and choose Accept to let Vigil read the tenant.', retry] };
  }
  if (error === 'consent_required' || /AADSTS65004/.test(query.error_description ?? '')) {
    return {
      status: 'declined',
      httpStatus: 200,
      tenantId,
      title: 'Consent was declined (AADSTS65004)',
      message: query.error_description ?? 'The resource owner or authorization server denied the request.',
      next: ['Sign in with a Global Administrator or Privileged Role Administrator account: only they can grant consent for the organization.', 'If your tenant routes consent through an admin consent workflow, approve the request under Enterprise applications > Admin consent requests.', retry],
    };
  }
  if (error) {
    return { status: 'error', httpStatus: 200, tenantId, title: `Consent failed: ${error}`, message: query.error_description ?? error, next: [retry] };
  }
  if (query.admin_consent?.toLowerCase() !== 'true' || query.tenant?.toLowerCase() !== tenantId) {
    return { status: 'invalid-state', httpStatus: 400, title: 'Unexpected consent answer', message: 'The answer does not match the tenant this link was made for; nothing was recorded.', next: [retry] };
  }
  const clientId = deps.config.managedApp?.clientId ?? '<managed app id>';
  return {
    status: 'granted',
    httpStatus: 200,
    tenantId,
    title: 'Consent granted',
    message: `Vigil's application now has a service principal in tenant ${tenantId}.`,
    next: [
      `Find its Object ID: Microsoft Entra admin center > Enterprise applications > search for "Vigil" (application ID ${clientId}) > Overview > Object ID. It is not the Application ID.`,
      `Register the application as a Power Platform admin management application: vigil register-management-app --tenant-id ${tenantId} --application-id ${clientId} (or New-PowerAppManagementApp -ApplicationId ${clientId} in PowerShell).`,
      `Create the integration: vigil integrations add --mode managed-app --tenant-id ${tenantId} --sp-object-id <Object ID>.`,
    ],
  };
}
