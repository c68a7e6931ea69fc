import { VigilError } from '../../../core/errors.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { COGNITIVE_SERVICES_API, scopeOf } from '../cognitiveServices.ts';
import { UpstreamHttpError } from '../../../platform/http/client.ts';
import { odataPages } from '../../../platform/http/odata.ts';
import type { Stream, StreamContext, StreamPage } from '../../stream.ts';
import { str, bool, obj, type Json } from '../../../core/json.ts';

/**
 * Azure AI Foundry inventory through Azure Resource Manager (reference §8); the children of the accounts are
 * `foundryProjects.ts` and `foundryDeployments.ts`.
 *
 * - `foundryAccounts` (root): `GET {arm}/subscriptions?api-version=2022-12-01` (the subscriptions the service
 *   principal holds a role in), then per subscription `GET /subscriptions/{sub}/providers/Microsoft.CognitiveServices/
 *   accounts?api-version=2025-06-01`, following `nextLink`; keeps kind `AIServices` (Foundry resources) and `OpenAI`
 *   (Azure OpenAI resources: same deployments and content filters, so the same checks apply). Full read each round.
 * - `foundryProjects` / `foundryDeployments` (parent `foundryAccounts`, slice = account id): `GET {accountId}/projects`
 *   and `GET {accountId}/deployments` (api-version 2025-06-01, `nextLink` paging).
 *
 * Token resource: the cloud profile's `arm.resource`. Permission: Azure RBAC Reader (or any role with
 * `Microsoft.CognitiveServices/accounts/read`) on the subscriptions, no Entra API permission. No visible subscription,
 * or ARM 403 `AuthorizationFailed` on a subscription → the `foundryAccounts` slice ends errored with
 * `AZURE_READER_MISSING` and a message naming the role and the `az role assignment create` command (the engine keeps
 * only code and message, so the remedy is in the message). Accounts of readable subscriptions are stored first; the
 * errored root keeps the engine from marking anything deleted, and it skips the child streams for that run.
 *
 * Sources: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/{ListAccountsBySubscription,
 * GetProject,GetDeployment}.json` (account `identity`, `properties.encryption.keySource`,
 * `properties.restrictOutboundNetworkAccess`, `properties.allowedFqdnList`); ARM "Subscriptions - List" (api-version 2022-12-01); ARM error envelope
 * `{"error":{"code","message"}}`; learn.microsoft.com `/azure/role-based-access-control/built-in-roles` (Reader).
 */

/**
 * A Cognitive Services account of kind `AIServices` (Foundry resource) or `OpenAI`. `id` = ARM resource id as returned.
 *
 * Read from Azure Resource Manager (`Microsoft.CognitiveServices`, api-version 2025-06-01). Sources: reference §8
 * (ARM-cs: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/ListAccountsBySubscription.json`).
 */
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
  /**
   * `properties.restrictOutboundNetworkAccess`: true = the account calls out only to `allowedFqdnList`; null when
   * absent (unrestricted).
   */
  restrictOutboundNetworkAccess: boolean | null;
  /** `properties.allowedFqdnList`: the outbound destinations allowed when outbound access is restricted. */
  allowedFqdnList: string[];
  /**
   * `properties.encryption.keySource`: `Microsoft.KeyVault` (customer-managed key) or `Microsoft.CognitiveServices`
   * (Microsoft-managed); null when absent (Microsoft-managed).
   */
  encryptionKeySource: string | null;
  /** `identity.type`: `None`, `SystemAssigned`, `UserAssigned`, `SystemAssigned, UserAssigned`; null when absent. */
  identityType: string | null;
}

/** api-version of `GET /subscriptions`. */
const SUBSCRIPTIONS_API = '2022-12-01';
/** Account kinds collected. */
const FOUNDRY_KINDS = ['AIServices', 'OpenAI'] as const;

/** Remedy text shared by the no-subscription and 403 cases. */
function readerRemedy(applicationId: string | null, subscriptions: string[] = []): string {
  const scope = subscriptions.length > 0 ? subscriptions.map((id) => `/subscriptions/${id}`).join(', ') : '/subscriptions/<subscription-id>';
  const assignee = applicationId ?? '<application-client-id>';
  return `Grant the Azure RBAC role Reader to Vigil's service principal on each subscription holding Azure AI Foundry or Azure OpenAI resources (${scope}): az role assignment create --assignee ${assignee} --role Reader --scope /subscriptions/<subscription-id>`;
}

