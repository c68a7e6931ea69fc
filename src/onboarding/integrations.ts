import { ensureDefaultOrganization, type Caller } from '../access/index.ts';
import { integrationsInScope } from '../access/scope.ts';
import { VigilError } from '../core/errors.ts';
import { isGuid, newId, normalizeGuid } from '../core/ids.ts';
import { resolveTenant } from './consent.ts';
import {
  credentialsFor,
  getIntegration,
  managedAppClientId,
  managedAppCredentials,
  recordCredentialRefusal,
  secretAad,
  secretDaysLeft,
  secretExpiryWarning,
  streamContext,
  type IntegrationDeps,
} from '../integration/index.ts';
import { encryptSecret } from '../platform/crypto/envelope.ts';
import { ClientCredentialProvider } from '../platform/identity/index.ts';
import { nowIso, type Executor } from '../store/db.ts';
import * as repo from '../store/repositories/integrations.ts';
import { latestFinishedRun } from '../store/repositories/runs.ts';
import { parseSecretExpiry, requireGuid, requireSecretValue, validateCustomerAppInput } from './validate.ts';
import { verifyIntegration, type VerificationReport } from './verify.ts';
import { recordProof, requireTenantBinding, tenantNotProven } from './tenants.ts';
import { findBinding } from '../store/repositories/bindings.ts';

/**
 * Integration use cases: add (Mode A), verify, list, show, remove. The client secret is verified before anything is
 * saved, then stored only as an AES-256-GCM envelope bound to the integration id and tenant id.
 */

/** An integration as shown to people and scripts: never the secret. */
export interface IntegrationView {
  id: string;
  name: string;
  mode: 'customer-app' | 'managed-app';
  tenantId: string;
  clientId: string;
  servicePrincipalObjectId: string | null;
  secretExpiresAt: string | null;
  /** Whole days until the secret expires (negative once expired). */
  secretDaysLeft: number | null;
  createdAt: string;
  verifiedAt: string | null;
  /** `ok`, `expired` or `rejected`; collection stops until `ok`. */
  credentialState: string;
  credentialError: string | null;
  verification: VerificationReport | null;
}

/** Shapes a row for output. */
export function toView(row: repo.IntegrationRow, now = Date.now()): IntegrationView {
  return {
    id: row.id,
    name: row.name,
    mode: row.mode as IntegrationView['mode'],
    tenantId: row.tenant_id,
    clientId: row.client_id,
    servicePrincipalObjectId: row.sp_object_id,
    secretExpiresAt: row.secret_expires_at,
    secretDaysLeft: secretDaysLeft(row.secret_expires_at, now),
    createdAt: row.created_at,
    verifiedAt: row.verified_at,
    credentialState: row.credential_state,
    credentialError: row.credential_error,
    verification: row.verification ? (JSON.parse(row.verification) as VerificationReport) : null,
  };
}

/** Raw input of {@link addCustomerAppIntegration} (validated inside). */
export interface AddCustomerAppRequest {
  /** The owning organization; omitted: the default organization (the operator's CLI). */
  organizationId?: string;
  name?: string;
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  secretExpires?: string;
}

/**
 * Mode A: validates the input, proves the secret (a token is issued with it), refuses a tenant bound to another
 * organization, verifies the setup against the tenant, and only then binds the tenant (method `mode-a-secret`, when an
 * administrator granted the app at least one application permission) and stores the integration with its encrypted
 * secret. A wrong secret gets Entra's answer whatever the tenant's binding: nothing about other organizations is
 * said before the secret is proven.
 *
 * @throws VigilError `invalid-input` for a bad field; `AADSTS…` when Entra ID rejects the credentials (nothing is
 *   saved); `conflict` / `TENANT_BOUND_ELSEWHERE` (after the secret is proven) when another organization holds the
 *   tenant; `TENANT_NOT_PROVEN` when no permission is granted to the app and the tenant is not yet the caller's;
 *   `conflict` / `INTEGRATION_EXISTS` when this tenant and client id are already integrated by the caller.
 */
