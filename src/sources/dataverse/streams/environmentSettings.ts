import type { EstateObject } from '../../../core/inventory.ts';
import { REFRESH_SECONDS, type Stream } from '../../stream.ts';
import { dataverseEntityStream } from '../entity.ts';
import { str, bool, num, type Json } from '../../../core/json.ts';

/**
 * `environmentSettings`: per environment with Dataverse (parent `environments`, slice = environment name), the single
 * row of `GET {instanceUrl}/api/data/v9.2/organizations?$select={ORGANIZATION_FIELDS}`, paged with the shared Dataverse
 * helper (`entityPages`: `Prefer: odata.maxpagesize`, `@odata.nextLink`). A full read each round (no change
 * tracking on `organization`); an environment whose Dataverse refuses the application user (403 `0x80072560` /
 * `0x80040220`) is recorded as an errored slice, and checks say "not evaluated" for it.
 *
 * Sources: Dataverse `organization` EntityType (columns below); Microsoft Learn "Content security policy"
 * (power-platform/admin/content-security-policy); "Query data using the Web API" (`$select`); "Manage Dataverse
 * auditing" (power-platform/admin/manage-dataverse-auditing: `isauditenabled`, `isuseraccessauditenabled`,
 * `auditretentionperiodv2` in days, -1 = forever); "Security and session settings" (power-platform/admin/
 * user-session-management: session and inactivity timeouts); "System settings: blocked attachments"
 * (power-platform/admin/system-settings-dialog-box-general-tab); "IP firewall" (power-platform/admin/ip-firewall:
 * `enableipbasedfirewallrule`, `allowediprangeforfirewall`, `enableipbasedfirewallruleinauditmode`, configured by
 * PATCHing the `organizations` row); "IP address-based cookie binding" (power-platform/admin/block-cookie-replay-attack:
 * `enableipbasedcookiebinding`). The same column names are read by microsoft/terraform-provider-power-platform
 * (`internal/services/environment_settings/dto.go`).
 */

/**
 * Normalised attributes of the `environmentSettings` stream: one object per environment with Dataverse (id and slice
 * = the environment name), read from the environment's single `organization` row. Today it carries the content
 * security policy (CSP) settings ScubaGear MS.POWERPLATFORM.4.1 asks for; `null` means the API did not return the
 * column.
 *
 * Sources: Dataverse `organization` entity columns `iscontentsecuritypolicyenabled`,
 * `iscontentsecuritypolicyenabledforcanvas`, `contentsecuritypolicyconfiguration`,
 * `contentsecuritypolicyconfigurationforcanvas`, `contentsecuritypolicyreporturi` (Dataverse Web API
 * `organization` EntityType; the Xrm typings name them "Indicates whether Content Security Policy has been enabled for
 * the organization" / "… for this organization's Canvas apps"); Microsoft Learn "Content security policy"
 * (power-platform/admin/content-security-policy): settings are per environment, apply only to environments with
 * Dataverse, enforcement and reporting are separate toggles for model-driven and canvas apps.
 */
export interface EnvironmentSettingsAttrs {
  /** The environment name (BAP `name`). */
  environmentId: string;
  /** `organizationid` of the environment's Dataverse organization. */
  organizationId: string | null;
  /** `iscontentsecuritypolicyenabled`: the CSP header is enforced for model-driven apps. */
  cspEnforcedModelDriven: boolean | null;
  /** `iscontentsecuritypolicyenabledforcanvas`: the CSP header is enforced for canvas apps. */
  cspEnforcedCanvas: boolean | null;
  /** `contentsecuritypolicyreporturi`: where browsers report CSP violations (null or empty: reporting off). */
  cspReportUri: string | null;
  /** `contentsecuritypolicyconfiguration`: the model-driven CSP configuration (JSON text as stored), or null. */
  cspConfigurationModelDriven: string | null;
  /** `contentsecuritypolicyconfigurationforcanvas`: the canvas CSP configuration (JSON text as stored), or null. */
  cspConfigurationCanvas: string | null;
  /** `isauditenabled`: Dataverse auditing is on for the environment (tables and columns then opt in). */
  auditEnabled: boolean | null;
  /** `isuseraccessauditenabled`: user access (sign-in) logging is on. */
  userAccessAuditEnabled: boolean | null;
  /** `auditretentionperiodv2`: days audit logs are kept; -1 = forever. */
  auditRetentionDays: number | null;
  /** `sessiontimeoutenabled`: a custom maximum session length is set (else the platform default of 24 hours). */
  sessionTimeoutEnabled: boolean | null;
  /** `sessiontimeoutinmins`: the custom maximum session length, minutes. */
  sessionTimeoutMinutes: number | null;
  /** `inactivitytimeoutenabled`: idle sessions are signed out. */
  inactivityTimeoutEnabled: boolean | null;
  /** `inactivitytimeoutinmins`: idle time before sign-out, minutes. */
  inactivityTimeoutMinutes: number | null;
  /** `blockedattachments`: semicolon-separated file extensions Dataverse refuses as attachments ("" = none). */
  blockedAttachments: string | null;
  /** `enableipbasedfirewallrule`: the IP firewall is on. */
  ipFirewallEnabled: boolean | null;
  /** `enableipbasedfirewallruleinauditmode`: the IP firewall only logs (does not block). */
  ipFirewallAuditOnly: boolean | null;
  /** `allowediprangeforfirewall`: comma-separated allowed IPv4/IPv6 ranges (CIDR). */
  ipFirewallAllowedRanges: string | null;
  /** `enableipbasedcookiebinding`: session cookies are bound to the IP address they were issued to. */
  ipCookieBindingEnabled: boolean | null;
}

