import type { FoundryDeploymentAttrs } from '../../../core/estate/foundry.ts';
import { num, obj, str } from '../../../core/json.ts';
import { accountChildStream, type AccountChildAttrs } from '../cognitiveServices.ts';

/**
 * `foundryDeployments` (parent `foundryAccounts`, slice = account id): `GET {accountId}/deployments?api-version=
 * 2025-06-01`, `nextLink` paging. Source: azure-rest-api-specs `…/2025-06-01/examples/GetDeployment.json`.
 */

/** Model deployments of every collected account, with their content filter (RAI policy). */
export const foundryDeploymentsStream = accountChildStream('foundryDeployments', 'deployments', (j): AccountChildAttrs<FoundryDeploymentAttrs> => {
  const p = obj(j.properties);
  const model = obj(p.model);
  const sku = obj(j.sku);
  const rai = str(p.raiPolicyName);
  return {
    modelFormat: str(model.format),
    modelName: str(model.name),
    modelVersion: str(model.version),
    sku: str(sku.name),
    capacity: num(sku.capacity),
    raiPolicyName: rai,
    contentFilterMissing: rai === null || rai === '',
    provisioningState: str(p.provisioningState),
  };
});