export async function addCustomerAppIntegration(
  deps: IntegrationDeps,
  request: AddCustomerAppRequest,
): Promise<{ integration: IntegrationView; report: VerificationReport }> {
  const input = validateCustomerAppInput(request);
  const organizationId = await organizationFor(deps, request.organizationId);
  const tokens = new ClientCredentialProvider({
    cloud: deps.cloud,
    tenantId: input.tenantId,
    clientId: input.clientId,
    clientSecret: input.clientSecret,
    http: deps.http,
  });
  // The proof comes first (verification takes tokens with the secret): until the secret works, every answer is
  // Entra's answer to that secret, whoever holds the tenant.
  const report = await verifyIntegration({ cloud: deps.cloud, tokens, ctx: streamContext(deps, tokens) }, input);
  const binding = await findBinding(deps.db, input.tenantId);
  const existing = await repo.findIntegrationByApp(deps.db, input.tenantId, input.clientId);
  if ((binding && binding.organization_id !== organizationId) || (existing && existing.organization_id !== organizationId))
    throw boundElsewhere(input.tenantId);
  if (existing) throw integrationExists(existing, `Tenant ${input.tenantId} with client id ${input.clientId}`);
  if (!binding) {
    // A secret proves an administrator's approval only when an administrator granted the app a permission.
    if (!Object.values(report.grantedRoles).some((roles) => roles.length > 0)) throw tenantNotProven(input.tenantId);
    const proof = await recordProof(deps.db, { tenantId: input.tenantId, organizationId, method: 'mode-a-secret', provenBy: `client ${input.clientId}` });
    if (!proof.bound) throw boundElsewhere(input.tenantId);
  }
  const id = newId('int');
  return saveVerifiedIntegration(
    deps,
    {
      id,
      organization_id: organizationId,
      name: input.name,
      mode: 'customer-app',
      tenant_id: input.tenantId,
      client_id: input.clientId,
      sp_object_id: report.servicePrincipalObjectId,
      secret_envelope: JSON.stringify(encryptSecret(deps.kek, input.clientSecret, secretAad({ id, tenant_id: input.tenantId }))),
      secret_expires_at: input.secretExpiresAt,
    },
    report,
  );
}

/**
 * The refusal of a tenant another organization holds, given only to a caller who proved a working secret of an app in
 * that tenant (so, someone of the tenant): it names no organization and no integration.
 */
function boundElsewhere(tenantId: string): VigilError {
  return new VigilError('TENANT_BOUND_ELSEWHERE', `Tenant ${tenantId} is connected to another organization of this Vigil deployment.`, {
    field: 'tenantId',
    remediation: (_, act) => `A tenant belongs to one organization: ${act({ do: 'bindTenant', tenantId })}.`,
  });
}

/** The organization a new integration joins: the one given (API callers), else the default one (the operator's CLI). */
async function organizationFor(deps: IntegrationDeps, organizationId: string | undefined): Promise<string> {
  return organizationId ?? (await ensureDefaultOrganization(deps.db)).id;
}

/** The conflict of adding an integration the caller's organization already has: it names the existing one. */
function integrationExists(existing: repo.IntegrationRow, what: string): VigilError {
  return new VigilError('INTEGRATION_EXISTS', `${what} is already integrated as ${existing.id} (${existing.name}).`, {
    remediation: (_, act) => `To check the existing one, ${act({ do: 'verifyIntegration', integration: existing.id })}; or remove it first.`,
  });
}

/** Stores a verified integration (either mode) and returns it with its verification report. */
async function saveVerifiedIntegration(
  deps: IntegrationDeps,
  fields: Pick<
    repo.IntegrationRow,
    'id' | 'organization_id' | 'name' | 'mode' | 'tenant_id' | 'client_id' | 'sp_object_id' | 'secret_envelope' | 'secret_expires_at'
  >,
  report: VerificationReport,
): Promise<{ integration: IntegrationView; report: VerificationReport }> {
  const now = nowIso();
  const row: repo.IntegrationRow = {
    ...fields,
    verification: JSON.stringify(report),
    verified_at: report.checkedAt,
    created_at: now,
    updated_at: now,
    credential_state: 'ok',
    credential_error: null,
    secret_rotated_at: null,
  };
  await repo.insertIntegration(deps.db, row);
  deps.logger.info({ integrationId: row.id, tenantId: row.tenant_id, clientId: row.client_id, mode: row.mode }, 'integration added');
  return { integration: toView(row), report };
}

/** Raw input of {@link addManagedAppIntegration} (validated inside). */
export interface AddManagedAppRequest {
  /** The owning organization; omitted: the default organization (the operator's CLI). */
  organizationId?: string;
  name?: string;
  tenantId?: string;
  /** Instead of `tenantId`: the tenant id or its primary domain (resolved through the cloud's OpenID configuration). */
  tenant?: string;
  spObjectId?: string;
  /** The tenant's primary domain, checked against the tenant id when given. */
  primaryDomain?: string;
}

/**
 * Mode B, step 3: creates the integration for a tenant bound to the caller's organization (its administrator proved
 * it through the consent link's sign-in, or the operator bound it). Verifies the consent by taking a token in the
 * customer tenant and comparing its `oid` with the Object ID given; names the usual mistake (the Application ID pasted
 * instead of the Object ID) and where the Object ID is shown. `CONSENT_MISSING` and `OBJECT_ID_MISMATCH` are only
 * answered once the tenant is proven to be the caller's.
 *
 * @throws VigilError `invalid-input` (bad GUIDs, Application ID given, domain of another tenant); `authorization` /
 *   `TENANT_NOT_PROVEN` — the one answer for a tenant that never consented, consented through another organization's
 *   link, or is bound to another organization; then `CONSENT_MISSING` (consent withdrawn since), `OBJECT_ID_MISMATCH`,
 *   `INTEGRATION_EXISTS`; `configuration` when no managed app is configured.
 */
