import { getOrganizationByName } from '../access/index.ts';
import { VigilError } from '../core/errors.ts';
import { isGuid, normalizeGuid } from '../core/ids.ts';
import { nowIso, type Executor } from '../store/db.ts';
import * as repo from '../store/repositories/bindings.ts';
import type { BindingMethod } from '../store/schema.ts';

/**
 * Tenant bindings: a Microsoft Entra tenant belongs to the organization whose administrator proved it — an OpenID
 * Connect sign-in of one of the tenant's consent-capable administrators inside a consent flow the organization started
 * (`oidc-admin`), a working Mode A client secret of an app an administrator granted permissions to (`mode-a-secret`),
 * or the operator's explicit choice (`operator`). The threat model is in docs/security.md.
 */

/** A binding as the CLI shows it. */
export interface TenantBindingView {
  tenantId: string;
  organizationId: string;
  organization: string;
  method: BindingMethod;
  provenBy: string | null;
  /** ISO 8601 UTC. */
  provenAt: string;
}

/**
 * The one answer given to an organization for a tenant it has not proven — whether the tenant never consented,
 * consented through another organization's link, or is bound to another organization — so that no answer tells one
 * organization anything about another's tenants.
 */
export function tenantNotProven(tenantId: string): VigilError {
  return new VigilError('TENANT_NOT_PROVEN', `Your organization has not proven that it administers tenant ${tenantId}.`, {
    field: 'tenantId',
    remediation: (_, act) =>
      `Prove you administer this tenant: ${act({ do: 'consentLink', tenant: tenantId })}, open it in a private browser window, accept as a Global Administrator or Privileged Role Administrator of the tenant, and complete the sign-in that follows; then add the integration.`,
  });
}

/**
 * Refuses unless `tenantId` is bound to `organizationId`.
 * @throws VigilError `authorization` / `TENANT_NOT_PROVEN` (see {@link tenantNotProven}).
 */
export async function requireTenantBinding(db: Executor, tenantId: string, organizationId: string): Promise<void> {
  const binding = await repo.findBinding(db, tenantId);
  if (!binding || binding.organization_id !== organizationId) throw tenantNotProven(tenantId);
}

/** Outcome of {@link recordProof}: the binding in force and whether it is the prover's. */
export type ProofOutcome = { bound: true; binding: repo.TenantBindingRow } | { bound: false };

/**
 * Records a proof for an organization: binds the tenant unless it is bound already. A tenant bound to another
 * organization stays where it is (`bound: false`); only the operator moves a tenant.
 */
export async function recordProof(
  db: Executor,
  proof: { tenantId: string; organizationId: string; method: BindingMethod; provenBy: string | null; provenByOid?: string | null },
): Promise<ProofOutcome> {
  const binding = await repo.insertBindingIfAbsent(db, {
    tenant_id: proof.tenantId,
    organization_id: proof.organizationId,
    method: proof.method,
    proven_by: proof.provenBy,
    proven_by_oid: proof.provenByOid ?? null,
    proven_at: nowIso(),
  });
  return binding.organization_id === proof.organizationId ? { bound: true, binding } : { bound: false };
}

function requireTenantId(tenantId: string | undefined): string {
  const t = normalizeGuid(tenantId ?? '');
  if (!isGuid(t))
    throw new VigilError('INVALID_TENANT_ID', (name) => `${name('tenantId')} must be a tenant id (GUID)${tenantId ? ` (got "${tenantId}")` : ''}.`, {
      field: 'tenantId',
    });
  return t;
}

/**
 * The operator binds a tenant to an existing organization (replacing any binding), method `operator`.
 * @throws VigilError `invalid-input` (tenant id), `not-found` / `ORGANIZATION_NOT_FOUND`.
 */
export async function bindTenant(db: Executor, input: { tenantId?: string; organization: string; by?: string }): Promise<TenantBindingView> {
  const tenantId = requireTenantId(input.tenantId);
  const org = await getOrganizationByName(db, input.organization);
  await repo.upsertBinding(db, {
    tenant_id: tenantId,
    organization_id: org.id,
    method: 'operator',
    proven_by: input.by ?? 'operator',
    proven_by_oid: null,
    proven_at: nowIso(),
  });
  return (await listTenantBindings(db)).find((b) => b.tenantId === tenantId)!;
}

/**
 * Removes a tenant's binding (its integrations stay; new integrations for it need a new proof).
 * @throws VigilError `not-found` / `TENANT_NOT_BOUND`.
 */
export async function unbindTenant(db: Executor, tenantIdInput: string | undefined): Promise<{ tenantId: string }> {
  const tenantId = requireTenantId(tenantIdInput);
  if (!(await repo.deleteBinding(db, tenantId)))
    throw new VigilError('TENANT_NOT_BOUND', `Tenant ${tenantId} is not bound to any organization.`, {
      field: 'tenantId',
    });
  return { tenantId };
}

/** Every binding, by organization name then tenant id. */
export async function listTenantBindings(db: Executor): Promise<TenantBindingView[]> {
  return (await repo.listBindings(db)).map((b) => ({
    tenantId: b.tenant_id,
    organizationId: b.organization_id,
    organization: b.organization_name,
    method: b.method,
    provenBy: b.proven_by,
    provenAt: b.proven_at,
  }));
}
