import type { Executor } from '../db.ts';
import type { IntegrationsTable } from '../schema.ts';

/** Integration rows. The secret column holds an encrypted envelope only (see platform/crypto). */
export type IntegrationRow = IntegrationsTable;

/** Inserts a new integration (credential state `ok` unless given). */
export async function insertIntegration(
  db: Executor,
  row: Omit<IntegrationRow, 'credential_state' | 'credential_error' | 'secret_rotated_at'> & Partial<IntegrationRow>,
): Promise<void> {
  await db
    .insertInto('integrations')
    .values({ credential_state: 'ok', credential_error: null, secret_rotated_at: null, ...row })
    .execute();
}

/** Records that Entra ID refused the integration's credentials (`expired` or `rejected`), with the fix. */
export async function setCredentialState(db: Executor, id: string, state: 'ok' | 'expired' | 'rejected', error: string | null, at: string): Promise<void> {
  await db.updateTable('integrations').set({ credential_state: state, credential_error: error, updated_at: at }).where('id', '=', id).execute();
}

/** Swaps in a new secret envelope and expiry and clears the credential state. */
export async function replaceSecret(db: Executor, id: string, envelope: string, expiresAt: string, at: string): Promise<void> {
  await db
    .updateTable('integrations')
    .set({ secret_envelope: envelope, secret_expires_at: expiresAt, secret_rotated_at: at, credential_state: 'ok', credential_error: null, updated_at: at })
    .where('id', '=', id)
    .execute();
}

/** An integration by its id, or by its name when no id matches; undefined when neither exists. */
export async function findIntegration(db: Executor, idOrName: string): Promise<IntegrationRow | undefined> {
  return (
    (await db.selectFrom('integrations').selectAll().where('id', '=', idOrName).executeTakeFirst()) ??
    (await db.selectFrom('integrations').selectAll().where('name', '=', idOrName).executeTakeFirst())
  );
}

/**
 * Ids of integrations starting with `prefix`, at most `limit`, in id order. `prefix` is a kind and hexadecimal digits
 * (`int_3f2a`, see core `idPrefix`): its one `_` matching any character as a LIKE wildcard matches only itself here.
 */
export async function integrationIdsStartingWith(db: Executor, prefix: string, limit = 11): Promise<string[]> {
  return idsStartingWith(db, 'integrations', prefix, limit);
}

/** Ids in `table` starting with `prefix` (a kind and hexadecimal digits, as {@link integrationIdsStartingWith}). */
export async function idsStartingWith(
  db: Executor,
  table: 'integrations' | 'findings' | 'alerts' | 'collection_runs',
  prefix: string,
  limit = 11,
): Promise<string[]> {
  if (!/^[a-z]+_[0-9a-f]*$/.test(prefix)) return [];
  return (await db.selectFrom(table).select('id').where('id', 'like', `${prefix}%`).orderBy('id').limit(limit).execute()).map((r) => r.id as string);
}

/** An integration by tenant id and client id (the natural key). */
export async function findIntegrationByApp(db: Executor, tenantId: string, clientId: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('tenant_id', '=', tenantId).where('client_id', '=', clientId).executeTakeFirst();
}

/** The integration `id` if the organization owns it (by id only: names are not unique across organizations). */
export async function findOrganizationIntegration(db: Executor, organizationId: string, id: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
}

/** An organization's integrations, oldest first. */
export async function listOrganizationIntegrations(db: Executor, organizationId: string): Promise<IntegrationRow[]> {
  return db.selectFrom('integrations').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').execute();
}

/** All integrations, oldest first. */
export async function listIntegrations(db: Executor): Promise<IntegrationRow[]> {
  return db.selectFrom('integrations').selectAll().orderBy('created_at').execute();
}

/** Stores the latest verification report (JSON) of an integration. */
export async function updateVerification(db: Executor, id: string, verification: unknown, at: string): Promise<void> {
  await db
    .updateTable('integrations')
    .set({ verification: JSON.stringify(verification), verified_at: at, updated_at: at })
    .where('id', '=', id)
    .execute();
}

/** Deletes an integration and, by cascade, everything collected for it. Returns true when a row was deleted. */
export async function deleteIntegration(db: Executor, id: string): Promise<boolean> {
  const r = await db.deleteFrom('integrations').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Records a new service principal Object ID (Mode B: consent granted again). */
export async function updateServicePrincipalObjectId(db: Executor, id: string, objectId: string, at: string): Promise<void> {
  await db.updateTable('integrations').set({ sp_object_id: objectId, updated_at: at }).where('id', '=', id).execute();
}

/** Every stored secret envelope (JSON text) with its integration, for the master-key checks. */
export async function listSecretEnvelopes(db: Executor): Promise<{ id: string; name: string; secret_envelope: string }[]> {
  const rows = await db.selectFrom('integrations').select(['id', 'name', 'secret_envelope']).where('secret_envelope', 'is not', null).orderBy('name').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, secret_envelope: r.secret_envelope! }));
}

/** Forgets an integration's stored secret (it can no longer be opened) and stops its collections with `error` as the fix. */
export async function forgetSecret(db: Executor, id: string, error: string, at: string): Promise<void> {
  await db
    .updateTable('integrations')
    .set({ secret_envelope: null, credential_state: 'rejected', credential_error: error, updated_at: at })
    .where('id', '=', id)
    .execute();
}
