/**
 * The authorization endpoint of the Microsoft identity platform for the authorization-code flow with OpenID Connect
 * (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow#request-an-authorization-code and
 * https://learn.microsoft.com/entra/identity-platform/v2-protocols-oidc#send-the-sign-in-request):
 * `GET /{tenant}/oauth2/v2.0/authorize?client_id&response_type=code&redirect_uri&scope&state&nonce&code_challenge
 * &code_challenge_method`. No page is shown: the account "signed in" in the browser is chosen through the control API
 * (`setBrowserUser`); without one, the tenant's first enabled Global Administrator (the administrator who consented)
 * answers. On success: 302 `{redirect_uri}?code=…&state=…&session_state=…`; the code is redeemed at the token
 * endpoint (`grant_type=authorization_code`, see usertokens.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { queryParam, type EmulatorContext } from './common.ts';
import { DIRECTORY_ROLES } from './constants.ts';
import { errorPage, formEncodeLower, withQuery } from './consent.ts';
import { findApp, findUserByUpn, type DirectoryUser, type Tenant } from './tenant.ts';

/** The user the browser is signed in with at `tenant`: the control-set UPN (searched in every tenant), else the first enabled Global Administrator member. */
function browserUser(ctx: EmulatorContext, tenant: Tenant): { user: DirectoryUser; home: Tenant } | undefined {
  const upn = ctx.signIn.browserUser(tenant.id);
  if (upn === undefined) {
    const admin = tenant.users.find(
      (u) => u.userType === 'Member' && u.accountEnabled && (u.directoryRoles ?? []).includes(DIRECTORY_ROLES.globalAdministrator),
    );
    return admin ? { user: admin, home: tenant } : undefined;
  }
  for (const t of [tenant, ...ctx.store.list().filter((x) => x.id !== tenant.id)]) {
    const user = findUserByUpn(t, upn);
    if (user) return { user, home: t };
  }
  return undefined;
}

/**
 * Registers `GET /{tenant}/oauth2/v2.0/authorize` on the root instance. Checks, in order, answering a 400 page (no
 * redirect) for: an unknown tenant (AADSTS90002; `common`/`organizations` are not served here); no `client_id`
 * (AADSTS900144); an unknown application, or a single-tenant one from another tenant (AADSTS700016); a `redirect_uri`
 * that is not registered exactly (AADSTS50011); no signed-in account (AADSTS50058); an account of another tenant
 * (AADSTS50020); a disabled account (AADSTS50057). Then redirects with `error` for: `response_type` other than `code`
 * (`unsupported_response_type`, AADSTS700054); no `scope` (`invalid_request`, AADSTS900144); a
 * `code_challenge_method` other than `S256`/`plain` (`invalid_request`, AADSTS501491); no service principal of the
 * application in the tenant (`consent_required`, AADSTS65001). Texts follow the AADSTS error reference, from memory
 * (UNCONFIRMED as exact texts).
 */
export function registerAuthorize(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get<{ Params: { tenant: string } }>(
    '/:tenant/oauth2/v2.0/authorize',
    async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
      const name = req.params.tenant;
      const tenant = ctx.store.resolve(name);
      if (!tenant)
        return errorPage(
          ctx,
          req,
          reply,
          90002,
          'invalid_tenant',
          `Tenant '${name}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
        );
      const clientId = queryParam(req, 'client_id');
      if (!clientId) return errorPage(ctx, req, reply, 900144, 'invalid_request', "The request body must contain the following parameter: 'client_id'.");
      const home = ctx.store.findHomeApp(clientId);
      if (!home || (home.tenant.id !== tenant.id && home.app.signInAudience !== 'AzureADMultipleOrgs')) {
        return errorPage(
          ctx,
          req,
          reply,
          700016,
          'unauthorized_client',
          `Application with identifier '${clientId}' was not found in the directory '${tenant.displayName}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
        );
      }
      const redirectUri = queryParam(req, 'redirect_uri') ?? home.app.redirectUris?.[0];
      if (redirectUri === undefined || !(home.app.redirectUris ?? []).includes(redirectUri)) {
        return errorPage(
          ctx,
          req,
          reply,
          50011,
          'invalid_request',
          `The redirect URI '${redirectUri ?? ''}' specified in the request does not match the redirect URIs configured for the application '${clientId}'. Make sure the redirect URI sent in the request matches one added to your application in the Azure portal. Navigate to https://aka.ms/redirectUriMismatchError to learn more about how to fix this.`,
        );
      }
      const signedIn = browserUser(ctx, tenant);
      if (!signedIn) return errorPage(ctx, req, reply, 50058, 'invalid_request', 'A silent sign-in request was sent but no user is signed in.');
      if (signedIn.home.id !== tenant.id) {
        return errorPage(
          ctx,
          req,
          reply,
          50020,
          'invalid_request',
          `User account '{EUII Hidden}' from identity provider 'https://sts.windows.net/${signedIn.home.id}/' does not exist in tenant '${tenant.displayName}' and cannot access the application '${clientId}'(${home.app.displayName}) in that tenant. The account needs to be added as an external user in the tenant first. Sign out and sign in again with a different Microsoft Entra user account.`,
        );
      }
      if (!signedIn.user.accountEnabled) return errorPage(ctx, req, reply, 50057, 'invalid_request', 'The user account is disabled.');
      const state = queryParam(req, 'state');
      const stateParam = state !== undefined ? `&state=${encodeURIComponent(state)}` : '';
      const fail = (error: string, description: string): FastifyReply =>
        reply
          .code(302)
          .header('location', withQuery(redirectUri, `error=${error}&error_description=${formEncodeLower(description)}${stateParam}`))
          .header('cache-control', 'no-store, no-cache')
          .send();
      if (queryParam(req, 'response_type') !== 'code')
        return fail('unsupported_response_type', 'AADSTS700054: response_type is not enabled for the application; the emulator serves response_type=code.');
      const scope = queryParam(req, 'scope');
      if (!scope || scope.trim() === '') return fail('invalid_request', "AADSTS900144: The request body must contain the following parameter: 'scope'.");
      const challenge = queryParam(req, 'code_challenge');
      const method = queryParam(req, 'code_challenge_method') ?? 'plain';
      if (challenge !== undefined && method !== 'S256' && method !== 'plain') return fail('invalid_request', 'AADSTS501491: Invalid code_challenge_method.');
      if (home.tenant.id !== tenant.id && !findApp(tenant, clientId)) {
        return fail(
          'consent_required',
          `AADSTS65001: The user or administrator has not consented to use the application with ID '${clientId}' named '${home.app.displayName}'. Send an interactive authorization request for this user and resource.`,
        );
      }
      const code = ctx.signIn.issueAuthorizationCode({
        tenantId: tenant.id,
        userId: signedIn.user.id,
        clientId,
        redirectUri,
        scope,
        nonce: queryParam(req, 'nonce'),
        codeChallenge: challenge,
        codeChallengeMethod: method as 'S256' | 'plain',
      });
      return reply
        .code(302)
        .header('location', withQuery(redirectUri, `code=${encodeURIComponent(code)}${stateParam}&session_state=${randomUUID()}`))
        .header('cache-control', 'no-store, no-cache')
        .send();
    },
  );
}
