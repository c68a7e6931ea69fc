import type { PowerPlatformEnvironment } from './streams/environments.ts';
import { UpstreamHttpError } from '../../platform/http/client.ts';
import type { StreamContext } from '../stream.ts';
import { BAP_API_VERSION, environmentsStream } from './streams/environments.ts';
import type { HttpClient } from '../../platform/http/client.ts';
import type { CloudProfile } from '../../config/cloud.ts';
import { ROOT_SLICE } from '../stream.ts';

/**
 * BAP calls used by onboarding. BAP answers 403 with a message containing "does not have permission to access the
 * path" while the application is not registered as a Power Platform admin management application.
 * Source: terraform-provider-power-platform `validateNoManagementApplicationPermissionsForBapiRequest`;
 * Power Platform "Create a service principal application" (powerplatform-api-create-service-principal.md).
 */

/** The marker of BAP's 403 for an unregistered application. */
const NOT_MANAGEMENT_APP_MARKER = 'does not have permission to access the path';

/** True when `e` is BAP's answer to an application not registered as a management application. */
export function isNotManagementAppError(e: unknown): boolean {
  return e instanceof UpstreamHttpError && e.status === 403 && (e.upstreamMessage ?? '').includes(NOT_MANAGEMENT_APP_MARKER);
}

/**
 * Lists every environment (all pages).
 * @throws UpstreamHttpError (403 when not registered: see {@link isNotManagementAppError}).
 */
export async function listAllEnvironments(ctx: StreamContext): Promise<PowerPlatformEnvironment[]> {
  const out: PowerPlatformEnvironment[] = [];
  for await (const page of environmentsStream.read(ctx, ROOT_SLICE, null)) out.push(...page.records);
  return out;
}

/** What the adminApplications calls need: a delegated administrator token (an application cannot register itself). */
export interface AdminApiContext {
  http: HttpClient;
  cloud: CloudProfile;
  /** Bearer token of a Power Platform or Global Administrator user. */
  token: string;
}

/** URL of an application's admin management application registration (`PUT` registers, `GET` reads it back). */
export const adminApplicationUrl = (cloud: CloudProfile, appId: string) =>
  `${cloud.bap.baseUrl}/providers/Microsoft.BusinessAppPlatform/adminApplications/${encodeURIComponent(appId)}?api-version=${BAP_API_VERSION}`;

/**
 * Registers an application as a Power Platform admin management application: `PUT …/adminApplications/{appId}`.
 * Source: Power Platform "Create a service principal application" (powerplatform-api-create-service-principal.md);
 * terraform-provider-power-platform `admin_management_application` (200 `{"applicationId": …}`).
 * @throws UpstreamHttpError (403 when the user is not an administrator).
 */
export async function putManagementApp(ctx: AdminApiContext, appId: string): Promise<{ applicationId: string }> {
  const res = await ctx.http.send<{ applicationId?: string } | null>({
    api: 'bap',
    method: 'PUT',
    url: adminApplicationUrl(ctx.cloud, appId),
    body: {},
    token: async () => ctx.token,
  });
  return { applicationId: res.body?.applicationId ?? appId };
}

/**
 * Reads a registration: `GET …/adminApplications/{appId}`; null when the application is not registered (404).
 * @throws UpstreamHttpError for other errors.
 */
export async function getManagementApp(ctx: AdminApiContext, appId: string): Promise<{ applicationId: string } | null> {
  try {
    const res = await ctx.http.send<{ applicationId?: string } | null>({
      api: 'bap',
      url: adminApplicationUrl(ctx.cloud, appId),
      token: async () => ctx.token,
    });
    return { applicationId: res.body?.applicationId ?? appId };
  } catch (e) {
    if (e instanceof UpstreamHttpError && e.status === 404) return null;
    throw e;
  }
}

/**
 * Makes an application an application user with the System Administrator role in an environment's Dataverse:
 * `POST …/scopes/admin/environments/{envId}/addAppUser` with `{"servicePrincipalAppId": …}`. The caller is the
 * registered management application itself, or an administrator.
 * Source: terraform-provider-power-platform `internal/services/application/api_application.go`.
 * @throws UpstreamHttpError when refused.
 */
export async function addAppUser(ctx: StreamContext, environmentId: string, appId: string, token?: () => Promise<string>): Promise<void> {
  await ctx.http.send({
    api: 'bap',
    method: 'POST',
    url: `${ctx.cloud.bap.baseUrl}/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments/${encodeURIComponent(environmentId)}/addAppUser?api-version=${BAP_API_VERSION}`,
    body: { servicePrincipalAppId: appId },
    token: token ?? ctx.tokens.bearer(ctx.cloud.bap.resource),
    tenantId: ctx.tenantId,
  });
}