export async function addManagedAppIntegration(
  deps: IntegrationDeps,
  request: AddManagedAppRequest,
): Promise<{ integration: IntegrationView; report: VerificationReport }> {
  const clientId = managedAppClientId(deps.config);
  const tenant = request.tenant === undefined ? undefined : normalizeGuid(request.tenant);
  if (tenant && !isGuid(tenant))
    return addManagedAppIntegration(deps, { ...request, tenant: undefined, tenantId: await resolveTenant(deps, tenant), primaryDomain: tenant });
  const tenantId = requireGuid('tenantId', tenant || request.tenantId, 'Microsoft Entra admin center > Overview > Tenant ID');
  const spObjectId = requireGuid(
    'servicePrincipalObjectId',
    request.spObjectId,
    'Microsoft Entra admin center > Enterprise applications > search for "Vigil" > Overview > Object ID',
  );
  if (request.primaryDomain) await resolveTenant(deps, request.primaryDomain, tenantId);
  const organizationId = await organizationFor(deps, request.organizationId);
  const where = 'Microsoft Entra admin center > Enterprise applications > search for "Vigil" (or the service\'s name) > Overview > Object ID';
  if (spObjectId === clientId) {
    throw new VigilError(
      'APPLICATION_ID_GIVEN',
      `${spObjectId} is the Application ID of Vigil's managed application, not the Object ID of its service principal in your tenant.`,
      {
        field: 'servicePrincipalObjectId',
        remediation: `Copy the Object ID from ${where}. The Object ID is different in every tenant.`,
      },
    );
  }
  // Nothing about the tenant (consented or not, someone else's or not) is said before it is proven to be the caller's.
  await requireTenantBinding(deps.db, tenantId, organizationId);
  const existing = await repo.findIntegrationByApp(deps.db, tenantId, clientId);
  if (existing) throw integrationExists(existing, `Tenant ${tenantId}`);
  const tokens = managedAppCredentials(deps, tenantId);
  let oid: string;
  try {
    oid = (await tokens.token(deps.cloud.graph.resource)).claims.oid;
  } catch (e) {
    if (e instanceof VigilError && ['AADSTS700016', 'AADSTS7000229'].includes(e.code)) {
      throw new VigilError(
        'CONSENT_MISSING',
        `Vigil's application ${clientId} has no service principal in tenant ${tenantId}: admin consent has not been granted there.`,
        {
          field: 'tenantId',
          remediation: (_, act) =>
            `Grant admin consent first: ${act({ do: 'consentLink', tenant: tenantId })}, open the link in a private browser window as a Global Administrator or Privileged Role Administrator, and accept.`,
          cause: e,
        },
      );
    }
    throw e;
  }
  if (oid.toLowerCase() !== spObjectId) {
    throw new VigilError('OBJECT_ID_MISMATCH', `${spObjectId} is not the Object ID of Vigil's service principal in tenant ${tenantId}.`, {
      field: 'servicePrincipalObjectId',
      remediation: `Copy the Object ID from ${where} (not the Application ID, and not the Object ID of an app registration).`,
    });
  }
  const report = await verifyIntegration({ cloud: deps.cloud, tokens, ctx: streamContext(deps, tokens) }, { tenantId, clientId });
  return saveVerifiedIntegration(
    deps,
    {
      id: newId('int'),
      organization_id: organizationId,
      name: (request.name ?? '').trim() || `tenant-${tenantId.slice(0, 8)}`,
      mode: 'managed-app',
      tenant_id: tenantId,
      client_id: clientId,
      sp_object_id: spObjectId,
      secret_envelope: null,
      secret_expires_at: null,
    },
    report,
  );
}

/**
 * Re-runs verification for a stored integration and stores the report.
 * @throws VigilError as {@link verifyIntegration}.
 */