/** Columns of `organization` read. */
const ORGANIZATION_FIELDS = [
  'organizationid',
  'name',
  'iscontentsecuritypolicyenabled',
  'iscontentsecuritypolicyenabledforcanvas',
  'contentsecuritypolicyconfiguration',
  'contentsecuritypolicyconfigurationforcanvas',
  'contentsecuritypolicyreporturi',
  'isauditenabled',
  'isuseraccessauditenabled',
  'auditretentionperiodv2',
  'sessiontimeoutenabled',
  'sessiontimeoutinmins',
  'inactivitytimeoutenabled',
  'inactivitytimeoutinmins',
  'blockedattachments',
  'enableipbasedfirewallrule',
  'enableipbasedfirewallruleinauditmode',
  'allowediprangeforfirewall',
  'enableipbasedcookiebinding',
].join(',');

/** Maps an `organization` row of environment `environmentId` to its settings object (id = the environment name). */
function toEnvironmentSettings(environmentId: string, j: Json): EstateObject<EnvironmentSettingsAttrs> {
  return {
    sliceKey: environmentId,
    id: environmentId,
    name: str(j.name),
    attrs: {
      environmentId,
      organizationId: str(j.organizationid),
      cspEnforcedModelDriven: bool(j.iscontentsecuritypolicyenabled),
      cspEnforcedCanvas: bool(j.iscontentsecuritypolicyenabledforcanvas),
      cspReportUri: str(j.contentsecuritypolicyreporturi),
      cspConfigurationModelDriven: str(j.contentsecuritypolicyconfiguration),
      cspConfigurationCanvas: str(j.contentsecuritypolicyconfigurationforcanvas),
      auditEnabled: bool(j.isauditenabled),
      userAccessAuditEnabled: bool(j.isuseraccessauditenabled),
      auditRetentionDays: num(j.auditretentionperiodv2),
      sessionTimeoutEnabled: bool(j.sessiontimeoutenabled),
      sessionTimeoutMinutes: num(j.sessiontimeoutinmins),
      inactivityTimeoutEnabled: bool(j.inactivitytimeoutenabled),
      inactivityTimeoutMinutes: num(j.inactivitytimeoutinmins),
      blockedAttachments: typeof j.blockedattachments === 'string' ? j.blockedattachments : null,
      ipFirewallEnabled: bool(j.enableipbasedfirewallrule),
      ipFirewallAuditOnly: bool(j.enableipbasedfirewallruleinauditmode),
      ipFirewallAllowedRanges: str(j.allowediprangeforfirewall),
      ipCookieBindingEnabled: bool(j.enableipbasedcookiebinding),
    },
    raw: j,
  };
}

/** Environment-level Dataverse settings (the `organization` row) of every environment with Dataverse. */
export const environmentSettingsStream: Stream<'environmentSettings', EstateObject<EnvironmentSettingsAttrs>> = dataverseEntityStream({
  name: 'environmentSettings',
  primaryKey: ['id'],
  refreshSeconds: REFRESH_SECONDS.environmentInventory,
  entitySet: 'organizations',
  select: ORGANIZATION_FIELDS,
  map: (j, slice) => toEnvironmentSettings(slice.key, j),
});
