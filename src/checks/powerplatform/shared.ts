import type { DlpPolicyAttrs } from '../../sources/powerPlatform/streams/dlpPolicies.ts';
import type { TenantIsolationAttrs, TenantSettingsObjectAttrs } from '../../sources/powerPlatform/streams/tenantSettings.ts';
import { sliceGapVerdict, streamsNotEvaluated, type Verdict } from '../helpers.ts';
import type { CheckContext, CheckResult } from '../types.ts';
import type { EnvironmentSettingsAttrs } from '../../sources/dataverse/streams/environmentSettings.ts';
import { environmentGovernance, type EnvironmentGovernance } from '../../sources/bap/streams/environments.ts';
import type { EnvironmentsTable } from '../../store/schema.ts';
import type { Json } from '../../core/json.ts';

/**
 * Helpers shared by the Power Platform checks (`checks/powerplatform/*`): the
 * tenant settings objects, DLP policy scope and the organisation's own domains (owner and guest verdicts live in
 * `checks/helpers.ts`).
 * This file is not a check (the loader only loads folders).
 */

/** The `tenantSettings` object of the `tenantSettings` stream, or null when the stream ran without it. */
function tenantSettingsOf(ctx: CheckContext): TenantSettingsObjectAttrs | null {
  const row = ctx.inventory.estate('tenantSettings').find((r) => r.attrs.kind === 'tenantSettings');
  return row ? (row.attrs as TenantSettingsObjectAttrs) : null;
}

/** The `tenantIsolation` object of the `tenantSettings` stream, or null when the stream ran without it. */
export function tenantIsolationOf(ctx: CheckContext): TenantIsolationAttrs | null {
  const row = ctx.inventory.estate('tenantSettings').find((r) => r.attrs.kind === 'tenantIsolation');
  return row ? (row.attrs as TenantIsolationAttrs) : null;
}

/**
 * A verdict on one boolean of `listTenantSettings` that must be true. Not evaluated — never a pass — when the
 * settings object is missing or the body did not carry the field (the documented default is "off").
 */
export function tenantFlagVerdict(ctx: CheckContext, field: keyof Omit<TenantSettingsObjectAttrs, 'kind' | 'settings'>, failReason: string): Verdict {
  const settings = tenantSettingsOf(ctx);
  if (!settings) return { status: 'not_evaluated', reason: 'The Power Platform tenant settings were not in the collected inventory.' };
  const value = settings[field];
  if (value === null) return { status: 'not_evaluated', reason: `The tenant settings did not include '${field}'.` };
  return value
    ? { status: 'pass', reason: `'${field}' is true.`, detail: { [field]: true } }
    : { status: 'fail', reason: failReason, detail: { [field]: false } };
}

/**
 * Whether a DLP policy applies to an environment, from its scope (`environmentType`):
 * `AllEnvironments` → every environment; `ExceptEnvironments` → every environment NOT in `environments`;
 * `OnlyEnvironments` / `SingleEnvironment` → only the ones listed. Other types apply to nothing (unknown scope is
 * never counted as coverage). Names compare case-insensitively. Source: Power Platform "Data policies" (policy scope:
 * all / exclude certain / add multiple environments); ScubaGear issue #1396 and #1896 (exclude-scope false results).
 */
export function dlpCovers(policy: DlpPolicyAttrs, environmentId: string): boolean {
  const listed = policy.environments.some((e) => e.toLowerCase() === environmentId.toLowerCase());
  switch (policy.environmentType) {
    case 'AllEnvironments':
      return true;
    case 'ExceptEnvironments':
      return !listed;
    case 'OnlyEnvironments':
    case 'SingleEnvironment':
      return listed;
    default:
      return false;
  }
}

/**
 * Results over the stored environments with the DLP policies that cover each; not evaluated without both streams.
 * The checks on the default environment pass `defaultOnly`: every tenant has exactly one default environment
 * (Microsoft Learn, "Delete environment", power-platform/admin/delete-environment: "You can't delete the default
 * environment"; Get-PnPPowerPlatformEnvironment `-IsDefault` returns "the default … environment for the tenant"), so an
 * environment list without one is incomplete — the tenant gets one `not_evaluated` result saying so instead of no
 * result at all (which read as "nothing wrong").
 */
