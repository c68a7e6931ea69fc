import { evaluateEnvironmentSettings } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails environments with Dataverse that accept requests from any IP address: the IP firewall off
 * (`organization.enableipbasedfirewallrule` false), on in audit-only mode (`enableipbasedfirewallruleinauditmode`
 * true: it logs and does not block), or on with no allowed range (`allowediprangeforfirewall` empty). Not evaluated
 * per {@link evaluateEnvironmentSettings}. Source: Microsoft Learn "IP firewall in Power Platform environments"
 * (power-platform/admin/ip-firewall; a Managed Environments feature, configured by these `organization` columns).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEnvironmentSettings(ctx, ['ipFirewallEnabled'], (s) => {
    const ranges = (s.ipFirewallAllowedRanges ?? '')
      .split(/[,;]/)
      .map((r) => r.trim())
      .filter((r) => r.length > 0);
    const detail = { enabled: s.ipFirewallEnabled, auditOnly: s.ipFirewallAuditOnly, allowedRanges: ranges };
    if (!s.ipFirewallEnabled) return { status: 'fail', reason: 'The IP firewall is off: Dataverse accepts requests from any IP address.', detail };
    if (s.ipFirewallAuditOnly)
      return { status: 'fail', reason: 'The IP firewall is in audit-only mode: requests from other addresses are logged, not blocked.', detail };
    if (ranges.length === 0) return { status: 'fail', reason: 'The IP firewall is on but names no allowed IP range.', detail };
    return { status: 'pass', reason: `The IP firewall enforces ${ranges.length} allowed range(s).`, detail };
  });
