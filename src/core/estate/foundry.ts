/**
 * Normalised attributes of the Azure AI Foundry streams (`foundryAccounts`, `foundryProjects`, `foundryDeployments`),
 * read from Azure Resource Manager (`Microsoft.CognitiveServices`, api-version 2025-06-01).
 *
 * Sources: reference §8 (ARM-cs: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/
 * ListAccountsBySubscription.json`, `GetProject.json`, `GetDeployment.json`); learn.microsoft.com
 * `/azure/ai-services/openai/concepts/content-filter` (deployments carry `properties.raiPolicyName`; the default
 * policies are `Microsoft.Default` and `Microsoft.DefaultV2`).
 */

/** A Cognitive Services account of kind `AIServices` (Foundry resource) or `OpenAI`. `id` = ARM resource id as returned. */
export interface FoundryAccountAttrs {
  subscriptionId: string;
  resourceGroup: string | null;
  /** `AIServices` (Foundry) or `OpenAI`. */
  kind: string;
  location: string | null;
  /** `sku.name`, e.g. `S0`. */
  sku: string | null;
  /** `properties.endpoint`. */
  endpoint: string | null;
  /** `properties.publicNetworkAccess`: `Enabled` | `Disabled`; null when absent (ARM default: enabled). */
  publicNetworkAccess: string | null;
  /** `properties.disableLocalAuth`: true = API keys refused, Entra ID only; null when absent (keys allowed). */
  disableLocalAuth: boolean | null;
  /** `properties.networkAcls.defaultAction`: `Allow` | `Deny`; null when no ACLs. */
  networkDefaultAction: string | null;
  provisioningState: string | null;
}

/** A Foundry project (`accounts/projects`). `id` = ARM id as returned; slice = the account's id. */
export interface FoundryProjectAttrs {
  accountId: string;
  subscriptionId: string;
  displayName: string | null;
  isDefault: boolean | null;
  location: string | null;
  provisioningState: string | null;
}

/** A model deployment (`accounts/deployments`). `id` = ARM id as returned; slice = the account's id. */
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