export function evaluateEnvironmentsDlp(
  ctx: CheckContext,
  include: (isDefault: boolean) => boolean,
  verdict: (covering: { id: string; name: string | null }[]) => Verdict,
  options: { defaultOnly?: boolean } = {},
): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments', 'dlpPolicies']);
  if (notEvaluated) return notEvaluated;
  if (options.defaultOnly && !ctx.inventory.environments.some((e) => e.is_default === 1)) {
    return [
      {
        resourceType: 'tenant',
        resourceId: ctx.tenantId,
        resourceName: null,
        status: 'not_evaluated',
        reason: `The collected environment list (${ctx.inventory.environments.length} environment(s)) has no default environment, which every tenant has: the list is incomplete, so the default environment's DLP coverage could not be judged.`,
        detail: { code: 'NO_DEFAULT_ENVIRONMENT', stream: 'environments' },
      },
    ];
  }
  const policies = ctx.inventory.estate('dlpPolicies');
  const results: CheckResult[] = [];
  for (const env of ctx.inventory.environments) {
    if (!include(env.is_default === 1)) continue;
    const covering = policies.filter((p) => dlpCovers(p.attrs, env.id)).map((p) => ({ id: p.id, name: p.name }));
    const v = verdict(covering);
    results.push({
      resourceType: 'environment',
      resourceId: env.id,
      resourceName: env.display_name,
      ...v,
      detail: { ...(v.detail ?? {}), isDefault: env.is_default === 1, policies: covering.map((p) => p.id) },
    });
  }
  return results;
}

/**
 * The organisation's DNS domains as far as the inventory shows them: the domain part of every member's user
 * principal name (guests' `#EXT#` names excluded). Verified domains are not collected; every member UPN uses one.
 * For each `{name}.onmicrosoft.com` the tenant's SharePoint hosts `{name}.sharepoint.com` and
 * `{name}-my.sharepoint.com` are added.
 */
export function organisationDomains(ctx: CheckContext): Set<string> {
  const domains = new Set<string>();
  for (const u of ctx.inventory.directoryUsers.values()) {
    const upn = u.user_principal_name?.toLowerCase();
    if (!upn || u.user_type === 'Guest' || upn.includes('#ext#')) continue;
    const domain = upn.split('@')[1];
    if (!domain) continue;
    domains.add(domain);
    const m = /^([a-z0-9-]+)\.onmicrosoft\.com$/.exec(domain);
    if (m) {
      domains.add(`${m[1]}.sharepoint.com`);
      domains.add(`${m[1]}-my.sharepoint.com`);
    }
  }
  return domains;
}

/**
 * Microsoft service hosts a flow may call that belong to no customer (APIs addressed by the caller's own token):
 * Microsoft Graph, Azure Resource Manager, the sign-in endpoint, Power BI and Power Platform APIs. Shared hosting
 * suffixes (`azurewebsites.net`, `logic.azure.com`, `blob.core.windows.net`, …) are NOT here: every Azure customer
 * has hosts under them, so they do not show the destination belongs to the organisation.
 */
export const MICROSOFT_SERVICE_HOSTS: readonly string[] = [
  'graph.microsoft.com',
  'graph.microsoft.us',
  'dod-graph.microsoft.us',
  'microsoftgraph.chinacloudapi.cn',
  'management.azure.com',
  'management.usgovcloudapi.net',
  'login.microsoftonline.com',
  'login.microsoftonline.us',
  'api.powerbi.com',
  'api.powerplatform.com',
  'api.bap.microsoft.com',
  'api.flow.microsoft.com',
];

/** True when `host` equals or is a subdomain of one of `domains`. */
export function hostUnder(host: string, domains: Iterable<string>): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  for (const d of domains) if (h === d || h.endsWith(`.${d}`)) return true;
  return false;
}

