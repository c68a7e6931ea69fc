/**
 * Power Platform admin API (BAP) under `/bap` (reference §3): admin environments list/get, the `adminApplications`
 * collection (management-app registration) and `addAppUser`.
 *
 * Sources: https://learn.microsoft.com/power-platform/admin/powerplatform-api-create-service-principal,
 * /power-platform/admin/list-environments, /power-platform/admin/create-dataverseapplicationuser;
 * terraform-provider-power-platform (`validateNoManagementApplicationPermissionsForBapiRequest`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { POWER_PLATFORM_ADMIN_ROLES, RESOURCES, SYSTEM_ADMINISTRATOR } from './constants.ts';
import { bearerToken, newId, queryParam, type EmulatorContext } from './common.ts';
import { findApp, findEnvironment, indexes, type Environment, type Tenant } from './tenant.ts';
import type { AccessTokenClaims } from './tokens.ts';
import { createRng } from './prng.ts';

const PROVIDER = '/providers/Microsoft.BusinessAppPlatform';

function bapError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });
}

/**
 * The BAP admin representation of an environment (reference §3.3), with `linkedEnvironmentMetadata` pointing at the
 * emulator's Dataverse: `instanceUrl` = `{base}/dataverse/{uniqueName}/`, `instanceApiUrl` = the same without slash.
 */
function environmentResource(base: string, tenant: Tenant, env: Environment): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    tenantId: tenant.id,
    azureRegion: env.azureRegion,
    displayName: env.displayName,
    createdTime: env.createdTime,
    createdBy: env.createdBy,
    provisioningState: env.provisioningState,
    creationType: env.isDefault ? 'DefaultTenant' : 'User',
    environmentSku: env.environmentSku,
    isDefault: env.isDefault,
    runtimeEndpoints: {
      'microsoft.BusinessAppPlatform': `${base}/bap`,
      'microsoft.PowerApps': `${base}/powerapps`,
      'microsoft.Flow': `${base}/flow`,
    },
    databaseType: env.dataverse ? 'CommonDataService' : 'None',
    states: env.states,
    governanceConfiguration: env.governanceConfiguration ?? { protectionLevel: 'Basic' },
  };
  if (env.dataverse) {
    const dv = env.dataverse;
    properties.linkedEnvironmentMetadata = {
      type: 'Dynamics365Instance',
      resourceId: dv.businessUnitId,
      friendlyName: env.displayName,
      uniqueName: dv.uniqueName,
      domainName: dv.domainName,
      version: dv.version,
      instanceUrl: `${base}/dataverse/${dv.uniqueName}/`,
      instanceApiUrl: `${base}/dataverse/${dv.uniqueName}`,
      baseLanguage: 1033,
      instanceState: dv.instanceState,
      createdTime: env.createdTime,
      platformSku: 'Standard',
    };
  }
  return {
    id: `${PROVIDER}/scopes/admin/environments/${env.name}`,
    type: 'Microsoft.BusinessAppPlatform/scopes/environments',
    location: env.location,
    name: env.name,
    properties,
  };
}

interface BapAuth {
  tenant: Tenant;
  claims: AccessTokenClaims;
  isUser: boolean;
  /** A user token whose `wids` hold Global Administrator or Power Platform Administrator. */
  isAdmin: boolean;
  isManagementApp: boolean;
}

