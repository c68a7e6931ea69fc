import type { DlpPolicyAttrs } from '../../../core/estate/powerPlatform.ts';
import type { CheckFunction } from '../../types.ts';
import { evaluateEnvironmentsDlp } from '../shared.ts';

/** DLP connector names of the outbound HTTP connectors: HTTP, HTTP Webhook, HTTP with Microsoft Entra ID (UNCONFIRMED ids for the first two: `http`, `httpwebhook`). */
export const HTTP_DLP_CONNECTORS: readonly string[] = ['http', 'httpwebhook', 'shared_webcontents'];

/** Whether a policy blocks a connector: listed as Blocked, or unlisted while the policy's default group is Blocked. */
function blocks(p: DlpPolicyAttrs, connector: string): boolean {
  if (p.blocked.includes(connector)) return true;
  const listed = p.business.includes(connector) || p.nonBusiness.includes(connector);
  return !listed && p.defaultConnectorsClassification === 'Blocked';
}

/**
 * Per default environment: fails when an outbound HTTP connector (HTTP, HTTP Webhook, HTTP with Microsoft Entra ID)
 * is usable there — no DLP policy covering the environment blocks it (policies combine, the most restrictive wins,
 * so one covering policy blocking it suffices; "covering" uses the same scope rules as pp_dlp_default_environment,
 * `ExceptEnvironments` included). Passes when every one is blocked by some covering policy. Not evaluated for the
 * tenant when the environments or DLP policies were not collected.
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
      return { status: 'fail', reason: `HTTP connector(s) not blocked in the default environment: ${open.join(', ')}${covering.length === 0 ? ' (no DLP policy covers it)' : ''}.`, detail: { open } };
    },
    { defaultOnly: true },
  );
};
