import { API_DISPLAY_NAMES, PERMISSION_CAPABILITIES, PERMISSION_LISTS, isGranted, type PermissionApi } from '../core/capabilities.ts';
import { isVigilError, VigilError } from '../core/errors.ts';
import { DATAVERSE_ACCESS_REASONS } from '../core/remediation.ts';
import type { CloudProfile } from '../config/cloud.ts';
import { UpstreamHttpError } from '../platform/http/client.ts';
import { discoverTenant, type ClientCredentialProvider } from '../platform/identity/index.ts';
import { isNotManagementAppError, listAllEnvironments } from '../sources/bap/client.ts';
import { probeAgentsAccess } from '../sources/dataverse/entity.ts';
import { POWER_BI_NOT_AUTHORIZED, powerBiConsentedRoles, probeAdminApiAccess, READ_ONLY_ADMIN_API_SETTING } from '../sources/powerBi/client.ts';
import type { StreamContext } from '../sources/stream.ts';

/**
 * Verification of an integration, step by step as the seed orders setup: credentials (a client-credentials token
 * per resource), application permissions (the `roles` claim, per capability, both seed lists understood; Power BI is
 * judged by what its read-only admin APIs answer, not by `roles`), registration as a Power Platform admin management application (BAP 403 until registered), and System
 * Administrator in each environment (a Dataverse read). Every gap names the exact permission or step to add.
 */

/** Status of one capability. */
interface CapabilityStatus {
  id: string;
  title: string;
  api: string;
  status: 'granted' | 'missing';
  /** The granted permission that provides it (or, for a capability judged by the API, what let the API answer). */
  grantedBy?: string;
  /** The permission to add when missing (absent for a capability judged by the API: no permission fixes it). */
  add?: string;
  /** For a capability judged by the API: what it answered, and the fix when it refused. */
  detail?: string;
}

/**
 * Power BI read-only admin API access, judged by what the API answers (one GetActivityEvents request). Both setups are
 * understood: the one Microsoft documents (no Power BI permission, the tenant setting covering the app) and the seed's
 * (Tenant.Read.All admin-consented), which Microsoft says the read-only admin APIs refuse.
 */
interface PowerBiAccess {
  /** `granted`: the API answered; `refused`: 401/403 PowerBINotAuthorizedException; `unknown`: another failure. */
  access: 'granted' | 'refused' | 'unknown';
  /** Power BI Service application permissions in the token (Microsoft: there must be none). */
  consentedPermissions: string[];
  /** The tenant setting that decides access. */
  tenantSetting: string;
  /** What was observed, in words. */
  detail: string;
  /** What to change, when something should change. */
  fix?: string;
}

/** A permission to add, for scripts. */
export interface MissingPermission {
  api: string;
  permission: string;
  capability: string;
}

/** Access to one environment. */
interface EnvironmentAccess {
  id: string;
  name: string | null;
  dataverse: boolean;
  /** True when agents could be read; null when the environment has no Dataverse. */
  agentsReadable: boolean | null;
  reason?: string;
}

/** The verification report (stored with the integration and printed by the CLI). */
export interface VerificationReport {
  tenantId: string;
  clientId: string;
  /** Object ID of the service principal, from the Graph token's `oid`. */
  servicePrincipalObjectId: string | null;
  /** The credentials work: a token was issued. */
  verified: boolean;
  /** Which seed permission list the Graph grant matches: `quick`, `step-by-step`, or `partial`. */
  permissionList: 'quick' | 'step-by-step' | 'partial';
  grantedRoles: Record<string, string[]>;
  capabilities: CapabilityStatus[];
  missingPermissions: MissingPermission[];
  managementApp: { registered: boolean | null; detail: string };
  /** Power BI read-only admin API access as the API answered (absent in reports stored before it was added). */
  powerBi?: PowerBiAccess;
  environments: EnvironmentAccess[];
  /** Problems that are not a missing permission (a resource that issued no token, an upstream error). */
  warnings: string[];
  checkedAt: string;
}

/** What verification needs. */
export interface VerifyDeps {
  cloud: CloudProfile;
  tokens: ClientCredentialProvider;
  ctx: StreamContext;
}

