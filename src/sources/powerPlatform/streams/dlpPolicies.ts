import type { EstateObject } from '../../../core/inventory.ts';
import { str, obj, arr, type Json } from '../../../core/json.ts';
import { odataPages } from '../../../platform/http/odata.ts';
import { type Stream } from '../../stream.ts';
import { connectorIdOf, enc, readOneOrNull } from '../admin.ts';

/**
 * Attributes of a DLP policy (`PowerPlatform.Governance/v2/policies/{name}`: the single policy, with its groups).
 *
 * Sources: reference §3.3; terraform-provider-power-platform `dlp_policy`.
 */
export interface DlpPolicyAttrs {
  displayName: string | null;
  /** `AllEnvironments`, `ExceptEnvironments`, `OnlyEnvironments` (or other values the API returns). */
  environmentType: string | null;
  /** Environment names included (`OnlyEnvironments`) or excluded (`ExceptEnvironments`). */
  environments: string[];
  /** `Confidential` (business), `General` (non-business) or `Blocked`: the group of unlisted connectors. */
  defaultConnectorsClassification: string | null;
  /** Connector names in the business (`Confidential`) group. */
  business: string[];
  /** Connector names in the non-business (`General`) group. */
  nonBusiness: string[];
  /** Connector names in the `Blocked` group. */
  blocked: string[];
  /**
   * Whether the policy body carried `connectorGroups` (the single-policy GET does; the list does not). When false the
   * three groups above are unknown, not empty. Absent on rows stored before this field existed.
   */
  connectorGroupsRead?: boolean;
  createdTime: string | null;
  lastModifiedTime: string | null;
}

/**
 * Maps one DLP policy as `GET …/PowerPlatform.Governance/v2/policies/{name}` answers it to {@link DlpPolicyAttrs}.
 * Connector ids are kept as the policy spells them after the `/providers/Microsoft.PowerApps/apis/` prefix
 * (`shared_webcontents`); the built-in HTTP connectors have no prefix and keep their case (`Http`, `HttpWebhook`,
 * `HttpRequestReceived`: Microsoft Learn, connectors/powerplatformforadmins "Known issues and limitations").
 * A list item (no `connectorGroups`) maps to empty groups with `connectorGroupsRead: false`: only the single-policy
 * answer is complete.
 */
export function toDlpPolicy(j: Json): EstateObject<DlpPolicyAttrs> {
  const d = obj(j.policyDefinition);
  const groups = arr(d.connectorGroups).map(obj);
  const group = (classification: string): string[] =>
    groups
      .filter((g) => str(g.classification) === classification)
      .flatMap((g) => arr(g.connectors).map((c) => connectorIdOf(obj(c).id) ?? str(obj(c).id)))
      .filter((x): x is string => x !== null);
  const name = str(d.name) ?? str(j.name) ?? '';
  return {
    sliceKey: '*',
    id: name,
    name: str(d.displayName),
    attrs: {
      displayName: str(d.displayName),
      environmentType: str(d.environmentType),
      environments: arr(d.environments)
        .map((e) => str(obj(e).name))
        .filter((x): x is string => x !== null),
      defaultConnectorsClassification: str(d.defaultConnectorsClassification),
      business: group('Confidential'),
      nonBusiness: group('General'),
      blocked: group('Blocked'),
      connectorGroupsRead: Array.isArray(d.connectorGroups),
      createdTime: str(d.createdTime),
      lastModifiedTime: str(d.lastModifiedTime),
    },
    raw: j,
  };
}

/** Parallel single-policy reads per page of the policy list. */
const POLICY_CONCURRENCY = 4;

/**
 * DLP (data) policies of the tenant: the v2 list, then each policy read on its own for its connector groups (the
 * list does not carry them). Each read goes through the HTTP pipeline (budgets, 429 back-off, link policy). A policy
 * deleted between the list and its read (404) is left out of the page, so a complete round marks it deleted.
 */
export const dlpPoliciesStream: Stream<'dlpPolicies', EstateObject<DlpPolicyAttrs>> = {
  name: 'dlpPolicies',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.bap.resource,
  async *read(ctx, _slice, cursor) {
    const base = `${ctx.cloud.bap.baseUrl}/providers/PowerPlatform.Governance/v2/policies`;
    const token = ctx.tokens.bearer(ctx.cloud.bap.resource);
    for await (const page of odataPages<Json>(ctx.http, { api: 'bap', url: cursor ?? base, token, tenantId: ctx.tenantId })) {
      const read: (Json | null)[] = new Array(page.items.length);
      for (let i = 0; i < page.items.length; i += POLICY_CONCURRENCY) {
        await Promise.all(
          page.items.slice(i, i + POLICY_CONCURRENCY).map(async (item, k) => {
            const name = str(obj(item.policyDefinition).name) ?? str(item.name);
            read[i + k] = name ? await readOneOrNull(ctx, 'bap', `${base}/${enc(name)}`, token) : null;
          }),
        );
      }
      yield { records: read.filter((j): j is Json => j !== null).map(toDlpPolicy), nextCursor: page.nextLink ?? null };
    }
  },
};