export async function verifyStoredIntegration(deps: IntegrationDeps, idOrName: string): Promise<{ integration: IntegrationView; report: VerificationReport }> {
  let row = await getIntegration(deps.db, idOrName);
  const tokens = credentialsFor(deps, row);
  let report: VerificationReport;
  try {
    report = await verifyIntegration({ cloud: deps.cloud, tokens, ctx: streamContext(deps, tokens) }, { tenantId: row.tenant_id, clientId: row.client_id });
  } catch (e) {
    if (row.mode === 'managed-app' && e instanceof VigilError && ['AADSTS700016', 'AADSTS7000229'].includes(e.code)) {
      throw new VigilError(
        'CONSENT_MISSING',
        `Vigil's application ${row.client_id} no longer has a service principal in tenant ${row.tenant_id}: the enterprise application was deleted or consent was withdrawn.`,
        {
          remediation: (_, act) =>
            `A Global Administrator or Privileged Role Administrator grants consent again (${act({ do: 'consentLink', tenant: row.tenant_id })}); Vigil then records the new service principal's Object ID at the next verify.`,
          cause: e,
        },
      );
    }
    await recordCredentialRefusal(deps, row.id, e);
    throw e;
  }
  // Consent granted again creates a new service principal with a new Object ID: keep the stored one current.
  if (row.mode === 'managed-app' && report.servicePrincipalObjectId && report.servicePrincipalObjectId !== row.sp_object_id) {
    report.warnings.push(
      `The service principal's Object ID changed from ${row.sp_object_id} to ${report.servicePrincipalObjectId} (consent was granted again); Vigil recorded the new one.`,
    );
    await repo.updateServicePrincipalObjectId(deps.db, row.id, report.servicePrincipalObjectId, report.checkedAt);
    row = { ...row, sp_object_id: report.servicePrincipalObjectId };
  }
  await repo.updateVerification(deps.db, row.id, report, report.checkedAt);
  if (row.credential_state !== 'ok') await repo.setCredentialState(deps.db, row.id, 'ok', null, report.checkedAt);
  return { integration: toView({ ...row, verification: JSON.stringify(report), verified_at: report.checkedAt }), report };
}

/**
 * Mode A secret rotation: the new secret is checked against the tenant (a token is issued with it) before it
 * replaces the stored one, so a bad new secret leaves the old one in place and working. Clears a credentials
 * expired state; an interrupted collection then resumes from its checkpoints.
 *
 * @throws VigilError `invalid-input` (empty secret, Secret ID pasted, bad expiry, managed-app integration);
 *   `AADSTS…` when Entra ID refuses the new secret (nothing changes).
 */
export async function rotateSecret(
  deps: IntegrationDeps,
  idOrName: string,
  request: { clientSecret?: string; secretExpires?: string },
): Promise<IntegrationView> {
  const row = await getIntegration(deps.db, idOrName);
  if (row.mode !== 'customer-app') {
    throw new VigilError('NOT_CUSTOMER_APP', `Integration ${row.name} uses the operator-managed application: it has no client secret of its own.`, {
      field: 'integration',
    });
  }
  const secret = requireSecretValue(request.clientSecret);
  const expiresAt = parseSecretExpiry(request.secretExpires);
  const candidate = new ClientCredentialProvider({
    cloud: deps.cloud,
    tenantId: row.tenant_id,
    clientId: row.client_id,
    clientSecret: secret,
    http: deps.http,
  });
  await candidate.token(deps.cloud.graph.resource, true);
  const at = nowIso();
  await repo.replaceSecret(deps.db, row.id, JSON.stringify(encryptSecret(deps.kek, secret, secretAad(row))), expiresAt, at);
  deps.logger.info({ integrationId: row.id, secretExpiresAt: expiresAt }, 'client secret rotated');
  return toView((await repo.findIntegration(deps.db, row.id))!);
}

/** An integration as the API lists it: the view without its verification report, with its secret warning and last collection. */
export interface IntegrationSummary extends Omit<IntegrationView, 'verification'> {
  secretWarning: string | null;
  lastRun: { id: string; status: string; startedAt: string; finishedAt: string | null } | null;
}

/** Shapes a row as an {@link IntegrationSummary} (reads its latest finished run). */
export async function integrationSummary(db: Executor, row: repo.IntegrationRow): Promise<IntegrationSummary> {
  const { verification: _, ...view } = toView(row);
  const last = await latestFinishedRun(db, row.id);
  return {
    ...view,
    secretWarning: secretExpiryWarning(view),
    lastRun: last ? { id: last.id, status: last.status, startedAt: last.started_at, finishedAt: last.finished_at } : null,
  };
}

/**
 * The integrations the caller sees, oldest first, as the API lists them (`GET /api/v1/integrations`) and `vigil
 * integrations list --json` prints them: the organization's for a user or key, every organization's (or the one
 * `--organization` names) for the operator.
 */
export async function listIntegrationSummaries(db: Executor, caller: Caller): Promise<IntegrationSummary[]> {
  return Promise.all((await integrationsInScope(db, caller)).map((row) => integrationSummary(db, row)));
}

/**
 * Removes an integration and everything collected for it.
 * @throws VigilError `not-found`.
 */
export async function removeIntegration(db: Executor, idOrName: string): Promise<IntegrationView> {
  const row = await getIntegration(db, idOrName);
  await repo.deleteIntegration(db, row.id);
  return toView(row);
}
