import type { EnvironmentSettingsAttrs } from '../../../core/estate/environmentSettings.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { REFRESH_SECONDS } from '../../stream.ts';
import { dataverseEntityStream } from '../entity.ts';
import { str, bool, type Json } from '../../../core/json.ts';

/**
 * `environmentSettings`: per environment with Dataverse (parent `environments`, slice = environment name), the single
 * row of `GET {instanceUrl}/api/data/v9.2/organizations?$select={ORGANIZATION_FIELDS}`, paged with the shared Dataverse
 * helper (`entityPages`: `Prefer: odata.maxpagesize`, `@odata.nextLink`). A full read each round (no change
 * tracking on `organization`); an environment whose Dataverse refuses the application user (403 `0x80072560` /
 * `0x80040220`) is recorded as an errored slice, and checks say "not evaluated" for it.
 *
 * Sources: Dataverse `organization` EntityType (columns below); Microsoft Learn "Content security policy"
 * (power-platform/admin/content-security-policy); "Query data using the Web API" (`$select`).
 */

/** Columns of `organization` read. */
const ORGANIZATION_FIELDS = [
  'organizationid',
  'name',
  'iscontentsecuritypolicyenabled',
  'iscontentsecuritypolicyenabledforcanvas',
  'contentsecuritypolicyconfiguration',
  'contentsecuritypolicyconfigurationforcanvas',
  'contentsecuritypolicyreporturi',
].join(',');

/** Maps an `organization` row of environment `environmentId` to its settings object (id = the environment name). */
function toEnvironmentSettings(environmentId: string, j: Json): EstateObject<EnvironmentSettingsAttrs> {
  return {
    sliceKey: environmentId,
    id: environmentId,
    name: str(j.name),
    attrs: {
      environmentId,
      organizationId: str(j.organizationid),
      cspEnforcedModelDriven: bool(j.iscontentsecuritypolicyenabled),
      cspEnforcedCanvas: bool(j.iscontentsecuritypolicyenabledforcanvas),
      cspReportUri: str(j.contentsecuritypolicyreporturi),
      cspConfigurationModelDriven: str(j.contentsecuritypolicyconfiguration),
      cspConfigurationCanvas: str(j.contentsecuritypolicyconfigurationforcanvas),
    },
    raw: j,
  };
}

/** Environment-level Dataverse settings (the `organization` row) of every environment with Dataverse. */
export const environmentSettingsStream = dataverseEntityStream({
  name: 'environmentSettings',
  primaryKey: ['id'],
  refreshSeconds: REFRESH_SECONDS.environmentInventory,
  entitySet: 'organizations',
  select: ORGANIZATION_FIELDS,
  map: (j, slice) => toEnvironmentSettings(slice.key, j),
});
