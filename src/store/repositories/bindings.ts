import type { Executor } from '../db.ts';
import type { ConsentFlowsTable, TenantBindingsTable } from '../schema.ts';

/** Tenant bindings and consent flows (migration 0012). Tenant ids are stored lower case. */
export type TenantBindingRow = TenantBindingsTable;
export type ConsentFlowRow = ConsentFlowsTable;

/** The binding of a tenant, or undefined. */
export async function findBinding(db: Executor, tenantId: string): Promise<TenantBindingRow | undefined> {
  return db.selectFrom('tenant_bindings').selectAll().where('tenant_id', '=', tenantId.toLowerCase()).executeTakeFirst();
}

/**
 * Records a binding unless the tenant is bound already. Returns the binding now in force (the new one, or the
 * existing one, which may belong to another organization: the caller decides what that means).
 */
export async function insertBindingIfAbsent(db: Executor, row: TenantBindingRow): Promise<TenantBindingRow> {
  const value = { ...row, tenant_id: row.tenant_id.toLowerCase() };
  await db
    .insertInto('tenant_bindings')
    .values(value)
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute();
  return (await findBinding(db, value.tenant_id))!;
}

/** Binds a tenant to an organization, replacing any binding (the operator's explicit choice). */
export async function upsertBinding(db: Executor, row: TenantBindingRow): Promise<void> {
  const value = { ...row, tenant_id: row.tenant_id.toLowerCase() };
  await db
    .insertInto('tenant_bindings')
    .values(value)
    .onConflict((oc) =>
      oc.column('tenant_id').doUpdateSet({
        organization_id: value.organization_id,
        method: value.method,
        proven_by: value.proven_by,
        proven_by_oid: value.proven_by_oid,
        proven_at: value.proven_at,
      }),
    )
    .execute();
}

/** Removes a tenant's binding; true when one was removed. */
export async function deleteBinding(db: Executor, tenantId: string): Promise<boolean> {
  const r = await db.deleteFrom('tenant_bindings').where('tenant_id', '=', tenantId.toLowerCase()).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Every binding with its organization's name, by organization then tenant. */
export async function listBindings(db: Executor): Promise<(TenantBindingRow & { organization_name: string })[]> {
  return db
    .selectFrom('tenant_bindings')
    .innerJoin('organizations', 'organizations.id', 'tenant_bindings.organization_id')
    .selectAll('tenant_bindings')
    .select('organizations.name as organization_name')
    .orderBy('organizations.name')
    .orderBy('tenant_bindings.tenant_id')
    .execute();
}

export async function insertConsentFlow(db: Executor, row: ConsentFlowRow): Promise<void> {
  await db.insertInto('consent_flows').values(row).execute();
}

export async function findConsentFlow(db: Executor, id: string): Promise<ConsentFlowRow | undefined> {
  return db.selectFrom('consent_flows').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Moves a flow from `from` to `to` (with the given fields) only if it is still at `from` and not expired at `now`:
 * the single-use guarantee. Returns true for the one caller that wins; a replay or a concurrent second use gets false.
 */
export async function advanceConsentFlow(
  db: Executor,
  id: string,
  from: ConsentFlowRow['stage'],
  to: ConsentFlowRow['stage'],
  now: string,
  set: Partial<Pick<ConsentFlowRow, 'nonce' | 'verifier_envelope' | 'expires_at'>> = {},
): Promise<boolean> {
  const r = await db
    .updateTable('consent_flows')
    .set({ ...set, stage: to, used_at: now })
    .where('id', '=', id)
    .where('stage', '=', from)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Deletes flows that expired before `before` (ISO 8601); returns how many. */
export async function deleteExpiredConsentFlows(db: Executor, before: string): Promise<number> {
  const r = await db.deleteFrom('consent_flows').where('expires_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
