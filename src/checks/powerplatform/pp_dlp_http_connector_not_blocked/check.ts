import type { DlpPolicyAttrs } from '../../../sources/powerPlatform/streams/dlpPolicies.ts';
import type { CheckFunction } from '../../types.ts';
import { evaluateEnvironmentsDlp } from '../shared.ts';

/**
 * DLP connector ids of the outbound HTTP connectors, as a policy's `connectorGroups` spell them (compared without
 * case): HTTP `Http`, HTTP Webhook `HttpWebhook` (built in: no `/providers/Microsoft.PowerApps/apis/` prefix —
 * Microsoft Learn, connectors/powerplatformforadmins "Known issues and limitations", the ids to add to a policy; a real
 * tenant's policy exported by rpothin/ppcc25-terraform-power-platform-governance lists `Http` and `HttpWebhook` the
 * same way), HTTP with Microsoft Entra ID `shared_webcontents`.
 */
export const HTTP_DLP_CONNECTORS: readonly string[] = ['Http', 'HttpWebhook', 'shared_webcontents'];

const has = (list: string[], connector: string): boolean => list.some((c) => c.toLowerCase() === connector.toLowerCase());

/** Whether a policy blocks a connector: listed as Blocked, or unlisted while the policy's default group is Blocked. */
function blocks(p: DlpPolicyAttrs, connector: string): boolean {
  if (has(p.blocked, connector)) return true;
  const listed = has(p.business, connector) || has(p.nonBusiness, connector);
  return !listed && p.defaultConnectorsClassification === 'Blocked';
}

/**
 * Per default environment: fails when an outbound HTTP connector (HTTP, HTTP Webhook, HTTP with Microsoft Entra ID)
 * is usable there — no DLP policy covering the environment blocks it (policies combine, the most restrictive wins,
 * so one covering policy blocking it suffices; "covering" uses the same scope rules as pp_dlp_default_environment,
 * `ExceptEnvironments` included). Passes when every one is blocked by some covering policy. Not evaluated when a
 * connector is open as far as the stored policies show but a covering policy was stored without its connector groups
 * (`connectorGroupsRead: false`: its groups are unknown, not empty), and for the tenant when the environments or DLP
 * policies were not collected.
 * Source: Microsoft Learn "Connector classification" (power-platform/admin/dlp-connector-classification: HTTP
 * connectors can be blocked) and "Secure the default environment" (power-platform/guidance/adoption/secure-default-environment).
 */
export const check: CheckFunction = (ctx) => {
  const policies = new Map(ctx.inventory.estate('dlpPolicies').map((p) => [p.id, p.attrs]));
  return evaluateEnvironmentsDlp(
    ctx,
    (isDefault) => isDefault,
    (covering) => {
      const open = HTTP_DLP_CONNECTORS.filter((c) => !covering.some((p) => blocks(policies.get(p.id)!, c)));
      if (open.length === 0) return { status: 'pass', reason: 'The HTTP connectors are blocked in the default environment.' };
      const unread = covering.filter((p) => policies.get(p.id)!.connectorGroupsRead === false);
      if (unread.length > 0)
        return {
          status: 'not_evaluated',
          reason: `The connector groups of DLP polic${unread.length === 1 ? 'y' : 'ies'} ${unread.map((p) => p.name ?? p.id).join(', ')} were not read.`,
          detail: { open, unread: unread.map((p) => p.id) },
        };
      return {
        status: 'fail',
        reason: `HTTP connector(s) not blocked in the default environment: ${open.join(', ')}${covering.length === 0 ? ' (no DLP policy covers it)' : ''}.`,
        detail: { open },
      };
    },
    { defaultOnly: true },
  );
};
