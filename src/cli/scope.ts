import { getOrganizationByName } from '../access/index.ts';
import { notFound } from '../access/scope.ts';
import { getIntegration } from '../onboarding/integrations.ts';
import type { Executor } from '../store/db.ts';
import { listIntegrations, listOrganizationIntegrations } from '../store/repositories/integrations.ts';

/** Help text of `--organization` on the commands that list an organization's objects. */
export const ORGANIZATION_FILTER_HELP = "only this organization's integrations (must exist; see `vigil organizations list`)";

/**
 * The integrations a CLI list or export reads: `--integration` (id or name), else every integration of
 * `--organization`, else every integration (the operator sees all organizations). With both, the integration must
 * belong to the organization, as an API caller's must (src/access/scope.ts).
 * @returns integration ids, oldest first; `undefined` when neither option narrows the list.
 * @throws VigilError `not-found` for an unknown integration or organization (the latter naming the existing ones),
 *   or an integration of another organization.
 */
export async function integrationScope(db: Executor, opts: { integration?: string; organization?: string }): Promise<string[] | undefined> {
  const org = opts.organization !== undefined ? await getOrganizationByName(db, opts.organization) : undefined;
  if (opts.integration) {
    const row = await getIntegration(db, opts.integration);
    if (org && row.organization_id !== org.id)
      throw notFound(
        'integration',
        opts.integration,
        `It is not an integration of organization "${org.name}": run \`vigil integrations list --organization ${JSON.stringify(org.name)}\`.`,
      );
    return [row.id];
  }
  return org ? (await listOrganizationIntegrations(db, org.id)).map((r) => r.id) : undefined;
}

/** Every integration in scope as rows (for commands that need more than ids). */
export async function integrationRowsInScope(db: Executor, opts: { integration?: string; organization?: string }) {
  const ids = await integrationScope(db, opts);
  const all = await listIntegrations(db);
  return ids ? all.filter((r) => ids.includes(r.id)) : all;
}
