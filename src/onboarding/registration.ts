import { VigilError } from '../core/errors.ts';
import type { CloudProfile } from '../config/cloud.ts';
import { UpstreamHttpError, type HttpClient } from '../platform/http/client.ts';
import { acquireAdminToken, type AdminSignIn } from '../platform/identity/admin.ts';
import type { Logger } from '../platform/log/index.ts';
import { adminApplicationUrl, getManagementApp, putManagementApp } from '../sources/bap/client.ts';
import type { VigilConfig } from '../config/index.ts';
import type { Executor } from '../store/db.ts';
import { getIntegration } from '../integration/index.ts';
import { requireGuid } from './validate.ts';

/**
 * Seed step 2, both modes: register the application as a Power Platform admin management application. Only a
 * Power Platform Administrator or Global Administrator user can (an application cannot register itself): Vigil signs
 * the administrator in (device code by default, or the seed's password grant), calls `PUT adminApplications/{appId}`,
 * confirms it with a GET and reports who registered it. The PowerShell alternative of the seed is printed on request.
 */

/** Directory role template ids that may register management applications. */
const ADMIN_ROLE_TEMPLATES: Record<string, string> = {
  '62e90394-69f5-4237-9190-012177145e10': 'Global Administrator',
  '11648597-926c-4cf3-9c36-bcebb0ba8dcc': 'Power Platform Administrator',
};

/**
 * The tenant and application to register: those of a stored integration, or given directly (Mode B registers before
 * the integration exists; the application then defaults to the configured managed application). `tenantId` is
 * undefined only when not required (the PowerShell instructions need none).
 * @throws VigilError `not-found` for an unknown integration, `invalid-input` naming `--tenant-id` / `--application-id`.
 */
export async function registrationTarget(
  deps: { db: Executor; config: Pick<VigilConfig, 'managedApp'> },
  input: { integration?: string; tenantId?: string; applicationId?: string; tenantRequired: boolean },
): Promise<{ tenantId: string | undefined; applicationId: string }> {
  if (input.integration) {
    const row = await getIntegration(deps.db, input.integration);
    return { tenantId: row.tenant_id, applicationId: row.client_id };
  }
  const applicationId = requireGuid(
    'applicationId',
    input.applicationId ?? deps.config.managedApp?.clientId,
    'your app registration > Overview > Application (client) ID',
  );
  const tenantId =
    input.tenantRequired || input.tenantId
      ? requireGuid('tenantId', input.tenantId, 'Microsoft Entra admin center > Overview > Tenant ID (or name the integration instead)')
      : undefined;
  return { tenantId, applicationId };
}

/** Result of {@link registerManagementApp}. */
export interface RegistrationResult {
  tenantId: string;
  applicationId: string;
  /** Confirmed by reading the registration back. */
  registered: boolean;
  /** The administrator who registered it (user principal name). */
  registeredBy: string;
}

/**
 * Registers `applicationId` in `tenantId`.
 * @throws VigilError `ADMIN_ROLE_MISSING` when the signed-in user is not an administrator of the platform; sign-in
 *   errors from {@link acquireAdminToken}; `REGISTRATION_NOT_CONFIRMED` when the GET does not show it.
 */
export async function registerManagementApp(
  deps: { http: HttpClient; cloud: CloudProfile; logger: Logger },
  input: { tenantId: string; applicationId: string; signIn: AdminSignIn; clientId?: string; scope?: string },
): Promise<RegistrationResult> {
  const { accessToken, claims } = await acquireAdminToken({
    cloud: deps.cloud,
    http: deps.http,
    tenantId: input.tenantId,
    signIn: input.signIn,
    clientId: input.clientId,
    scope: input.scope,
  });
  const ctx = { http: deps.http, cloud: deps.cloud, token: accessToken };
  try {
    await putManagementApp(ctx, input.applicationId);
  } catch (e) {
    if (e instanceof UpstreamHttpError && e.status === 403) {
      const roles = claims.wids.map((w) => ADMIN_ROLE_TEMPLATES[w]).filter(Boolean);
      throw new VigilError(
        'ADMIN_ROLE_MISSING',
        `${claims.upn || 'The signed-in user'} may not register management applications${roles.length ? '' : ': the account holds neither the Power Platform Administrator nor the Global Administrator role'} (${e.upstreamMessage ?? 'BAP answered 403'}).`,
        {
          remediation: (_, act) =>
            `Sign in with a Power Platform Administrator or Global Administrator account (Microsoft Entra admin center > Roles & admins), or have one ${act({ do: 'registerManagementAppPowerShell' })}.`,
          cause: e,
        },
      );
    }
    throw e;
  }
  const confirmed = await getManagementApp(ctx, input.applicationId);
  if (!confirmed) {
    throw new VigilError('REGISTRATION_NOT_CONFIRMED', `BAP accepted the registration of ${input.applicationId} but does not list it.`);
  }
  deps.logger.info(
    { tenantId: input.tenantId, applicationId: input.applicationId, registeredBy: claims.upn },
    'registered as Power Platform management application',
  );
  return { tenantId: input.tenantId, applicationId: confirmed.applicationId, registered: true, registeredBy: claims.upn };
}

/**
 * The seed's alternative (call 4): the Power Platform administration PowerShell module, run by an administrator in
 * Windows PowerShell 5.1. Source: Power Platform "PowerShell support" (`powershell-installation.md`,
 * `powershell-create-service-principal.md`).
 */
export function powershellInstructions(applicationId: string, endpoint = 'prod'): string[] {
  return [
    '# In Windows PowerShell 5.1, as a Power Platform Administrator (or Global Administrator):',
    'Install-Module -Name Microsoft.PowerApps.Administration.PowerShell   # once, if not installed',
    'Set-ExecutionPolicy RemoteSigned -Scope LocalMachine',
    `Add-PowerAppsAccount -Endpoint ${endpoint}                          # sign in interactively`,
    `New-PowerAppManagementApp -ApplicationId ${applicationId}`,
    '',
    `# A successful run lists the application: applicationId ${applicationId}`,
    `# Check any time with: Get-PowerAppManagementApp -ApplicationId ${applicationId}`,
  ];
}

/** Both ways to register an application as a Power Platform admin management application, for the portal and API. */
export interface RegistrationInstructions {
  applicationId: string;
  /** The PowerShell way ({@link powershellInstructions}). */
  powershell: string[];
  /** The REST way: a Power Platform or Global Administrator's delegated token on this call (`vigil register-management-app` makes it). */
  api: { method: 'PUT'; url: string; note: string };
}

/**
 * The instructions for `applicationId` in the cloud profile's BAP. Source: Power Platform "Create a service principal
 * application" (powerplatform-api-create-service-principal.md): `PUT …/adminApplications/{appId}` with a delegated
 * administrator token, or `New-PowerAppManagementApp`.
 */
export function registrationInstructions(cloud: CloudProfile, applicationId: string): RegistrationInstructions {
  return {
    applicationId,
    powershell: powershellInstructions(applicationId),
    api: {
      method: 'PUT',
      url: adminApplicationUrl(cloud, applicationId),
      note: `Send with "Authorization: Bearer <token of a Power Platform Administrator or Global Administrator, resource ${cloud.bap.resource}>" and an empty body.`,
    },
  };
}