/** The Dataverse hosts of the stored environments (the organisation's own instances). */
export function dataverseHosts(ctx: CheckContext): string[] {
  const out: string[] = [];
  for (const env of ctx.inventory.environments) {
    if (!env.dataverse_url) continue;
    try {
      out.push(new URL(env.dataverse_url).hostname.toLowerCase());
    } catch {
      // An unparsable instance URL contributes no host.
    }
  }
  return out;
}

/**
 * Results over the environments with Dataverse from their `environmentSettings` object (the Dataverse `organization`
 * row): `verdict` judges the settings once every column in `fields` came back. Not evaluated — never a pass — for the
 * tenant when the `environments` or `environmentSettings` stream did not run; for an environment whose Dataverse could
 * not be read (errored slice: 403 application user missing or without System Administrator), whose settings object is
 * missing, or where one of `fields` came back null (the column was not returned; `notReturned`, when given, is the
 * reason of these two). Environments without Dataverse are left out: these settings exist only with Dataverse.
 */
export function evaluateEnvironmentSettings(
  ctx: CheckContext,
  fields: readonly (keyof EnvironmentSettingsAttrs)[],
  verdict: (s: EnvironmentSettingsAttrs) => Verdict,
  notReturned?: string,
): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments', 'environmentSettings']);
  if (notEvaluated) return notEvaluated;
  const settings = new Map(ctx.inventory.estate('environmentSettings').map((r) => [r.id, r.attrs]));
  const results: CheckResult[] = [];
  for (const env of ctx.inventory.environments) {
    if (!env.dataverse_url) continue;
    const base = { resourceType: 'environment' as const, resourceId: env.id, resourceName: env.display_name };
    const gap = sliceGapVerdict(ctx, 'environmentSettings', env.id, "The environment's Dataverse settings");
    if (gap) {
      results.push({ ...base, ...gap });
      continue;
    }
    const s = settings.get(env.id);
    const missing = s ? fields.filter((f) => s[f] === null || s[f] === undefined) : fields;
    if (!s || missing.length > 0) {
      results.push({
        ...base,
        status: 'not_evaluated',
        reason:
          notReturned ??
          (s ? `The environment's Dataverse settings did not include ${missing.join(', ')}.` : "The environment's Dataverse settings were not collected."),
      });
      continue;
    }
    results.push({ ...base, ...verdict(s) });
  }
  return results;
}

/** The BAP `governanceConfiguration` of a stored environment row (its raw BAP object), or null when absent. */
function governanceOfRow(env: EnvironmentsTable): EnvironmentGovernance | null {
  try {
    return environmentGovernance(JSON.parse(env.raw) as Json);
  } catch {
    return null;
  }
}

/**
 * Results over the stored environments from their Managed Environments settings (BAP `governanceConfiguration`, read
 * from the stored environment object): `verdict` returns null to leave an environment out. Not evaluated for the
 * tenant when the `environments` stream did not run, and for an environment whose object carried no
 * `governanceConfiguration` (never a pass on a missing field).
 */
export function evaluateGovernance(
  ctx: CheckContext,
  verdict: (g: EnvironmentGovernance, env: EnvironmentsTable) => Verdict | null,
  include: (env: EnvironmentsTable) => boolean = () => true,
): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments']);
  if (notEvaluated) return notEvaluated;
  const results: CheckResult[] = [];
  for (const env of ctx.inventory.environments) {
    if (!include(env)) continue;
    const base = { resourceType: 'environment' as const, resourceId: env.id, resourceName: env.display_name };
    const g = governanceOfRow(env);
    if (!g) {
      results.push({
        ...base,
        status: 'not_evaluated',
        reason: "The admin API did not return the environment's governance configuration (Managed Environments settings).",
      });
      continue;
    }
    const v = verdict(g, env);
    if (v) results.push({ ...base, ...v, detail: { ...(v.detail ?? {}), sku: env.sku, managed: g.managed } });
  }
  return results;
}
