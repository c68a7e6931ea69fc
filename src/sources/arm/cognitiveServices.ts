import type { EstateObject, ParentRow } from '../../core/inventory.ts';
import type { FoundryAccountAttrs } from './streams/foundryAccounts.ts';
import { str, type Json } from '../../core/json.ts';
import { odataListStream } from '../odata.ts';
import type { InventoryListing, Slice, Stream } from '../stream.ts';

/**
 * Cognitive Services resources of Azure Resource Manager shared by the Foundry streams (`streams/foundryAccounts.ts`,
 * `foundryProjects.ts`, `foundryDeployments.ts`): the api-version, ARM id scopes, and the account child collections.
 * Sources: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01`.
 */

/** api-version of the Cognitive Services resource provider used. */
export const COGNITIVE_SERVICES_API = '2025-06-01';

/** Subscription id and resource group of an ARM id (`/subscriptions/{s}/resourceGroups/{rg}/…`). */
export function scopeOf(id: string): { subscriptionId: string; resourceGroup: string | null } {
  const m = /^\/subscriptions\/([^/]+)(?:\/resourceGroups\/([^/]+))?/i.exec(id);
  return { subscriptionId: (m?.[1] ?? '').toLowerCase(), resourceGroup: m?.[2] ?? null };
}

/** Slice for one account row: key = its ARM id. */
function accountSlice(row: ParentRow): Slice | null {
  const attrs = row.raw ? (JSON.parse(row.raw) as Partial<FoundryAccountAttrs>) : {};
  return { key: row.id, params: { accountId: row.id, subscriptionId: attrs.subscriptionId ?? scopeOf(row.id).subscriptionId } };
}

/** The attributes of an account's child read from the item; the account and subscription ids come from the slice. */
export type AccountChildAttrs<A> = Omit<A, 'accountId' | 'subscriptionId'>;

/**
 * A stream of one child collection of every collected account (`GET {accountId}/{collection}?api-version={apiVersion}`,
 * `nextLink` paging; the api-version defaults to the Cognitive Services one, an extension resource such as diagnostic
 * settings passes its own provider's):
 * one slice per account, one estate object per item (id = its ARM id), its attributes led by the account id and the
 * account's subscription id.
 */
export function accountChildStream<N extends string, A extends { accountId: string; subscriptionId: string }, K extends string = never>(
  name: N,
  collection: 'projects' | 'deployments' | 'raiPolicies' | 'providers/Microsoft.Insights/diagnosticSettings',
  attrs: (j: Json) => AccountChildAttrs<A>,
  inventory?: InventoryListing<K>,
  apiVersion: string = COGNITIVE_SERVICES_API,
): Stream<N, EstateObject<A>, K> {
  return odataListStream<N, EstateObject<A>, K>({
    name,
    ...(inventory && { inventory }),
    primaryKey: ['id'],
    parent: 'foundryAccounts',
    slice: accountSlice,
    resource: (ctx) => ctx.cloud.arm.resource,
    request: (ctx, slice, cursor) => ({
      api: 'arm',
      url: cursor ?? `${ctx.cloud.arm.baseUrl}${slice.params.accountId}/${collection}?api-version=${apiVersion}`,
    }),
    map: (j, slice) => ({
      sliceKey: slice.key,
      id: String(j.id),
      name: str(j.name),
      attrs: { accountId: slice.key, subscriptionId: slice.params.subscriptionId!, ...attrs(j) } as A,
      raw: j,
    }),
  });
}
