/**
 * The admin consent endpoint (reference §2; https://learn.microsoft.com/entra/identity-platform/v2-admin-consent):
 * `GET /{tenant}/adminconsent?client_id=&redirect_uri=&state=` (v1 style, consents to every permission the app
 * registration requests) and `GET /{tenant}/v2.0/adminconsent?client_id=&scope=&redirect_uri=&state=` (`scope`
 * required). No page is shown: what the administrator does is the tenant's consent behaviour, set through the control
 * API (`approve` by default), and the answer is the 302 redirect Entra sends after the page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { aadError } from './aad.ts';
import { queryParam, type EmulatorContext } from './common.ts';
import { consentServicePrincipal } from './managed.ts';
import type { Tenant } from './tenant.ts';

/** `encodeURIComponent` with `+` for spaces and lower-case escapes, as Entra writes `scope` and `error_description`. */
export function formEncodeLower(value: string): string {
  return encodeURIComponent(value)
    .replace(/%20/g, '+')
    .replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
}

/** Appends a raw query string to a redirect URI that may already have a query. */
export function withQuery(uri: string, query: string): string {
  const hash = uri.indexOf('#');
  const base = hash >= 0 ? uri.slice(0, hash) : uri;
  return `${base}${base.includes('?') ? '&' : '?'}${query}`;
}

function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Answers a consent error the way the sign-in page does when it cannot redirect: status 400, an HTML page with the
 * AADSTS text (or Entra's JSON error body when the client asks for `application/json`).
 */
export function errorPage(ctx: EmulatorContext, req: FastifyRequest, reply: FastifyReply, code: number, error: string, text: string): FastifyReply {
  const body = aadError(ctx, req, code, error, text);
  reply.code(400).header('cache-control', 'no-store, no-cache');
  if (String(req.headers.accept ?? '').includes('application/json')) return reply.type('application/json; charset=utf-8').send(body);
  return reply
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html><head><title>Sign in to your account</title></head><body><h1>Sorry, but we're having trouble signing you in.</h1><p id="error">${html(String(body.error_description).replace(/\r\n/g, ' '))}</p></body></html>`,
    );
}

/**
 * Registers the admin consent routes on the root instance. Checks, in order: `client_id` present (AADSTS900144); the
 * tenant (GUID or domain; `common`/`organizations` = the control-set signed-in administrator's tenant, none set →
 * AADSTS50058; unknown → AADSTS90002); the application exists in a served tenant (AADSTS700016) and, for a foreign
 * tenant, is multi-tenant (AADSTS700016); `redirect_uri` equals a registered one exactly (absent: the first registered)
 * (AADSTS50011); v2: `scope` present (AADSTS900144). Each failure is a 400 page. Then, per the tenant's behaviour:
 * - `approve`: creates (or refreshes) the service principal and grants the requested permissions, then
 *   302 `{redirect_uri}?admin_consent=True&tenant={tenantGuid}&state={state}` (v2 adds `&scope=`);
 * - `deny`: 302 `?error=permission_denied&error_description=The+admin+canceled+the+request&state=`;
 * - `consent_required`: 302 `?admin_consent=True&error=consent_required&error_description=AADSTS65004%3a+The+resource+owner+or+authorization+server+denied+the+request.&state=`.
 */
export function registerAdminConsent(app: FastifyInstance, ctx: EmulatorContext): void {
  const handle =
    (v2: boolean) =>
    async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
      const name = req.params.tenant;
      const clientId = queryParam(req, 'client_id');
      if (!clientId) return errorPage(ctx, req, reply, 900144, 'invalid_request', "The request body must contain the following parameter: 'client_id'.");
      const alias = name.toLowerCase();
      let tenant: Tenant | undefined;
      if (alias === 'common' || alias === 'organizations') {
        const signedIn = ctx.signIn.signedInAdminTenant;
        if (!signedIn) return errorPage(ctx, req, reply, 50058, 'invalid_request', 'A silent sign-in request was sent but no user is signed in.');
        tenant = ctx.store.get(signedIn);
        if (!tenant)
          return errorPage(
            ctx,
            req,
            reply,
            90002,
            'invalid_tenant',
            `Tenant '${signedIn}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
          );
      } else {
        tenant = ctx.store.resolve(name);
        if (!tenant) {
          return errorPage(
            ctx,
            req,
            reply,
            90002,
            'invalid_tenant',
            `Tenant '${name}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`,
          );
        }
      }
      const home = ctx.store.findHomeApp(clientId);
      const foreign = home !== undefined && home.tenant.id !== tenant.id;
      if (!home || (foreign && home.app.signInAudience !== 'AzureADMultipleOrgs')) {
        return errorPage(
          ctx,
          req,
          reply,
          700016,
          'unauthorized_client',
          `Application with identifier '${clientId}' was not found in the directory '${tenant.displayName}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
        );
      }
      const registered = home.app.redirectUris ?? [];
      const redirectUri = queryParam(req, 'redirect_uri') ?? registered[0];
      if (redirectUri === undefined || !registered.includes(redirectUri)) {
        return errorPage(
          ctx,
          req,
          reply,
          50011,
          'invalid_request',
          `The redirect URI '${redirectUri ?? ''}' specified in the request does not match the redirect URIs configured for the application '${clientId}'. Make sure the redirect URI sent in the request matches one added to your application in the Azure portal. Navigate to https://aka.ms/redirectUriMismatchError to learn more about how to fix this.`,
        );
      }
      const scope = queryParam(req, 'scope');
      if (v2 && (scope === undefined || scope.trim() === '')) {
        return errorPage(ctx, req, reply, 900144, 'invalid_request', "The request body must contain the following parameter: 'scope'.");
      }
      const state = queryParam(req, 'state');
      const stateParam = state !== undefined ? `&state=${encodeURIComponent(state)}` : '';
      let query: string;
      switch (ctx.signIn.consentBehavior(tenant.id)) {
        case 'deny':
          query = `error=permission_denied&error_description=The+admin+canceled+the+request${stateParam}`;
          break;
        case 'consent_required':
          query = `admin_consent=True&error=consent_required&error_description=AADSTS65004%3a+The+resource+owner+or+authorization+server+denied+the+request.${stateParam}`;
          break;
        default:
          consentServicePrincipal(ctx.store, tenant, clientId);
          query = `admin_consent=True&tenant=${tenant.id}${stateParam}${v2 && scope !== undefined ? `&scope=${formEncodeLower(scope)}` : ''}`;
      }
      return reply.code(302).header('location', withQuery(redirectUri, query)).header('cache-control', 'no-store, no-cache').send();
    };
  app.get('/:tenant/adminconsent', handle(false));
  app.get('/:tenant/v2.0/adminconsent', handle(true));
}