/** ARM pages of a collection (`nextLink`, checked against the link policy by `odataPages`), with the ARM token. */
function armPages(ctx: StreamContext, url: string) {
  return odataPages<Json>(ctx.http, { api: 'arm', url, token: ctx.tokens.bearer(ctx.cloud.arm.resource), tenantId: ctx.tenantId });
}

/** Normalises an account (ListAccountsBySubscription item). */
export function normaliseAccount(j: Json): EstateObject<FoundryAccountAttrs> {
  const id = String(j.id);
  const p = obj(j.properties);
  return {
    sliceKey: '*',
    id,
    name: str(j.name),
    attrs: {
      ...scopeOf(id),
      kind: String(j.kind),
      location: str(j.location),
      sku: str(obj(j.sku).name),
      endpoint: str(p.endpoint),
      publicNetworkAccess: str(p.publicNetworkAccess),
      disableLocalAuth: bool(p.disableLocalAuth),
      networkDefaultAction: str(obj(p.networkAcls).defaultAction),
      provisioningState: str(p.provisioningState),
      restrictOutboundNetworkAccess: bool(p.restrictOutboundNetworkAccess),
      allowedFqdnList: Array.isArray(p.allowedFqdnList) ? p.allowedFqdnList.filter((f): f is string => typeof f === 'string') : [],
      encryptionKeySource: str(obj(p.encryption).keySource),
      identityType: str(obj(j.identity).type),
    },
    raw: j,
  };
}

/** A cursor over subscriptions and pages: `{ i: subscription index, u: next page URL | null }` as JSON. */
interface AccountsCursor {
  subs: string[];
  i: number;
  u: string | null;
  forbidden: string[];
}

/** Cognitive Services accounts (Foundry and Azure OpenAI) of every subscription the service principal can read. */
export const foundryAccountsStream: Stream<'foundryAccounts', EstateObject<FoundryAccountAttrs>> = {
  name: 'foundryAccounts',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.arm.resource,
  async *read(ctx, _slice, cursor): AsyncGenerator<StreamPage<EstateObject<FoundryAccountAttrs>>> {
    const base = ctx.cloud.arm.baseUrl;
    let state: AccountsCursor;
    if (cursor) state = JSON.parse(cursor) as AccountsCursor;
    else {
      const subs: string[] = [];
      for await (const page of armPages(ctx, `${base}/subscriptions?api-version=${SUBSCRIPTIONS_API}`)) {
        for (const sub of page.items) if (typeof sub.subscriptionId === 'string') subs.push(sub.subscriptionId.toLowerCase());
      }
      if (subs.length === 0) {
        throw new VigilError(
          'AZURE_READER_MISSING',
          `Azure AI Foundry not collected: the service principal sees no Azure subscription (it holds no Azure RBAC role). ${readerRemedy(null)}`,
        );
      }
      state = { subs: subs.sort(), i: 0, u: null, forbidden: [] };
    }
    while (state.i < state.subs.length) {
      const sub = state.subs[state.i]!;
      const first = state.u ?? `${base}/subscriptions/${sub}/providers/Microsoft.CognitiveServices/accounts?api-version=${COGNITIVE_SERVICES_API}`;
      let forbidden = false;
      try {
        for await (const page of armPages(ctx, first)) {
          const records = page.items.filter((a) => (FOUNDRY_KINDS as readonly string[]).includes(String(a.kind))).map(normaliseAccount);
          const next: AccountsCursor = page.nextLink ? { ...state, u: page.nextLink } : { ...state, i: state.i + 1, u: null };
          const last = !page.nextLink && next.i >= state.subs.length;
          state = next;
          yield { records, nextCursor: last && state.forbidden.length === 0 ? null : JSON.stringify(state) };
        }
      } catch (e) {
        if (!(e instanceof UpstreamHttpError && e.status === 403)) throw e;
        forbidden = true;
      }
      if (forbidden) {
        state = { ...state, i: state.i + 1, u: null, forbidden: [...state.forbidden, sub] };
        if (state.i < state.subs.length) yield { records: [], nextCursor: JSON.stringify(state) };
      }
    }
    if (state.forbidden.length > 0) {
      throw new VigilError(
        'AZURE_READER_MISSING',
        `Azure AI Foundry partly collected: Azure Resource Manager refused listing Cognitive Services accounts (403 AuthorizationFailed) in subscription(s) ${state.forbidden.join(', ')}. ${readerRemedy(null, state.forbidden)}`,
      );
    }
  },
};
