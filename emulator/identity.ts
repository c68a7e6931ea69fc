/**
 * Microsoft identity platform v2.0 at the root of the emulator: OIDC discovery, JWKS, instance discovery and the
 * client-credentials token endpoint, with Entra's error bodies (reference §1; MSAL's expectations in §1.9).
 *
 * An MSAL authority is `https://127.0.0.1:PORT/{tenant}`; configure MSAL with `knownAuthorities: ['127.0.0.1:PORT']`
 * (or `cloudDiscoveryMetadata`) so that it does not ask login.microsoftonline.com for instance discovery.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RESOURCES } from './constants.ts';
import { sendAad, tenantNotFound, TENANT_ALIASES } from './aad.ts';
import { newId, queryParam, type EmulatorContext } from './common.ts';
import { registerAuthorize } from './authorize.ts';
import { registerAdminConsent } from './consent.ts';
import { secretsOf } from './managed.ts';
import { findApp, type Tenant } from './tenant.ts';
import { handleUserGrant, registerDeviceCode, USER_GRANT_TYPES } from './usertokens.ts';

export { aadError } from './aad.ts';

const ALIASES = TENANT_ALIASES;

/** OIDC scopes MSAL may add; they are ignored when validating a client-credentials scope. */
const OIDC_SCOPES = new Set(['openid', 'profile', 'offline_access', 'email']);

/**
 * The OIDC discovery document for a tenant (or for `common`/`organizations`/`consumers`, whose issuer keeps the
 * literal `{tenantid}`), every URL pointing at the emulator. Fields per reference §1.9.
 */
