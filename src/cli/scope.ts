import { userInfo } from 'node:os';
import { getOrganizationByName, operator, type Operator } from '../access/index.ts';
import { notFound } from '../access/scope.ts';
import { getIntegration } from '../integration/index.ts';
import type { OrganizationsTable } from '../store/schema.ts';
import type { Executor } from '../store/db.ts';
import type { IntegrationRow } from '../store/repositories/integrations.ts';

/** Help text of `--organization` on the commands that list an organization's objects. */
export const ORGANIZATION_FILTER_HELP = "only this organization's integrations (must exist; see `vigil organizations list`)";

/**
 * Help text of `--organization` on the commands that act on one object (a finding, an alert): the operator acts as
 * that organization, and an object of another organization is refused as the API refuses it (not found).
 */
export const ORGANIZATION_OBJECT_HELP = 'act within this organization only: an object of another organization is not found, as through the API';

/** The options that narrow what a CLI command reads. */
interface ScopeOptions {
  integration?: string;
  organization?: string;
}

/**
 * The integration `--integration` names (id or name), checked to belong to `org` when one is given, as an API
 * caller's must (src/access/scope.ts).
 * @throws VigilError `not-found` for an unknown integration or one of another organization.
 */
async function integrationIn(db: Executor, input: string, org: OrganizationsTable | undefined): Promise<IntegrationRow> {
  const row = await getIntegration(db, input);
  if (org && row.organization_id !== org.id)
    throw notFound(
      'integration',
      input,
      `It is not an integration of organization "${org.name}": run \`vigil integrations list --organization ${JSON.stringify(org.name)}\`.`,
    );
  return row;
}

/** Who decides, for history entries: `--by`, else the operating-system user (`operator` when it has no name). */
function operatorName(by: string | undefined): string {
  if (by?.trim()) return by.trim();
  try {
    return userInfo().username;
  } catch {
    return 'operator';
  }
}

/**
 * The caller a CLI command passes to the use cases (src/reporting): the operator, named `by` (else the
 * operating-system user), seeing every organization or the one `--organization` names; and the integration
 * `--integration` names (id or name) as its id, checked to belong to that organization.
 * @throws VigilError `not-found` for an unknown organization or integration, or an integration of another organization.
 */
export async function operatorScope(db: Executor, opts: ScopeOptions, by?: string): Promise<{ caller: Operator; integrationId: string | undefined }> {
  const org = opts.organization !== undefined ? await getOrganizationByName(db, opts.organization) : undefined;
  const integrationId = opts.integration ? (await integrationIn(db, opts.integration, org)).id : undefined;
  return { caller: operator(operatorName(by), org?.id ?? null), integrationId };
}