const RESOURCES: Record<PermissionApi, (c: CloudProfile) => string> = {
  graph: (c) => c.graph.resource,
  managementActivity: (c) => c.managementActivity.resource,
  powerBi: (c) => c.powerBi.resource,
};

/**
 * Verifies an integration's credentials and setup.
 *
 * @throws VigilError `AADSTS…` when the tenant, application or secret is rejected (nothing should be saved then).
 */
export async function verifyIntegration(deps: VerifyDeps, ids: { tenantId: string; clientId: string }): Promise<VerificationReport> {
  const { cloud, tokens, ctx } = deps;
  const warnings: string[] = [];
  const discovered = await discoverTenant(ctx.http, cloud, ids.tenantId);
  if (discovered.tenantId !== ids.tenantId.toLowerCase()) {
    throw new VigilError('TENANT_MISMATCH', `Tenant '${ids.tenantId}' resolves to ${discovered.tenantId}.`, {
      field: 'tenantId',
    });
  }

  // Credentials: the Graph token comes first; its failure (wrong secret, unknown app) ends verification.
  const graphToken = await tokens.token(cloud.graph.resource);
  const grantedRoles: Record<string, string[]> = { graph: graphToken.claims.roles };
  for (const api of ['managementActivity', 'powerBi'] as const) {
    try {
      grantedRoles[api] = (await tokens.token(RESOURCES[api](cloud))).claims.roles;
    } catch (e) {
      if (isVigilError(e, 'authentication')) throw e;
      grantedRoles[api] = [];
      warnings.push(`${API_DISPLAY_NAMES[api]}: no token (${(e as Error).message})`);
    }
  }

  // Power BI: judged by the API's answer (the roles claim does not decide it).
  const powerBi = await powerBiAccess(ctx, grantedRoles.powerBi ?? []);

  const capabilities: CapabilityStatus[] = [];
  const missingPermissions: MissingPermission[] = [];
  for (const cap of PERMISSION_CAPABILITIES) {
    const roles = grantedRoles[cap.api] ?? [];
    const grantedBy = cap.anyOf.find((p) => roles.includes(p));
    if (cap.judgedByApi) {
      const base = {
        id: cap.id,
        title: cap.title,
        api: API_DISPLAY_NAMES[cap.api],
        detail: powerBi.fix ? `${powerBi.detail} Fix: ${powerBi.fix}` : powerBi.detail,
      };
      capabilities.push(
        powerBi.access === 'granted' ? { ...base, status: 'granted', grantedBy: `tenant setting "${powerBi.tenantSetting}"` } : { ...base, status: 'missing' },
      );
    } else if (isGranted(cap, roles)) {
      capabilities.push({ id: cap.id, title: cap.title, api: API_DISPLAY_NAMES[cap.api], status: 'granted', grantedBy });
    } else {
      capabilities.push({ id: cap.id, title: cap.title, api: API_DISPLAY_NAMES[cap.api], status: 'missing', add: cap.recommended });
      missingPermissions.push({ api: API_DISPLAY_NAMES[cap.api], permission: cap.recommended, capability: cap.id });
    }
  }
  // Power BI is left out of the list match: its access is judged by the API (an app with no Power BI permission is
  // the setup Microsoft documents).
  const judged = new Set(PERMISSION_CAPABILITIES.filter((c) => c.judgedByApi).map((c) => c.api));
  const covers = (list: 'quick' | 'step-by-step') =>
    (Object.keys(PERMISSION_LISTS[list]) as PermissionApi[])
      .filter((api) => !judged.has(api))
      .every((api) => PERMISSION_LISTS[list][api].every((p) => (grantedRoles[api] ?? []).includes(p)));
  const permissionList = covers('quick') ? 'quick' : covers('step-by-step') ? 'step-by-step' : 'partial';
  if (permissionList === 'step-by-step') {
    // The step-by-step list is complete by the seed; the capabilities it leaves out are reported, not failed.
    warnings.push(
      "The grant matches the seed's step-by-step list: external connections, Teams apps and Copilot interactions need the quick list's extra Graph permissions.",
    );
  }

  // Registration as a management app, observed through BAP.
  let managementApp: VerificationReport['managementApp'];
  const environments: EnvironmentAccess[] = [];
  try {
    const envs = await listAllEnvironments(ctx);
    managementApp = { registered: true, detail: `BAP lists ${envs.length} environment(s).` };
    for (const env of envs) {
      if (!env.dataverseUrl) {
        environments.push({ id: env.id, name: env.displayName, dataverse: false, agentsReadable: null });
        continue;
      }
      try {
        await probeAgentsAccess(ctx, env.id, env.dataverseUrl);
        environments.push({ id: env.id, name: env.displayName, dataverse: true, agentsReadable: true });
      } catch (e) {
        if (isVigilError(e, 'authentication')) throw e;
        const code = e instanceof UpstreamHttpError ? e.upstreamCode : undefined;
        const reason = (code && DATAVERSE_ACCESS_REASONS[code]) || (e as Error).message;
        environments.push({ id: env.id, name: env.displayName, dataverse: true, agentsReadable: false, reason });
      }
    }
  } catch (e) {
    if (isVigilError(e, 'authentication')) throw e;
    managementApp = isNotManagementAppError(e)
      ? {
          registered: false,
          detail: `Not registered as a Power Platform admin management application (BAP: "does not have permission to access the path"). A Power Platform administrator must register application ${ids.clientId}: New-PowerAppManagementApp -ApplicationId ${ids.clientId} in PowerShell, or one call to the Power Platform API (the integration's registration steps; docs/register-management-app.md).`,
        }
      : { registered: null, detail: `Could not check: ${(e as Error).message}` };
  }

  return {
    tenantId: ids.tenantId,
    clientId: ids.clientId,
    servicePrincipalObjectId: graphToken.claims.oid || null,
    verified: true,
    permissionList,
    grantedRoles,
    capabilities,
    missingPermissions,
    managementApp,
    powerBi,
    environments,
    warnings,
    checkedAt: new Date().toISOString(),
  };
}

