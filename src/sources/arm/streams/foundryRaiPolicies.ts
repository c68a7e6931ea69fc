import { bool, obj, objects, str } from '../../../core/json.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import type { Stream } from '../../stream.ts';
import { accountChildStream, type AccountChildAttrs } from '../cognitiveServices.ts';

/**
 * `foundryRaiPolicies` (parent `foundryAccounts`, slice = account id): `GET {accountId}/raiPolicies?api-version=
 * 2025-06-01`, `nextLink` paging — the content filters (Responsible AI policies) of an account, which deployments name
 * in `properties.raiPolicyName`. Permission: Reader (which allows every read action,
 * `Microsoft.CognitiveServices/accounts/raiPolicies/read` included).
 *
 * Sources: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/ListRaiPolicies.json`
 * (`basePolicyName`, `mode`, `contentFilters[]` with `name`, `blocking`, `enabled`, `severityThreshold`, `source`
 * `Prompt` | `Completion`); learn.microsoft.com `/azure/ai-foundry/openai/how-to/content-filters` (a threshold of
 * `Low` filters low, medium and high; `Medium` medium and high; `High` high only).
 */

/** One filter of a policy, as the API sends it. */
export interface RaiContentFilter {
  /** `Hate`, `Sexual`, `Violence`, `Selfharm`, `Jailbreak`, `Indirect Attack`, `Protected Material Text`, … */
  name: string;
  /** `Prompt` or `Completion`. */
  source: string | null;
  enabled: boolean | null;
  blocking: boolean | null;
  /** `Low`, `Medium`, `High`; null for filters without severities (Jailbreak, Protected Material). */
  severityThreshold: string | null;
}

/** A content filtering (RAI) policy of an account. `id` = ARM id; `name` = the policy name deployments reference. */
export interface FoundryRaiPolicyAttrs {
  accountId: string;
  subscriptionId: string;
  /** `properties.basePolicyName`, e.g. `Microsoft.DefaultV2`. */
  basePolicyName: string | null;
  /** `properties.mode`: `Default`, `Blocking`, `Asynchronous_filter`, `Deferred`. */
  mode: string | null;
  contentFilters: RaiContentFilter[];
}

/** The content filtering policies of every collected account. */
export const foundryRaiPoliciesStream: Stream<'foundryRaiPolicies', EstateObject<FoundryRaiPolicyAttrs>> = accountChildStream(
  'foundryRaiPolicies',
  'raiPolicies',
  (j): AccountChildAttrs<FoundryRaiPolicyAttrs> => {
    const p = obj(j.properties);
    return {
      basePolicyName: str(p.basePolicyName),
      mode: str(p.mode),
      contentFilters: objects(p.contentFilters).map((f) => ({
        name: str(f.name) ?? '',
        source: str(f.source),
        enabled: bool(f.enabled),
        blocking: bool(f.blocking),
        severityThreshold: str(f.severityThreshold),
      })),
    };
  },
);