async function authenticate(ctx: EmulatorContext, req: FastifyRequest, reply: FastifyReply): Promise<BapAuth | null> {
  if (queryParam(req, 'api-version') === undefined) {
    bapError(reply, 400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
    return null;
  }
  const result = await ctx.tokens.verify(bearerToken(req));
  if (!result.ok) {
    const message =
      result.reason === 'missing'
        ? "Authentication failed. The 'Authorization' header is missing."
        : result.reason === 'expired'
          ? 'The access token has expired.'
          : 'The access token is invalid.';
    reply.header('www-authenticate', `Bearer authorization_uri="${ctx.baseUrl()}/common/oauth2/authorize", error="invalid_token"`);
    bapError(reply, 401, result.reason === 'missing' ? 'MissingAuthenticationToken' : 'InvalidAuthenticationToken', message);
    return null;
  }
  const aud = result.claims.aud.replace(/\/+$/, '');
  if (aud !== RESOURCES.bap && aud !== RESOURCES.bapAlternate) {
    bapError(
      reply,
      401,
      'InvalidAuthenticationTokenAudience',
      `The access token has been obtained for wrong audience or resource '${result.claims.aud}'. It should exactly match with one of the allowed audiences '${RESOURCES.bap}','${RESOURCES.bap}/','${RESOURCES.bapAlternate}'.`,
    );
    return null;
  }
  const tenant = ctx.store.get(result.claims.tid);
  if (!tenant) {
    bapError(reply, 401, 'InvalidAuthenticationToken', 'The access token is invalid.');
    return null;
  }
  const isUser = result.claims.idtyp !== 'app';
  const isAdmin = isUser && (result.claims.wids ?? []).some((w) => POWER_PLATFORM_ADMIN_ROLES.includes(w));
  const app = isUser ? undefined : findApp(tenant, result.claims.appid);
  return { tenant, claims: result.claims, isUser, isAdmin, isManagementApp: app?.isManagementApp ?? false };
}

/**
 * The 403 a signed-in user without an admin role receives. The wording is the emulator's (UNCONFIRMED: no captured
 * BAP body for this case); the envelope and code follow BAP's `{"error":{"code":"Forbidden",…}}`.
 */
function userForbidden(reply: FastifyReply, auth: BapAuth, action: string): FastifyReply {
  return bapError(
    reply,
    403,
    'Forbidden',
    `The user '${auth.claims.upn ?? auth.claims.oid}' does not have permission to ${action} in tenant ${auth.tenant.id}. The caller must be a Global Administrator or a Power Platform Administrator.`,
  );
}

/** Admits admin user tokens only: an app token gets `pathForbidden`, a user without an admin role `userForbidden`. */
function requireAdminUser(reply: FastifyReply, auth: BapAuth, path: string, action: string): boolean {
  if (!auth.isUser) {
    pathForbidden(reply, auth, path);
    return false;
  }
  if (!auth.isAdmin) {
    userForbidden(reply, auth, action);
    return false;
  }
  return true;
}

/** The 403 an unregistered service principal receives (exact wording the Terraform provider matches on). */
function pathForbidden(reply: FastifyReply, auth: BapAuth, path: string): FastifyReply {
  return bapError(
    reply,
    403,
    'Forbidden',
    `The service principal with id '${auth.claims.oid}' for application ${auth.claims.appid} does not have permission to access the path '${path}' in tenant ${auth.tenant.id}.`,
  );
}

/**
 * Registers BAP routes under the `/bap` prefix. Every route requires `api-version` (else 400
 * `MissingApiVersionParameter`) and a token for `https://service.powerapps.com` or `https://api.bap.microsoft.com`.
 * - `GET {PROVIDER}/scopes/admin/environments[/{envId}]`: users and registered management apps; other apps get 403
 *   "… does not have permission to access the path …". Unknown env → 404 `EnvironmentNotFound`.
 * - `PUT|GET|DELETE {PROVIDER}/adminApplications/{appId}`, `GET {PROVIDER}/adminApplications`: a user token whose
 *   `wids` hold Global Administrator or Power Platform Administrator (reference §3.2). An app token → 403 "… does not
 *   have permission to access the path …"; a user without those roles → 403 `Forbidden` (wording UNCONFIRMED).
 *   PUT registers an app that has a service principal in the tenant (its own app, or a managed app after consent) and
 *   answers 200 `{"applicationId"}`; no service principal → 400 `ServicePrincipalNotFound` (emulator's choice).
 *   GET of an unregistered app → 404 `AdminApplicationNotFound`. DELETE → 204.
 * - `POST {PROVIDER}/scopes/admin/environments/{envId}/addAppUser` body `{"servicePrincipalAppId"}`: caller is a
 *   registered management app or an admin user (other users → 403 `Forbidden`); makes the app a System Administrator
 *   application user of the environment's Dataverse (idempotent). Unknown env → 404 `EnvironmentNotFound`; no Dataverse
 *   → 400 `EnvironmentHasNoDataverse`; no service principal → 400 `ServicePrincipalNotFound`; environment flag
 *   `refuseAddAppUser` → 403 `AppUserCreationFailed` (emulator's choice, UNCONFIRMED).
 */
export function registerBap(app: FastifyInstance, ctx: EmulatorContext): void {
  const envsPath = `${PROVIDER}/scopes/admin/environments`;

  app.get(envsPath, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    if (!auth.isUser && !auth.isManagementApp) return pathForbidden(reply, auth, envsPath);
    return reply
      .type('application/json; charset=utf-8')
      .send({ value: auth.tenant.environments.map((e) => environmentResource(ctx.baseUrl(), auth.tenant, e)) });
  });

  app.get<{ Params: { envId: string } }>(`${envsPath}/:envId`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    if (!auth.isUser && !auth.isManagementApp) return pathForbidden(reply, auth, `${envsPath}/${req.params.envId}`);
    const env = findEnvironment(auth.tenant, req.params.envId);
    if (!env) return bapError(reply, 404, 'EnvironmentNotFound', `The environment '${req.params.envId}' could not be found in the tenant '${auth.tenant.id}'.`);
    return reply.type('application/json; charset=utf-8').send(environmentResource(ctx.baseUrl(), auth.tenant, env));
  });

  app.post<{ Params: { envId: string } }>(`${envsPath}/:envId/addAppUser`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    const path = `${envsPath}/${req.params.envId}/addAppUser`;
    if (!auth.isUser && !auth.isManagementApp) return pathForbidden(reply, auth, path);
    if (auth.isUser && !auth.isAdmin) return userForbidden(reply, auth, 'add application users');
    const env = findEnvironment(auth.tenant, req.params.envId);
    if (!env) return bapError(reply, 404, 'EnvironmentNotFound', `The environment '${req.params.envId}' could not be found in the tenant '${auth.tenant.id}'.`);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const appId = typeof body.servicePrincipalAppId === 'string' ? body.servicePrincipalAppId : undefined;
    if (!appId) return bapError(reply, 400, 'InvalidRequestBody', "The request body must contain 'servicePrincipalAppId'.");
    const target = findApp(auth.tenant, appId);
    if (!target) return bapError(reply, 400, 'ServicePrincipalNotFound', `No service principal for application '${appId}' exists in tenant ${auth.tenant.id}.`);
    const org = env.dataverse;
    if (!org) return bapError(reply, 400, 'EnvironmentHasNoDataverse', `The environment '${env.name}' has no Dataverse database.`);
    if (env.refuseAddAppUser) {
      return bapError(
        reply,
        403,
        'AppUserCreationFailed',
        `Failed to add the application user for application '${target.appId}' to environment '${env.name}': the environment's Dataverse organization refused the request.`,
      );
    }
    let appUser = org.appUsers.find((a) => a.appId === target.appId);
    if (!appUser) {
      let su = org.systemusers.find((s) => s.applicationid === target.appId);
      if (!su) {
        su = {
          systemuserid: newId(),
          fullname: `# ${target.displayName}`,
          domainname: `${target.appId}@${auth.tenant.domains[0] ?? 'emulator.local'}`,
          internalemailaddress: `${target.appId}@${auth.tenant.domains[0] ?? 'emulator.local'}`,
          azureactivedirectoryobjectid: target.servicePrincipalObjectId,
          applicationid: target.appId,
          isdisabled: false,
          accessmode: 4,
        };
        org.systemusers.push(su);
        indexes.systemusers.invalidate(org.systemusers);
      }
      appUser = { appId: target.appId, systemuserid: su.systemuserid, roles: [] };
      org.appUsers.push(appUser);
    }
    if (!appUser.roles.includes(SYSTEM_ADMINISTRATOR)) appUser.roles.push(SYSTEM_ADMINISTRATOR);
    return reply.type('application/json; charset=utf-8').send({ servicePrincipalAppId: target.appId });
  });

  const adminAppsPath = `${PROVIDER}/adminApplications`;

  app.get(adminAppsPath, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    if (!requireAdminUser(reply, auth, adminAppsPath, 'list admin applications')) return reply;
    return reply
      .type('application/json; charset=utf-8')
      .send({ value: auth.tenant.apps.filter((a) => a.isManagementApp).map((a) => ({ applicationId: a.appId })) });
  });

  app.get<{ Params: { appId: string } }>(`${adminAppsPath}/:appId`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    if (!requireAdminUser(reply, auth, `${adminAppsPath}/${req.params.appId}`, 'read admin applications')) return reply;
    const target = findApp(auth.tenant, req.params.appId);
    if (!target || !target.isManagementApp)
      return bapError(reply, 404, 'AdminApplicationNotFound', `The admin application '${req.params.appId}' is not registered in tenant ${auth.tenant.id}.`);
    return reply.type('application/json; charset=utf-8').send({ applicationId: target.appId });
  });

  app.put<{ Params: { appId: string } }>(`${adminAppsPath}/:appId`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    if (!requireAdminUser(reply, auth, `${adminAppsPath}/${req.params.appId}`, 'register admin applications')) return reply;
    const target = findApp(auth.tenant, req.params.appId);
    if (!target)
      return bapError(reply, 400, 'ServicePrincipalNotFound', `No service principal for application '${req.params.appId}' exists in tenant ${auth.tenant.id}.`);
    target.isManagementApp = true;
    return reply.type('application/json; charset=utf-8').send({ applicationId: target.appId });
  });

  app.delete<{ Params: { appId: string } }>(`${adminAppsPath}/:appId`, async (req, reply) => {
    const auth = await authenticate(ctx, req, reply);
    if (!auth) return reply;
    if (!requireAdminUser(reply, auth, `${adminAppsPath}/${req.params.appId}`, 'unregister admin applications')) return reply;
    const target = findApp(auth.tenant, req.params.appId);
    if (target) target.isManagementApp = false;
    return reply.code(204).send();
  });
}