/**
 * Power BI read-only admin API access for the doctor: one probe ({@link probeAdminApiAccess}) and the words for each
 * outcome, in both setups. Sources: learn.microsoft.com/fabric/admin/enable-service-principal-admin-apis (the tenant
 * setting; "must not have any admin-consent required permissions for Power BI"); the Power BI admin API pages
 * ("Required Scope … Must not be present when authentication via a service principal is used").
 * @throws VigilError `authentication` when no Power BI token can be issued.
 */
async function powerBiAccess(ctx: StreamContext, roles: readonly string[]): Promise<PowerBiAccess> {
  const consentedPermissions = powerBiConsentedRoles(roles);
  const tenantSetting = READ_ONLY_ADMIN_API_SETTING;
  let probe: Awaited<ReturnType<typeof probeAdminApiAccess>>;
  try {
    probe = await probeAdminApiAccess(ctx);
  } catch (e) {
    if (isVigilError(e, 'authentication')) throw e;
    probe = { ok: false, error: e as Error };
  }
  if (probe.ok) {
    return {
      access: 'granted',
      consentedPermissions,
      tenantSetting,
      detail: consentedPermissions.length
        ? `The read-only admin APIs answered. The app holds the admin-consented Power BI Service permission ${consentedPermissions.join(', ')}, which Microsoft documents a service principal must not hold for these APIs; access comes from the tenant setting "${tenantSetting}".`
        : `The read-only admin APIs answered: the tenant setting "${tenantSetting}" covers the app, which holds no Power BI permission (the setup Microsoft documents).`,
      ...(consentedPermissions.length
        ? {
            fix: `Optional but advised by Microsoft: remove ${consentedPermissions.join(', ')} from the app (App registrations > the app > API permissions > Power BI Service > Remove permission); access stays with the tenant setting.`,
          }
        : {}),
    };
  }
  const e = probe.error;
  if (isVigilError(e, 'authorization') && e.code === POWER_BI_NOT_AUTHORIZED) {
    return { access: 'refused', consentedPermissions, tenantSetting, detail: e.message, fix: e.remediation };
  }
  return { access: 'unknown', consentedPermissions, tenantSetting, detail: `Could not check Power BI access: ${e.message}` };
}
