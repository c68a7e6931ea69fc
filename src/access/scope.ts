import { type ErrorText, VigilError } from '../core/errors.ts';
import type { Executor } from '../store/db.ts';
import {
  findIntegration,
  findOrganizationIntegration,
  listIntegrations,
  listOrganizationIntegrations,
  type IntegrationRow,
} from '../store/repositories/integrations.ts';
import type { Caller, Role } from './index.ts';

/**
 * Organization scoping: every object the API serves belongs to one organization through its integration, and a
 * caller sees only its own. Another organization's object is answered exactly like one that does not exist
 * (`not-found`), so the API never confirms that it exists (OWASP API Security Top 10 2023, API1 "Broken Object Level
 * Authorization": check ownership on every object id, answer 404). The operator at the command line is scoped the
 * same way: to the organization named with `--organization`, or to every organization (`organizationId` null).
 */

/** The caller field scoping reads: the caller's organization, or null for the operator's view of every organization. */
type Scope = Pick<Caller, 'organizationId'>;

/** The integration `id` within the scope (every integration for a null organization), or undefined. */
async function scopedIntegration(db: Executor, scope: Scope, id: string): Promise<IntegrationRow | undefined> {
  if (scope.organizationId !== null) return findOrganizationIntegration(db, scope.organizationId, id);
  const row = await findIntegration(db, id);
  return row?.id === id ? row : undefined;
}

/** The integrations within the scope, oldest first. */
export async function integrationsInScope(db: Executor, scope: Scope): Promise<IntegrationRow[]> {
  return scope.organizationId === null ? listIntegrations(db) : listOrganizationIntegrations(db, scope.organizationId);
}

/** The objects an id can name, with the code of their not-found error. */
const NOT_FOUND = {
  integration: 'INTEGRATION_NOT_FOUND',
  finding: 'FINDING_NOT_FOUND',
  alert: 'ALERT_NOT_FOUND',
  run: 'RUN_NOT_FOUND',
  agent: 'AGENT_NOT_FOUND',
  event: 'EVENT_NOT_FOUND',
} as const;

/** The not-found error of an object outside the caller's organization, or absent. */
export function notFound(what: keyof typeof NOT_FOUND, id: string, remediation?: ErrorText): VigilError {
  return new VigilError(NOT_FOUND[what], `No ${what} '${id}'.`, remediation ? { remediation } : {});
}

/**
 * The integration `id` if it belongs to the principal's organization (by id only: names are not unique across
 * organizations).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND` when absent or another organization's.
 */
export async function integrationOf(db: Executor, principal: Scope, id: string): Promise<IntegrationRow> {
  const row = await scopedIntegration(db, principal, id);
  if (!row) throw notFound('integration', id, 'List the integrations with GET /api/v1/integrations.');
  return row;
}

/**
 * The integrations a list is read from: the one asked for (checked to be the organization's) or all of them.
 * @throws VigilError `not-found` when `integrationId` is not the organization's.
 */
export async function scopeIntegrations(db: Executor, principal: Scope, integrationId: string | undefined): Promise<string[]> {
  if (integrationId) return [(await integrationOf(db, principal, integrationId)).id];
  return (await integrationsInScope(db, principal)).map((r) => r.id);
}

/**
 * The owning integration of an object that carries an `integration_id` (finding, alert, run), checked against the
 * caller's organization.
 * @throws VigilError `not-found` naming `what` when the object is absent or another organization's.
 */
export async function requireOwned<T extends { integration_id: string }>(
  db: Executor,
  principal: Scope,
  what: keyof typeof NOT_FOUND,
  id: string,
  row: T | undefined,
  remediation?: ErrorText,
): Promise<T> {
  if (!row) throw notFound(what, id, remediation);
  if (!(await scopedIntegration(db, principal, row.integration_id))) throw notFound(what, id, remediation);
  return row;
}

/**
 * Refuses a principal below `role` (admin > viewer).
 * @throws VigilError `authorization` / `FORBIDDEN_ROLE`.
 */
export function requireRole(principal: Pick<Caller, 'role'>, role: Role): void {
  if (role === 'admin' && principal.role !== 'admin') {
    throw new VigilError('FORBIDDEN_ROLE', 'This needs the admin role; you are signed in as a viewer.');
  }
}