function openIdConfiguration(base: string, pathTenant: string, tenant: Tenant | undefined): Record<string, unknown> {
  const seg = tenant ? tenant.id : pathTenant;
  const issuerTenant = tenant ? tenant.id : '{tenantid}';
  return {
    token_endpoint: `${base}/${seg}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
    jwks_uri: `${base}/${seg}/discovery/v2.0/keys`,
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    issuer: `${base}/${issuerTenant}/v2.0`,
    request_uri_parameter_supported: false,
    userinfo_endpoint: `${base}/graph/oidc/userinfo`,
    authorization_endpoint: `${base}/${seg}/oauth2/v2.0/authorize`,
    device_authorization_endpoint: `${base}/${seg}/oauth2/v2.0/devicecode`,
    http_logout_supported: true,
    frontchannel_logout_supported: true,
    end_session_endpoint: `${base}/${seg}/oauth2/v2.0/logout`,
    claims_supported: [
      'sub',
      'iss',
      'cloud_instance_name',
      'cloud_instance_host_name',
      'cloud_graph_host_name',
      'msgraph_host',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'acr',
      'nonce',
      'preferred_username',
      'name',
      'tid',
      'ver',
      'at_hash',
      'c_hash',
      'email',
    ],
    kerberos_endpoint: `${base}/${seg}/kerberos`,
    tenant_region_scope: tenant ? 'NA' : null,
    cloud_instance_name: 'microsoftonline.com',
    cloud_graph_host_name: 'graph.windows.net',
    msgraph_host: 'graph.microsoft.com',
    rbac_url: 'https://pas.windows.net',
  };
}

/**
 * Parses a client-credentials `scope`: exactly one `{resource}/.default` (OIDC scopes ignored). Returns the resource
 * with trailing slashes removed (`https://service.powerapps.com//.default` → `https://service.powerapps.com`), or null.
 */
function resourceFromScope(scope: string): string | null {
  const items = scope.split(/\s+/).filter((s) => s.length > 0 && !OIDC_SCOPES.has(s.toLowerCase()));
  if (items.length !== 1) return null;
  const only = items[0] as string;
  if (!only.toLowerCase().endsWith('/.default')) return null;
  const resource = only.slice(0, -'/.default'.length).replace(/\/+$/, '');
  return resource.length > 0 ? resource : null;
}

/**
 * Whether the resource is one the emulated cloud knows: the public-cloud resources of `RESOURCES` or a Dataverse
 * org URL `https://127.0.0.1:PORT/dataverse/{uniqueName}` (Dynamics CRM accepts any org URL under its identifier
 * URIs, so any single path segment is accepted, as the real service does for `*.crm.dynamics.com`).
 */
function isKnownResource(base: string, resource: string): boolean {
  const r = resource.toLowerCase();
  if (Object.values(RESOURCES).some((k) => k.toLowerCase() === r)) return true;
  const prefix = `${base}/dataverse/`.toLowerCase();
  return r.startsWith(prefix) && /^[^/?#]+$/.test(r.slice(prefix.length));
}

function parseBasic(header: string | undefined): { id: string; secret: string } | null {
  if (!header) return null;
  const m = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (!m) return null;
  const text = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  const dec = (s: string): string => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { id: dec(text.slice(0, colon)), secret: dec(text.slice(colon + 1)) };
}

/**
 * Registers the identity routes on the root instance:
 * - `GET /{tenant}/v2.0/.well-known/openid-configuration` (unknown tenant → 400 `invalid_tenant` AADSTS90002);
 * - `GET /{tenant}/discovery/v2.0/keys` and `/{tenant}/discovery/keys` (JWKS);
 * - `GET /common/discovery/instance?api-version=1.1&authorization_endpoint=…` (instance discovery);
 * - `POST /{tenant}/oauth2/v2.0/token`: client credentials with `client_secret` in the form or HTTP Basic (a
 *   multi-tenant app without a service principal in the tenant → 401 `invalid_client` AADSTS7000229; a consented
 *   service principal authenticates with the home application's secrets); the password, device-code and
 *   refresh-token grants (see `handleUserGrant`);
 * - `POST /{tenant}/oauth2/v2.0/devicecode` and `GET /devicelogin` (see `registerDeviceCode`);
 * - `GET /{tenant}/adminconsent`, `GET /{tenant}/v2.0/adminconsent` (see `registerAdminConsent`);
 * - `GET /{tenant}/oauth2/v2.0/authorize` (see `registerAuthorize`) and the `authorization_code` grant.
 */
export function registerIdentity(app: FastifyInstance, ctx: EmulatorContext): void {
  const hostPort = (): string => new URL(ctx.baseUrl()).host;
  registerDeviceCode(app, ctx);
  registerAdminConsent(app, ctx);
  registerAuthorize(app, ctx);

  app.get<{ Params: { tenant: string } }>('/:tenant/v2.0/.well-known/openid-configuration', async (req, reply) => {
    const name = req.params.tenant;
    const tenant = ctx.store.resolve(name);
    if (!tenant && !ALIASES.has(name.toLowerCase())) return sendAad(ctx, req, reply, 400, 90002, 'invalid_tenant', tenantNotFound(name));
    return reply.type('application/json; charset=utf-8').send(openIdConfiguration(ctx.baseUrl(), name, tenant));
  });

  const keys = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const name = req.params.tenant;
    const tenant = ctx.store.resolve(name);
    if (!tenant && !ALIASES.has(name.toLowerCase())) return sendAad(ctx, req, reply, 400, 90002, 'invalid_tenant', tenantNotFound(name));
    return reply.type('application/json; charset=utf-8').send(ctx.tokens.jwks(`${ctx.baseUrl()}/${tenant ? tenant.id : '{tenantid}'}/v2.0`));
  };
  app.get('/:tenant/discovery/v2.0/keys', keys);
  app.get('/:tenant/discovery/keys', keys);

  app.get('/common/discovery/instance', async (req, reply) => {
    const base = ctx.baseUrl();
    const authz = queryParam(req, 'authorization_endpoint');
    let tenantSeg = 'common';
    if (authz) {
      let url: URL;
      try {
        url = new URL(authz);
      } catch {
        return sendAad(ctx, req, reply, 400, 50049, 'invalid_instance', 'Unknown or invalid instance.');
      }
      const known = new Set([hostPort(), `localhost:${new URL(base).port}`]);
      if (!known.has(url.host)) return sendAad(ctx, req, reply, 400, 50049, 'invalid_instance', 'Unknown or invalid instance.');
      tenantSeg = url.pathname.split('/').filter(Boolean)[0] ?? 'common';
    }
    const port = new URL(base).port;
    return reply.type('application/json; charset=utf-8').send({
      tenant_discovery_endpoint: `${base}/${tenantSeg}/v2.0/.well-known/openid-configuration`,
      'api-version': '1.1',
      metadata: [{ preferred_network: hostPort(), preferred_cache: hostPort(), aliases: [hostPort(), `localhost:${port}`] }],
    });
  });

  app.post<{ Params: { tenant: string } }>('/:tenant/oauth2/v2.0/token', async (req, reply) => {
    const name = req.params.tenant;
    const form = (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;
    const field = (k: string): string | undefined => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
    const basic = parseBasic(req.headers.authorization);
    const grant = field('grant_type');
    if (grant !== undefined && USER_GRANT_TYPES.has(grant)) return handleUserGrant(ctx, req, reply, name, grant, field, basic);

    if (ALIASES.has(name.toLowerCase())) {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        9001023,
        'invalid_request',
        'The grant type is not supported over the /common or /consumers endpoints. Please use the /organizations or tenant-specific endpoint.',
      );
    }
    const tenant = ctx.store.resolve(name);
    if (!tenant) return sendAad(ctx, req, reply, 400, 90002, 'invalid_tenant', tenantNotFound(name));

    const missing = (param: string): FastifyReply =>
      sendAad(ctx, req, reply, 400, 900144, 'invalid_request', `The request body must contain the following parameter: '${param}'.`);

    if (!grant) return missing('grant_type');
    if (grant !== 'client_credentials') {
      return sendAad(ctx, req, reply, 400, 70003, 'unsupported_grant_type', `The app requested an unsupported grant type '${grant}'.`);
    }
    const clientId = field('client_id') ?? basic?.id;
    if (!clientId) return missing('client_id');
    const scope = field('scope');
    if (scope === undefined || scope.trim() === '') return missing('scope');
    const resource = resourceFromScope(scope);
    if (!resource) {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        70011,
        'invalid_scope',
        `The provided value for the input parameter 'scope' is not valid. The scope ${scope} is not valid. Client credential flows must have a single scope value with /.default suffixed to the resource identifier (application ID URI).`,
      );
    }

    const app = findApp(tenant, clientId);
    if (!app) {
      const home = ctx.store.findHomeApp(clientId);
      if (home && home.app.signInAudience === 'AzureADMultipleOrgs') {
        // Wording: Entra bodies quoted in learn.microsoft.com (Teams SDK troubleshooting) and public issues.
        return sendAad(
          ctx,
          req,
          reply,
          401,
          7000229,
          'invalid_client',
          `The client application ${clientId} is missing service principal in the tenant ${tenant.id}. See instructions here: https://go.microsoft.com/fwlink/?linkid=2225119`,
        );
      }
      return sendAad(
        ctx,
        req,
        reply,
        400,
        700016,
        'unauthorized_client',
        `Application with identifier '${clientId}' was not found in the directory '${name}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      );
    }
    if (field('client_assertion') !== undefined && field('client_secret') === undefined && !basic) {
      return sendAad(
        ctx,
        req,
        reply,
        401,
        700027,
        'invalid_client',
        `Client assertion failed signature validation. The emulator registers no certificate credentials for app '${app.appId}'.`,
      );
    }
    const secret = field('client_secret') ?? basic?.secret;
    if (secret === undefined || secret === '') {
      return sendAad(
        ctx,
        req,
        reply,
        401,
        7000218,
        'invalid_client',
        "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      );
    }
    const matched = secretsOf(ctx.store, tenant, app).find((s) => s.value === secret);
    if (!matched) {
      return sendAad(
        ctx,
        req,
        reply,
        401,
        7000215,
        'invalid_client',
        `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${app.appId}'.`,
      );
    }
    if (Date.parse(matched.endDateTime) <= Date.now()) {
      return sendAad(
        ctx,
        req,
        reply,
        401,
        7000222,
        'invalid_client',
        `The provided client secret keys for app '${app.appId}' are expired. Visit the Azure portal to create new keys for your app: https://aka.ms/NewClientSecret, or consider using certificate credentials for added security: https://aka.ms/certCreds.`,
      );
    }
    if (!isKnownResource(ctx.baseUrl(), resource)) {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        500011,
        'invalid_resource',
        `The resource principal named ${resource} was not found in the tenant named ${tenant.displayName}. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`,
      );
    }
    const { token, expiresIn } = await ctx.tokens.issueAppToken(tenant, app, { resource });
    return reply
      .header('cache-control', 'no-store, no-cache')
      .header('pragma', 'no-cache')
      .header('x-ms-request-id', newId())
      .type('application/json; charset=utf-8')
      .send({ token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: token });
  });
}
