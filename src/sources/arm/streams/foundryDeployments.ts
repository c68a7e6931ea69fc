import { num, obj, str } from '../../../core/json.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import type { Stream } from '../../stream.ts';
import { accountChildStream, type AccountChildAttrs } from '../cognitiveServices.ts';

/**
 * `foundryDeployments` (parent `foundryAccounts`, slice = account id): `GET {accountId}/deployments?api-version=
 * 2025-06-01`, `nextLink` paging. Source: azure-rest-api-specs `…/2025-06-01/examples/GetDeployment.json`.
 */

/**
 * A model deployment (`accounts/deployments`). `id` = ARM id as returned; slice = the account's id.
 *
 * Sources: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/GetDeployment.json`;
 * learn.microsoft.com `/azure/ai-services/openai/concepts/content-filter` (deployments carry
 * `properties.raiPolicyName`; the default policies are `Microsoft.Default` and `Microsoft.DefaultV2`).
 */
export interface FoundryDeploymentAttrs {
  accountId: string;
  subscriptionId: string;
  /** `properties.model.format`, e.g. `OpenAI`. */
  modelFormat: string | null;
  modelName: string | null;
  modelVersion: string | null;
  /** `sku.name`, e.g. `Standard`, `GlobalStandard`. */
  sku: string | null;
  /** `sku.capacity` (thousands of tokens per minute for OpenAI models). */
  capacity: number | null;
  /**
   * `properties.raiPolicyName`: the content filter (RAI policy) applied; null when the deployment names none. The
   * default policies are `Microsoft.Default` / `Microsoft.DefaultV2`; other names are custom policies.
   */
  raiPolicyName: string | null;
  /** True when `raiPolicyName` is absent (no content filter named on the deployment). */
  contentFilterMissing: boolean;
  provisioningState: string | null;
}

/** Model deployments of every collected account, with their content filter (RAI policy). */
export const foundryDeploymentsStream: Stream<'foundryDeployments', EstateObject<FoundryDeploymentAttrs>> = accountChildStream(
  'foundryDeployments',
  'deployments',
  (j): AccountChildAttrs<FoundryDeploymentAttrs> => {
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
  },
);
