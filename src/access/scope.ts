import { VigilError } from '../core/errors.ts';
import type { Executor } from '../store/db.ts';
import { findOrganizationIntegration, listOrganizationIntegrations, type IntegrationRow } from '../store/repositories/integrations.ts';
import type { Principal, Role } from './index.ts';

/**
 * Organization scoping: every object the API serves belongs to one organization through its integration, and a
 * caller sees only its own. Another organization's object is answered exactly like one that does not exist
 * (`not-found`), so the API never confirms that it exists (OWASP API Security Top 10 2023, API1 "Broken Object Level
 * Authorization": check ownership on every object id, answer 404).
 */

/** The objects an id can name, with the code of their not-found error. */
const NOT_FOUND = {
  integration: 'INTEGRATION_NOT_FOUND',
  finding: 'FINDING_NOT_FOUND',
  alert: 'ALERT_NOT_FOUND',
  run: 'RUN_NOT_FOUND',
  agent: 'AGENT_NOT_FOUND',
} as const;

/** The not-found error of an object outside the caller's organization, or absent. */
export function notFound(what: keyof typeof NOT_FOUND, id: string, remediation?: string): VigilError {
  return new VigilError('not-found', NOT_FOUND[what], `No ${what} '${id}'.`, remediation ? { remediation } : {});
}

/**
 * The integration `id` if it belongs to the principal's organization (by id only: names are not unique across
 * organizations).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND` when absent or another organization's.
 */
export async function integrationOf(db: Executor, principal: Pick<Principal, 'organizationId'>, id: string): Promise<IntegrationRow> {
  const row = await findOrganizationIntegration(db, principal.organizationId, id);
  if (!row) throw notFound('integration', id, 'List the integrations with GET /api/v1/integrations.');
  return row;
}

/** Ids of the organization's integrations, oldest first. */
async function organizationIntegrationIds(db: Executor, organizationId: string): Promise<string[]> {
  return (await listOrganizationIntegrations(db, organizationId)).map((r) => r.id);
}

/**
 * The integrations a list is read from: the one asked for (checked to be the organization's) or all of them.
 * @throws VigilError `not-found` when `integrationId` is not the organization's.
 */
export async function scopeIntegrations(db: Executor, principal: Pick<Principal, 'organizationId'>, integrationId: string | undefined): Promise<string[]> {
  if (integrationId) return [(await integrationOf(db, principal, integrationId)).id];
  return organizationIntegrationIds(db, principal.organizationId);
}

/**
 * The owning integration of an object that carries an `integration_id` (finding, alert, run), checked against the
 * caller's organization.
 * @throws VigilError `not-found` naming `what` when the object is absent or another organization's.
 */
export async function requireOwned<T extends { integration_id: string }>(
  db: Executor,
  principal: Pick<Principal, 'organizationId'>,
  what: keyof typeof NOT_FOUND,
  id: string,
  row: T | undefined,
): Promise<T> {
  if (!row) throw notFound(what, id);
  if (!(await findOrganizationIntegration(db, principal.organizationId, row.integration_id))) throw notFound(what, id);
  return row;
}

/**
 * Refuses a principal below `role` (admin > viewer).
 * @throws VigilError `authorization` / `FORBIDDEN_ROLE`.
 */
export function requireRole(principal: Pick<Principal, 'role'>, role: Role): void {
  if (role === 'admin' && principal.role !== 'admin') {
    throw new VigilError('authorization', 'FORBIDDEN_ROLE', 'This needs the admin role; you are signed in as a viewer.');
  }
}
