import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { describeAction, type ActionNamer } from '../core/actions.ts';
import { VigilError } from '../core/errors.ts';
import { idPrefix, pickByPrefix } from '../core/ids.ts';
import type { CloudProfile } from '../config/cloud.ts';
import type { VigilConfig } from '../config/index.ts';
import { decryptSecret, type Envelope, type KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import type { HttpClient } from '../platform/http/client.ts';
import { ClientCredentialProvider, loadCertificateCredential } from '../platform/identity/index.ts';
import type { Logger } from '../platform/log/index.ts';
import type { CollectionMetrics, IngestionMetrics } from '../platform/metrics/index.ts';
import type { Sinks } from '../sinks/index.ts';
import type { StreamContext } from '../sources/stream.ts';
import { nowIso, type Executor } from '../store/db.ts';
import { findIntegration, integrationIdsStartingWith, setCredentialState, type IntegrationRow } from '../store/repositories/integrations.ts';
import type { Database } from '../store/schema.ts';

/**
 * A stored integration as every use case of it needs it, onboarding (src/onboarding) and collection (src/sync) alike:
 * the runtime's parts they take, loading it by id, name or a start of its id, opening its credentials (the customer
 * app's secret from its envelope, or the operator-managed application's), the stream context of those credentials,
 * recording that Entra ID refused them, and the client secret's expiry warning. Collection imports this module, never
 * onboarding's use cases (test/unit/layers.test.ts).
 */

/** What the use cases of an integration need (onboarding, collection, audit ingestion): the runtime's parts. */
export interface IntegrationDeps {
  db: Kysely<Database>;
  http: HttpClient;
  cloud: CloudProfile;
  kek: KeyEncryptionKey;
  logger: Logger;
  /** Page sizes asked of Graph and Dataverse. */
  pageSize?: { graph: number; dataverse: number };
  /** The operator-managed application (Mode B), the consent settings and the administrator sign-in client. */
  config: Pick<VigilConfig, 'managedApp' | 'consent' | 'adminSignIn'>;
  /** SIEM sinks fed by evaluations and detections, when configured. */
  sinks?: Sinks | undefined;
  /** Prometheus metrics of the process (collection runs, audit events ingested), when the runtime keeps them. */
  metrics?: (CollectionMetrics & IngestionMetrics) | undefined;
}

/** Days before expiry at which Vigil warns about a client secret, furthest first (90, 30 and 7 days). */
const SECRET_WARNING_DAYS = [90, 30, 7] as const;

/**
 * A warning when the integration's client secret has expired or expires within 90 days, naming the portal page
 * where a new one is created and the step that swaps it in (worded by `act`: the domain wording unless the CLI
 * passes its own); null otherwise. The warning tightens at 30 and 7 days.
 */
export function secretExpiryWarning(
  view: { name: string; secretDaysLeft: number | null; secretExpiresAt: string | null; id?: string },
  act: ActionNamer = describeAction,
): string | null {
  if (view.secretDaysLeft === null || view.secretDaysLeft > SECRET_WARNING_DAYS[0]) return null;
  const date = view.secretExpiresAt!.slice(0, 10);
  const when = view.secretDaysLeft < 0 ? `expired on ${date}` : `expires in ${view.secretDaysLeft} days (${date})`;
  const urgency = view.secretDaysLeft <= SECRET_WARNING_DAYS[2] ? 'URGENT: ' : '';
  return `${urgency}The client secret of ${view.name} ${when}. Create a new one under App registrations > your app > Certificates & secrets, then ${act({ do: 'rotateSecret', integration: view.id })}.`;
}

/** Whole days until a client secret expiring at `expiresAt` (ISO 8601) expires, negative once expired; null when unknown. */
export function secretDaysLeft(expiresAt: string | null, now = Date.now()): number | null {
  return expiresAt ? Math.floor((Date.parse(expiresAt) - now) / 86_400_000) : null;
}

/** The additional authenticated data a stored client secret's envelope is bound to: the integration id and tenant id. */
export const secretAad = (row: { id: string; tenant_id: string }) => `${row.id}|${row.tenant_id}`;

/**
 * A stream context for one integration's credentials. Its `http` is the pipeline bound ({@link HttpClient.bind}) to the
 * integration's application (client) ID — the key of the per-app-across-tenants budgets — and to `signal` (a run's
 * stop) when given: every request sent through the context — stream reads, Power Platform admin and Dataverse admin
 * calls alike — ends its budget and `Retry-After` waits when the run is stopped.
 */
export function streamContext(
  deps: Pick<IntegrationDeps, 'http' | 'cloud' | 'logger' | 'pageSize'>,
  tokens: ClientCredentialProvider,
  signal?: AbortSignal,
): StreamContext {
  return {
    tenantId: tokens.tenantId,
    http: deps.http.bind({ signal, appId: tokens.clientId }),
    signal,
    cloud: deps.cloud,
    tokens,
    logger: deps.logger,
    graphPageSize: deps.pageSize?.graph,
    dataversePageSize: deps.pageSize?.dataverse,
  };
}

/**
 * Loads an integration by id, name, or a unique start of its id (`int_3f2a9b1c` as CLI lists show it, or its digits).
 * Not organization-scoped: the API looks integrations up within the caller's organization first and passes full ids.
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND`; `invalid-input` / `AMBIGUOUS_ID` when the start of an id
 *   names several integrations (listed).
 */
export async function getIntegration(db: Executor, idOrName: string): Promise<IntegrationRow> {
  let row = await findIntegration(db, idOrName);
  // A unique start of an id (`int_3f2a9b1c`, as lists show it, or just its digits).
  const prefix = row ? undefined : idPrefix(idOrName, 'int');
  if (prefix) {
    const id = pickByPrefix(idOrName, await integrationIdsStartingWith(db, prefix), { field: 'integration', kind: 'integration' });
    if (id) row = await findIntegration(db, id);
  }
  if (!row) {
    throw new VigilError('INTEGRATION_NOT_FOUND', `No integration '${idOrName}'.`, {
      field: 'integration',
    });
  }
  return row;
}

/**
 * The token provider of a stored integration (decrypts its secret in memory only).
 * @throws VigilError `configuration` when the master key does not open the secret.
 */
export function credentialsFor(deps: Pick<IntegrationDeps, 'http' | 'cloud' | 'kek' | 'config'>, row: IntegrationRow): ClientCredentialProvider {
  if (row.mode === 'managed-app') return managedAppCredentials(deps, row.tenant_id);
  if (!row.secret_envelope) throw new VigilError('NO_SECRET', `Integration ${row.id} has no stored secret.`);
  const secret = decryptSecret(deps.kek, JSON.parse(row.secret_envelope) as Envelope, secretAad(row));
  return new ClientCredentialProvider({ cloud: deps.cloud, tenantId: row.tenant_id, clientId: row.client_id, clientSecret: secret, http: deps.http });
}

/** AADSTS codes that mean the stored credentials no longer work, and the credential state they set. */
const CREDENTIAL_REFUSALS: Record<string, 'expired' | 'rejected'> = {
  AADSTS7000222: 'expired',
  AADSTS7000215: 'rejected',
  AADSTS700016: 'rejected',
  AADSTS7000229: 'rejected',
};

/**
 * When `e` says Entra ID refused the integration's credentials, records the state (`expired` / `rejected`) with the
 * fix on the integration and logs it. Other errors are ignored. Never records the secret.
 */
export async function recordCredentialRefusal(deps: Pick<IntegrationDeps, 'db' | 'logger'>, integrationId: string, e: unknown): Promise<void> {
  if (!(e instanceof VigilError)) return;
  const state = CREDENTIAL_REFUSALS[e.code];
  if (!state) return;
  await setCredentialState(deps.db, integrationId, state, `${e.message} ${e.remediation ?? ''}`.trim(), nowIso());
  deps.logger.error({ integrationId, code: e.code, state }, 'integration credentials refused; collection stopped until they are rotated');
}

/**
 * The managed application's id.
 * @throws VigilError `configuration` when VIGIL_MANAGED_APP_CLIENT_ID is not set.
 */
export function managedAppClientId(config: Pick<VigilConfig, 'managedApp'>): string {
  if (!config.managedApp) {
    throw new VigilError('MANAGED_APP_NOT_CONFIGURED', 'This Vigil deployment has no operator-managed application configured.', {
      field: 'VIGIL_MANAGED_APP_CLIENT_ID',
      remediation: (name) =>
        `Set VIGIL_MANAGED_APP_CLIENT_ID and VIGIL_MANAGED_APP_CLIENT_SECRET (or VIGIL_MANAGED_APP_CERTIFICATE_FILE), or use ${name('mode')} customer-app.`,
    });
  }
  return config.managedApp.clientId;
}

/**
 * Tokens of the managed application in a customer tenant (its secret or certificate comes from the operator's
 * configuration, never from the integration).
 */
export function managedAppCredentials(deps: Pick<IntegrationDeps, 'http' | 'cloud' | 'config'>, tenantId: string): ClientCredentialProvider {
  const clientId = managedAppClientId(deps.config);
  const file = deps.config.managedApp!.certificateFile;
  const certificate = file ? loadCertificateCredential(file, readFileSync(file, 'utf8')) : undefined;
  return new ClientCredentialProvider({
    cloud: deps.cloud,
    tenantId,
    clientId,
    clientSecret: deps.config.managedApp!.clientSecret,
    certificate,
    http: deps.http,
  });
}