/** BAP-shaped 404 for an unknown path under `/bap`. */
export function bapNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return bapError(reply, 404, 'NotFound', `The requested path '${(req.url.split('?')[0] ?? '').replace(/^\/bap/, '')}' is not served by the emulator.`);
}

/**
 * Gives environments their Managed Environments configuration (BAP `governanceConfiguration`) from a generator of its
 * own (so no other generated value changes). The default environment stays unmanaged (`Basic`); the second is managed
 * with strict settings (sharing excluded from security groups, at most 20 individuals, solution checker `block`); the
 * third managed with none (`noLimit`, `-1`, `none`); the others ~50 % managed with random settings.
 * Shapes: microsoft/terraform-provider-power-platform `internal/services/environment/dto.go` (`extendedSettings`
 * values are strings); Learn "Enable Managed Environments using PowerShell" (`protectionLevel = "Standard"`).
 */
export function generateGovernance(environments: Environment[], seed: number | string): void {
  const rng = createRng(`${String(seed)}:governance`);
  environments.forEach((env, i) => {
    const managed = i === 0 ? false : i === 1 || i === 2 ? true : rng.chance(0.5);
    if (!managed) {
      env.governanceConfiguration = { protectionLevel: 'Basic' };
      return;
    }
    const strict = i === 1 ? true : i === 2 ? false : rng.chance(0.5);
    const limited = strict || rng.chance(0.3);
    env.governanceConfiguration = {
      protectionLevel: 'Standard',
      settings: {
        extendedSettings: {
          excludeEnvironmentFromAnalysis: 'false',
          isGroupSharingDisabled: String(limited),
          maxLimitUserSharing: limited ? String(strict ? 20 : rng.pick([-1, 50])) : '-1',
          limitSharingMode: limited ? 'excludeSharingToSecurityGroups' : 'noLimit',
          solutionCheckerMode: strict ? 'block' : rng.pick(['none', 'warn']),
          suppressValidationEmails: 'true',
          solutionCheckerRuleOverrides: '',
        },
      },
    };
  });
}
