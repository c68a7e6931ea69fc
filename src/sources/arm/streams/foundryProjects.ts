import type { FoundryProjectAttrs } from '../../../core/estate/foundry.ts';
import { bool, obj, str } from '../../../core/json.ts';
import { accountChildStream, type AccountChildAttrs } from '../cognitiveServices.ts';

/**
 * `foundryProjects` (parent `foundryAccounts`, slice = account id): `GET {accountId}/projects?api-version=2025-06-01`,
 * `nextLink` paging. Source: azure-rest-api-specs `…/2025-06-01/examples/GetProject.json`.
 */

/** Foundry projects of every collected account. */
export const foundryProjectsStream = accountChildStream('foundryProjects', 'projects', (j): AccountChildAttrs<FoundryProjectAttrs> => {
  const p = obj(j.properties);
  return {
    displayName: str(p.displayName),
    isDefault: bool(p.isDefault),
    location: str(j.location),
    provisioningState: str(p.provisioningState),
  };
});
