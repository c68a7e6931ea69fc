import { bool, obj, str } from '../../../core/json.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import type { Stream } from '../../stream.ts';
import { accountChildStream, type AccountChildAttrs } from '../cognitiveServices.ts';

/**
 * `foundryProjects` (parent `foundryAccounts`, slice = account id): `GET {accountId}/projects?api-version=2025-06-01`,
 * `nextLink` paging. Source: azure-rest-api-specs `…/2025-06-01/examples/GetProject.json`.
 */

/**
 * A Foundry project (`accounts/projects`). `id` = ARM id as returned; slice = the account's id.
 *
 * Source: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/GetProject.json`.
 */
export interface FoundryProjectAttrs {
  accountId: string;
  subscriptionId: string;
  displayName: string | null;
  isDefault: boolean | null;
  location: string | null;
  provisioningState: string | null;
}

/** Foundry projects of every collected account. */
export const foundryProjectsStream: Stream<'foundryProjects', EstateObject<FoundryProjectAttrs>, 'foundry-projects'> = accountChildStream(
  'foundryProjects',
  'projects',
  (j): AccountChildAttrs<FoundryProjectAttrs> => {
    const p = obj(j.properties);
    return {
      displayName: str(p.displayName),
      isDefault: bool(p.isDefault),
      location: str(j.location),
      provisioningState: str(p.provisioningState),
    };
  },
  { kind: 'foundry-projects', position: 100 },
);
