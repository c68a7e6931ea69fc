import type { Kysely } from 'kysely';
import { VigilError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { CloudProfile } from '../config/cloud.ts';
import { decryptSecret, encryptSecret, type Envelope, type KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import type { HttpClient } from '../platform/http/client.ts';
import { ClientCredentialProvider } from '../platform/identity/index.ts';
import type { Logger } from '../platform/log/index.ts';
import type { StreamContext } from '../sources/stream.ts';
import { nowIso, type Executor } from '../store/db.ts';
import * as repo from '../store/repositories/integrations.ts';
import type { Database } from '../store/schema.ts';
import { validateCustomerAppInput } from './validate.ts';
import { verifyIntegration, type VerificationReport } from './verify.ts';

/**
 * Integration use cases: add (Mode A), verify, list, show, remove. The client secret is verified before anything is
 * saved, then stored only as an AES-256-GCM envelope bound to the integration id and tenant id.
 */

/** What the use cases need. */
export interface OnboardingDeps {
  db: Kysely<Database>;
  http: HttpClient;
  cloud: CloudProfile;
  kek: KeyEncryptionKey;
  logger: Logger;
  /** Page sizes asked of Graph and Dataverse. */
  pageSize?: { graph: number; dataverse: number };
}

/** An integration as shown to people and scripts: never the secret. */
export interface IntegrationView {
  id: string;
  name: string;
  mode: string;
  tenantId: string;
  clientId: string;
  servicePrincipalObjectId: string | null;
  secretExpiresAt: string | null;
  /** Whole days until the secret expires (negative once expired). */
  secretDaysLeft: number | null;
  createdAt: string;
  verifiedAt: string | null;
  verification: VerificationReport | null;
}

/** Shapes a row for output. */
export function toView(row: repo.IntegrationRow, now = Date.now()): IntegrationView {
  return {
    id: row.id,
    name: row.name,
    mode: row.mode,
    tenantId: row.tenant_id,
    clientId: row.client_id,
    servicePrincipalObjectId: row.sp_object_id,
    secretExpiresAt: row.secret_expires_at,
    secretDaysLeft: row.secret_expires_at ? Math.floor((Date.parse(row.secret_expires_at) - now) / 86_400_000) : null,
    createdAt: row.created_at,
    verifiedAt: row.verified_at,
    verification: row.verification ? (JSON.parse(row.verification) as VerificationReport) : null,
  };
}

/** Days before expiry from which Vigil warns about the client secret. */
export const SECRET_WARNING_DAYS = 30;

/**
 * A warning when the integration's client secret has expired or expires within {@link SECRET_WARNING_DAYS} days,
 * naming the portal page where a new one is created; null otherwise.
 */
export function secretExpiryWarning(view: Pick<IntegrationView, 'name' | 'secretDaysLeft' | 'secretExpiresAt'>): string | null {
  if (view.secretDaysLeft === null || view.secretDaysLeft > SECRET_WARNING_DAYS) return null;
  const when = view.secretDaysLeft < 0 ? `expired on ${view.secretExpiresAt!.slice(0, 10)}` : `expires in ${view.secretDaysLeft} days (${view.secretExpiresAt!.slice(0, 10)})`;
  return `The client secret of ${view.name} ${when}. Create a new one under App registrations > your app > Certificates & secrets and give it to Vigil.`;
}

const aad = (row: { id: string; tenant_id: string }) => `${row.id}|${row.tenant_id}`;

/** A stream context for one integration's credentials. */
export function streamContext(deps: Pick<OnboardingDeps, 'http' | 'cloud' | 'logger' | 'pageSize'>, tokens: ClientCredentialProvider): StreamContext {
  return { tenantId: tokens.tenantId, http: deps.http, cloud: deps.cloud, tokens, logger: deps.logger, graphPageSize: deps.pageSize?.graph, dataversePageSize: deps.pageSize?.dataverse };
}

/** Raw input of {@link addCustomerAppIntegration} (validated inside). */
export interface AddCustomerAppRequest {
  name?: string;
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  secretExpires?: string;
}

/**
 * Mode A: validates the input, verifies the credentials and setup against the tenant, and only then stores the
 * integration with its encrypted secret.
 *
 * @throws VigilError `invalid-input` for a bad field; `AADSTS…` when Entra ID rejects the credentials (nothing is
 *   saved); `conflict` / `INTEGRATION_EXISTS` when this tenant and client id are already integrated.
 */
export async function addCustomerAppIntegration(deps: OnboardingDeps, request: AddCustomerAppRequest): Promise<{ integration: IntegrationView; report: VerificationReport }> {
  const input = validateCustomerAppInput(request);
  const existing = await repo.findIntegrationByApp(deps.db, input.tenantId, input.clientId);
  if (existing) {
    throw new VigilError('conflict', 'INTEGRATION_EXISTS', `Tenant ${input.tenantId} with client id ${input.clientId} is already integrated as ${existing.id} (${existing.name}).`, {
      remediation: `Use \`vigil integrations verify ${existing.id}\`, or remove it first.`,
    });
  }
  const tokens = new ClientCredentialProvider({ cloud: deps.cloud, tenantId: input.tenantId, clientId: input.clientId, clientSecret: input.clientSecret, http: deps.http });
  const report = await verifyIntegration({ cloud: deps.cloud, tokens, ctx: streamContext(deps, tokens) }, input);
  const id = newId('int');
  const now = nowIso();
  const row: repo.IntegrationRow = {
    id,
    name: input.name,
    mode: 'customer-app',
    tenant_id: input.tenantId,
    client_id: input.clientId,
    sp_object_id: report.servicePrincipalObjectId,
    secret_envelope: JSON.stringify(encryptSecret(deps.kek, input.clientSecret, aad({ id, tenant_id: input.tenantId }))),
    secret_expires_at: input.secretExpiresAt,
    verification: JSON.stringify(report),
    verified_at: report.checkedAt,
    created_at: now,
    updated_at: now,
  };
  await repo.insertIntegration(deps.db, row);
  deps.logger.info({ integrationId: id, tenantId: input.tenantId, clientId: input.clientId }, 'integration added');
  return { integration: toView(row), report };
}

/**
 * Loads an integration by id or name.
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`.
 */
export async function getIntegration(db: Executor, idOrName: string): Promise<repo.IntegrationRow> {
  const row = await repo.findIntegration(db, idOrName);
  if (!row) {
    throw new VigilError('not-found', 'INTEGRATION_NOT_FOUND', `No integration '${idOrName}'.`, { field: 'integration', remediation: 'Run `vigil integrations list` for the ids.' });
  }
  return row;
}

/**
 * The token provider of a stored integration (decrypts its secret in memory only).
 * @throws VigilError `configuration` when the master key does not open the secret.
 */
export function credentialsFor(deps: Pick<OnboardingDeps, 'http' | 'cloud' | 'kek'>, row: repo.IntegrationRow): ClientCredentialProvider {
  if (!row.secret_envelope) throw new VigilError('configuration', 'NO_SECRET', `Integration ${row.id} has no stored secret.`, { remediation: 'Remove and add the integration again.' });
  const secret = decryptSecret(deps.kek, JSON.parse(row.secret_envelope) as Envelope, aad(row));
  return new ClientCredentialProvider({ cloud: deps.cloud, tenantId: row.tenant_id, clientId: row.client_id, clientSecret: secret, http: deps.http });
}

/**
 * Re-runs verification for a stored integration and stores the report.
 * @throws VigilError as {@link verifyIntegration}.
 */
export async function verifyStoredIntegration(deps: OnboardingDeps, idOrName: string): Promise<{ integration: IntegrationView; report: VerificationReport }> {
  const row = await getIntegration(deps.db, idOrName);
  const tokens = credentialsFor(deps, row);
  const report = await verifyIntegration({ cloud: deps.cloud, tokens, ctx: streamContext(deps, tokens) }, { tenantId: row.tenant_id, clientId: row.client_id });
  await repo.updateVerification(deps.db, row.id, report, report.checkedAt);
  return { integration: toView({ ...row, verification: JSON.stringify(report), verified_at: report.checkedAt }), report };
}

/** All integrations. */
export async function listIntegrationViews(db: Executor): Promise<IntegrationView[]> {
  return (await repo.listIntegrations(db)).map((r) => toView(r));
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
