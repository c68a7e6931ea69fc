/**
 * Delegated (user) sign-in at the identity endpoints: the resource-owner password grant (reference §1.4), the device
 * authorization grant (§1.5: `/devicecode`, polling with `urn:ietf:params:oauth:grant-type:device_code`) and the
 * refresh-token grant, with Entra's error bodies (§1.6–1.7).
 *
 * Clients: the first-party public clients of `PUBLIC_CLIENT_IDS` (no secret; sending one → AADSTS700025), apps of the
 * tenant with "Allow public client flows" (`isFallbackPublicClient`), or a confidential app with its client secret.
 * Tokens: v1 access tokens with `idtyp: "user"`, `scp`, `wids`, `appid` = the client; plus `id_token` when `openid` is
 * requested, `refresh_token` with `offline_access`, `client_info` when `client_info=1` (MSAL sends it).
 *
 * Error texts: AADSTS50126, 50076 (+ `suberror: basic_action`), 50079, 53003, 70016, 700025, 7000218, 9001023 from Entra
 * bodies seen in public issues; 50034, 50057, 65004 (declined device code), 70018, 70019, 70000 (code reused),
 * 9002313 (bad refresh token) follow the error-code reference wording from memory (UNCONFIRMED as exact texts).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendAad, tenantNotFound, TENANT_ALIASES } from './aad.ts';
import { newId, type EmulatorContext } from './common.ts';
import { PUBLIC_CLIENT_IDS, RESOURCE_APP_IDS, RESOURCES } from './constants.ts';
import { allowsPublicClient, secretsOf } from './managed.ts';
import { approveDeviceCode, type DeviceCodeEntry } from './signin.ts';
import { findApp, findUserByUpn, indexes, type DirectoryUser, type Tenant } from './tenant.ts';

/** OIDC scopes that do not name a resource. */
const OIDC_SCOPES = new Set(['openid', 'profile', 'offline_access', 'email']);

/**
 * Grant types handled here. The device-code grant is accepted as the RFC 8628 URN and as the short `device_code`
 * MSAL sends (`GrantType.DEVICE_CODE_GRANT` in msal-common), which Entra accepts too.
 */
export const USER_GRANT_TYPES: ReadonlySet<string> = new Set([
  'password',
  'urn:ietf:params:oauth:grant-type:device_code',
  'device_code',
  'refresh_token',
  'authorization_code',
]);

const FIRST_PARTY = new Set<string>(Object.values(PUBLIC_CLIENT_IDS));

/** A delegated scope request resolved to one resource. */
interface UserScope {
  /** Resource identifier, no trailing slash (the token's `aud`). */
  resource: string;
  /** The `scp` claim. */
  scp: string;
  /** The `scope` answered in the token response. */
  responseScope: string;
  /** OIDC scopes requested (`openid`, `offline_access`, …), lower case. */
  oidc: Set<string>;
}

/**
 * Parses a delegated `scope`: OIDC scopes apart, every other item is `{resource}/{permission}` (a trailing slash of the
 * resource is dropped, so `https://service.powerapps.com//.default` names https://service.powerapps.com) or a bare
 * Graph permission (`User.Read`). All items must name one resource; none at all means Graph `User.Read`.
 * `.default` gives `scp` `User.Read` for Graph and `user_impersonation` elsewhere. Returns null when resources differ.
 */
function parseUserScope(scope: string): UserScope | null {
  const items = scope.split(/\s+/).filter((s) => s.length > 0);
  const oidc = new Set(items.filter((s) => OIDC_SCOPES.has(s.toLowerCase())).map((s) => s.toLowerCase()));
  const rest = items.filter((s) => !OIDC_SCOPES.has(s.toLowerCase()));
  let resource: string | null = null;
  const perms: string[] = [];
  for (const item of rest) {
    let r: string;
    let p: string;
    const scheme = item.indexOf('://');
    const slash = item.lastIndexOf('/');
    if (scheme >= 0 && slash > scheme + 2) {
      r = item.slice(0, slash).replace(/\/+$/, '');
      p = item.slice(slash + 1);
    } else {
      r = RESOURCES.graph;
      p = item;
    }
    if (r.length === 0 || p.length === 0) return null;
    if (resource !== null && resource.toLowerCase() !== r.toLowerCase()) return null;
    resource ??= r;
    if (!perms.includes(p)) perms.push(p);
  }
  const res = resource ?? RESOURCES.graph;
  const isGraph = res.toLowerCase() === RESOURCES.graph;
  const wantsDefault = perms.length === 0 || perms.some((p) => p.toLowerCase() === '.default');
  const granted = wantsDefault ? [isGraph ? 'User.Read' : 'user_impersonation', ...perms.filter((p) => p.toLowerCase() !== '.default')] : perms;
  const unique = [...new Set(granted)];
  const qualify = (p: string): string => (isGraph ? p : `${res}/${p}`);
  const responseScope = [...unique.map(qualify), ...(wantsDefault && perms.length > 0 ? [`${res}/.default`] : []), ...oidc];
  return { resource: res, scp: unique.join(' '), responseScope: responseScope.join(' '), oidc };
}

/** Name of a resource in AADSTS50076/50079 texts: its application id when known, else the URI. */
function resourceName(resource: string): string {
  return RESOURCE_APP_IDS[resource.toLowerCase()] ?? RESOURCE_APP_IDS[resource] ?? resource;
}

type Field = (k: string) => string | undefined;

interface GrantContext {
  ctx: EmulatorContext;
  req: FastifyRequest;
  reply: FastifyReply;
  field: Field;
  basic: { id: string; secret: string } | null;
}

function missing(g: GrantContext, param: string): FastifyReply {
  return sendAad(g.ctx, g.req, g.reply, 400, 900144, 'invalid_request', `The request body must contain the following parameter: '${param}'.`);
}

/**
 * Checks the client of a user grant in `tenant`. Returns null when admitted, else the error reply already sent.
 */
function checkClient(g: GrantContext, tenant: Tenant, clientId: string): FastifyReply | null {
  const { ctx, req, reply } = g;
  const secret = g.field('client_secret') ?? g.basic?.secret;
  const assertion = g.field('client_assertion');
  if (FIRST_PARTY.has(clientId.toLowerCase())) {
    if ((secret !== undefined && secret !== '') || assertion !== undefined) {
      return sendAad(ctx, req, reply, 401, 700025, 'invalid_client', "Client is public so neither 'client_assertion' nor 'client_secret' should be presented.");
    }
    return null;
  }
  const app = findApp(tenant, clientId);
  if (!app) {
    const home = ctx.store.findHomeApp(clientId);
    if (home && home.app.signInAudience === 'AzureADMultipleOrgs') {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        65001,
        'invalid_grant',
        `The user or administrator has not consented to use the application with ID '${clientId}' named '${home.app.displayName}'. Send an interactive authorization request for this user and resource.`,
        { suberror: 'consent_required' },
      );
    }
    return sendAad(
      ctx,
      req,
      reply,
      400,
      700016,
      'unauthorized_client',
      `Application with identifier '${clientId}' was not found in the directory '${tenant.displayName}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
    );
  }
  if (secret === undefined || secret === '') {
    if (allowsPublicClient(ctx.store, tenant, app)) return null;
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
  return null;
}

/** Account-state checks after the credentials are accepted. Returns null when a token may be issued. */
function checkUser(g: GrantContext, user: DirectoryUser, resource: string, password: boolean): FastifyReply | null {
  const { ctx, req, reply } = g;
  if (!user.accountEnabled) return sendAad(ctx, req, reply, 400, 50057, 'invalid_grant', 'The user account is disabled.');
  if (user.conditionalAccessBlocked) {
    return sendAad(
      ctx,
      req,
      reply,
      400,
      53003,
      'invalid_grant',
      'Access has been blocked by Conditional Access policies. The access policy does not allow token issuance.',
    );
  }
  if (!password) return null; // the device-login page handles MFA interactively
  if (user.mfaRegistrationRequired) {
    return sendAad(
      ctx,
      req,
      reply,
      400,
      50079,
      'interaction_required',
      `Due to a configuration change made by your administrator, or because you moved to a new location, you must enroll in multi-factor authentication to access '${resourceName(resource)}'.`,
    );
  }
  if (user.mfaRequired) {
    return sendAad(
      ctx,
      req,
      reply,
      400,
      50076,
      'invalid_grant',
      `Due to a configuration change made by your administrator, or because you moved to a new location, you must use multi-factor authentication to access '${resourceName(resource)}'.`,
      { suberror: 'basic_action' },
    );
  }
  return null;
}

function resolveScope(g: GrantContext, raw: string): UserScope | FastifyReply {
  const parsed = parseUserScope(raw);
  if (!parsed) {
    return sendAad(
      g.ctx,
      g.req,
      g.reply,
      400,
      28000,
      'invalid_scope',
      `Provided value for the input parameter scope '${raw}' is not valid because it contains more than one resource. Scope ${raw} is not valid.`,
    );
  }
  if (!isKnown(g.ctx, parsed.resource)) {
    return sendAad(
      g.ctx,
      g.req,
      g.reply,
      400,
      500011,
      'invalid_resource',
      `The resource principal named ${parsed.resource} was not found in the tenant. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`,
    );
  }
  return parsed;
}

function isKnown(ctx: EmulatorContext, resource: string): boolean {
  const r = resource.toLowerCase();
  if (Object.values(RESOURCES).some((k) => k.toLowerCase() === r)) return true;
  const prefix = `${ctx.baseUrl()}/dataverse/`.toLowerCase();
  return r.startsWith(prefix) && /^[^/?#]+$/.test(r.slice(prefix.length));
}

async function issue(
  g: GrantContext,
  tenant: Tenant,
  user: DirectoryUser,
  clientId: string,
  scope: UserScope,
  amr: string[],
  nonce?: string,
): Promise<FastifyReply> {
  const { ctx, reply } = g;
  const { token, expiresIn } = await ctx.tokens.issueUserToken(tenant, user, { resource: scope.resource, clientId, scp: scope.scp, amr });
  const body: Record<string, unknown> = {
    token_type: 'Bearer',
    scope: scope.responseScope,
    expires_in: expiresIn,
    ext_expires_in: expiresIn,
    access_token: token,
  };
  if (scope.oidc.has('offline_access')) body.refresh_token = ctx.signIn.issueRefreshToken({ tenantId: tenant.id, userId: user.id, clientId });
  if (scope.oidc.has('openid')) {
    const claims = ctx.store.findHomeApp(clientId)?.app.groupMembershipClaims;
    body.id_token = await ctx.tokens.issueIdToken(`${ctx.baseUrl()}/${tenant.id}/v2.0`, tenant, user, clientId, {
      nonce,
      wids: claims === 'DirectoryRole' || claims === 'All',
    });
  }
  if (g.field('client_info') === '1') body.client_info = Buffer.from(JSON.stringify({ uid: user.id, utid: tenant.id })).toString('base64url');
  return reply
    .header('cache-control', 'no-store, no-cache')
    .header('pragma', 'no-cache')
    .header('x-ms-request-id', newId())
    .type('application/json; charset=utf-8')
    .send(body);
}

/**
 * Handles a token request whose `grant_type` is in `USER_GRANT_TYPES`, for the `{tenant}` path segment `pathTenant`.
 * - `password`: `common`/`consumers` → 400 `invalid_request` AADSTS9001023; `organizations` resolves the tenant from the
 *   username's domain. Unknown user → 400 `invalid_grant` 50034; wrong or no password → 50126; disabled → 50057;
 *   `conditionalAccessBlocked` → 53003; `mfaRegistrationRequired` → 400 `interaction_required` 50079; `mfaRequired` →
 *   50076 with `suberror: basic_action`.
 * - device code: unknown code (or another client's) → 400 `bad_verification_code` 70018; pending → 400
 *   `authorization_pending` 70016; declined → 400 `authorization_declined` 65004; past `expires_in` → 400
 *   `expired_token` 70019; already redeemed → 400 `invalid_grant` 70000; approved → tokens (user checks: disabled,
 *   Conditional Access).
 * - `refresh_token`: unknown/expired → 400 `invalid_grant` 9002313; another client → 400 `invalid_grant` 70000.
 * - `authorization_code` (issued by `/authorize`): unknown, another client's or another tenant's code → 400
 *   `invalid_grant` 9002313; already redeemed → 54005; expired → 70008; another `redirect_uri` → 500112; a
 *   `code_verifier` that does not match the PKCE challenge → 50148 (texts from the AADSTS error reference, from memory:
 *   UNCONFIRMED as exact texts); then tokens with an ID token carrying the authorize request's `nonce`.
 */
export async function handleUserGrant(
  ctx: EmulatorContext,
  req: FastifyRequest,
  reply: FastifyReply,
  pathTenant: string,
  grant: string,
  field: Field,
  basic: { id: string; secret: string } | null,
): Promise<FastifyReply> {
  const g: GrantContext = { ctx, req, reply, field, basic };
  const alias = pathTenant.toLowerCase();
  const isAlias = TENANT_ALIASES.has(alias);
  const pathResolved = isAlias ? undefined : ctx.store.resolve(pathTenant);
  if (!isAlias && !pathResolved) return sendAad(ctx, req, reply, 400, 90002, 'invalid_tenant', tenantNotFound(pathTenant));
  const clientId = field('client_id') ?? basic?.id;

  if (grant === 'password') {
    if (alias === 'common' || alias === 'consumers') {
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
    if (!clientId) return missing(g, 'client_id');
    const username = field('username');
    if (username === undefined || username === '') return missing(g, 'username');
    const password = field('password');
    if (password === undefined) return missing(g, 'password');
    const rawScope = field('scope');
    if (rawScope === undefined || rawScope.trim() === '') return missing(g, 'scope');
    const tenant = pathResolved ?? ctx.store.resolve(username.slice(username.lastIndexOf('@') + 1));
    const user = tenant ? findUserByUpn(tenant, username) : undefined;
    if (!tenant || !user) {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        50034,
        'invalid_grant',
        `The user account {EUII Hidden} does not exist in the ${tenant ? tenant.id : '{tenant}'} directory. To sign into this application, the account must be added to the directory.`,
      );
    }
    const client = checkClient(g, tenant, clientId);
    if (client) return client;
    const scope = resolveScope(g, rawScope);
    if (!('resource' in scope)) return scope;
    if (user.password === undefined || user.password !== password) {
      return sendAad(ctx, req, reply, 400, 50126, 'invalid_grant', 'Error validating credentials due to invalid username or password.');
    }
    const blocked = checkUser(g, user, scope.resource, true);
    if (blocked) return blocked;
    return issue(g, tenant, user, clientId, scope, ['pwd']);
  }

  if (grant === 'authorization_code') {
    // https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow#redeem-a-code-for-an-access-token
    if (!clientId) return missing(g, 'client_id');
    const code = field('code');
    if (!code) return missing(g, 'code');
    const redirectUri = field('redirect_uri');
    if (!redirectUri) return missing(g, 'redirect_uri');
    const entry = ctx.signIn.authorizationCode(code);
    const invalid = (): FastifyReply => sendAad(ctx, req, reply, 400, 9002313, 'invalid_grant', 'Invalid request. Request is malformed or invalid.');
    if (!entry || entry.clientId.toLowerCase() !== clientId.toLowerCase() || (pathResolved && pathResolved.id !== entry.tenantId)) return invalid();
    if (entry.redeemed)
      return sendAad(
        ctx,
        req,
        reply,
        400,
        54005,
        'invalid_grant',
        'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.',
      );
    if (Date.now() >= entry.expiresAt)
      return sendAad(
        ctx,
        req,
        reply,
        400,
        70008,
        'invalid_grant',
        'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
      );
    if (entry.redirectUri !== redirectUri)
      return sendAad(
        ctx,
        req,
        reply,
        400,
        500112,
        'invalid_grant',
        'The reply address does not match the reply address provided when requesting the authorization code.',
      );
    if (entry.codeChallenge !== undefined) {
      const verifier = field('code_verifier');
      if (!verifier) return missing(g, 'code_verifier');
      const computed = entry.codeChallengeMethod === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
      if (computed !== entry.codeChallenge)
        return sendAad(
          ctx,
          req,
          reply,
          400,
          50148,
          'invalid_grant',
          'The code_verifier does not match the code_challenge supplied in the authorization request for PKCE.',
        );
    }
    const tenant = ctx.store.get(entry.tenantId);
    const user = tenant ? indexes.users.get(tenant.users, entry.userId) : undefined;
    if (!tenant || !user) return invalid();
    const client = checkClient(g, tenant, clientId);
    if (client) return client;
    const scope = resolveScope(g, entry.scope);
    if (!('resource' in scope)) return scope;
    entry.redeemed = true;
    const blocked = checkUser(g, user, scope.resource, false);
    if (blocked) return blocked;
    return issue(g, tenant, user, clientId, scope, ['pwd', 'mfa'], entry.nonce);
  }

  if (grant === 'refresh_token') {
    if (!clientId) return missing(g, 'client_id');
    const token = field('refresh_token');
    if (!token) return missing(g, 'refresh_token');
    const subject = ctx.signIn.refreshGrant(token);
    if (!subject) return sendAad(ctx, req, reply, 400, 9002313, 'invalid_grant', 'Invalid request. Request is malformed or invalid.');
    if (subject.clientId.toLowerCase() !== clientId.toLowerCase()) {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        70000,
        'invalid_grant',
        'Provided grant is invalid or malformed. The refresh token was issued to a different client.',
      );
    }
    const tenant = ctx.store.get(subject.tenantId);
    const user = tenant ? indexes.users.get(tenant.users, subject.userId) : undefined;
    if (!tenant || !user || (pathResolved && pathResolved.id !== tenant.id)) {
      return sendAad(ctx, req, reply, 400, 9002313, 'invalid_grant', 'Invalid request. Request is malformed or invalid.');
    }
    const client = checkClient(g, tenant, clientId);
    if (client) return client;
    const scope = resolveScope(g, field('scope') ?? 'openid profile offline_access');
    if (!('resource' in scope)) return scope;
    const blocked = checkUser(g, user, scope.resource, false);
    if (blocked) return blocked;
    scope.oidc.add('offline_access');
    return issue(g, tenant, user, clientId, scope, ['pwd']);
  }

  // device code
  if (!clientId) return missing(g, 'client_id');
  const code = field('device_code');
  if (!code) return missing(g, 'device_code');
  const entry = ctx.signIn.byDeviceCode(code);
  const badCode = (): FastifyReply =>
    sendAad(
      ctx,
      req,
      reply,
      400,
      70018,
      'bad_verification_code',
      'Invalid verification code due to User typing in wrong user code for device code flow. Authorization is not approved.',
    );
  if (!entry || entry.clientId.toLowerCase() !== clientId.toLowerCase()) return badCode();
  if (pathResolved && entry.tenantId && pathResolved.id !== entry.tenantId) return badCode();
  if (entry.status === 'redeemed') {
    return sendAad(
      ctx,
      req,
      reply,
      400,
      70000,
      'invalid_grant',
      "The provided value for the input parameter 'device_code' is not valid. The device code has already been redeemed.",
    );
  }
  if (Date.now() >= entry.expiresAt)
    return sendAad(ctx, req, reply, 400, 70019, 'expired_token', 'Verification code expired. Have the user retry the sign-in.');
  if (entry.status === 'pending')
    return sendAad(ctx, req, reply, 400, 70016, 'authorization_pending', 'OAuth 2.0 device flow error. Authorization is pending. Continue polling.');
  if (entry.status === 'declined') return sendAad(ctx, req, reply, 400, 65004, 'authorization_declined', 'User declined to consent to access the app.');
  const tenant = entry.approvedTenantId ? ctx.store.get(entry.approvedTenantId) : undefined;
  const user = tenant && entry.approvedUserId ? indexes.users.get(tenant.users, entry.approvedUserId) : undefined;
  if (!tenant || !user) return badCode();
  const client = checkClient(g, tenant, clientId);
  if (client) return client;
  const scope = resolveScope(g, entry.scope);
  if (!('resource' in scope)) return scope;
  entry.status = 'redeemed';
  const blocked = checkUser(g, user, scope.resource, false);
  if (blocked) return blocked;
  return issue(g, tenant, user, clientId, scope, ['pwd', 'mfa']);
}

function deviceLoginUrl(ctx: EmulatorContext): string {
  return `${ctx.baseUrl()}/devicelogin`;
}

/** Applies the tenant's device-code auto-approval (see `SignInState.setAutoApprove`) to a new entry. */
function autoApprove(ctx: EmulatorContext, entry: DeviceCodeEntry): void {
  const candidates = entry.tenantId
    ? [entry.tenantId]
    : [ctx.signIn.signedInAdminTenant, ...ctx.signIn.autoApproveTenants()].filter((t): t is string => t !== null);
  for (const tid of candidates) {
    const upn = ctx.signIn.autoApproveUpn(tid);
    if (upn === undefined) continue;
    const tenant = ctx.store.get(tid);
    if (!tenant || !findUserByUpn(tenant, upn)) continue;
    if (approveDeviceCode(ctx.store, entry, upn).ok) return;
  }
}

/**
 * Registers the device-authorization endpoint and the device-login page on the root instance:
 * - `POST /{tenant}/oauth2/v2.0/devicecode` (form `client_id`, `scope`) → `{user_code, device_code, verification_uri,
 *   expires_in, interval, message}`; `verification_uri` = `https://127.0.0.1:PORT/devicelogin` (the real one is
 *   https://microsoft.com/devicelogin). `{tenant}` may be a GUID, a domain, `organizations` or `common`
 *   (`consumers` → AADSTS9001023). Unknown client → 400 `unauthorized_client` AADSTS700016; a scope naming two
 *   resources → 400 `invalid_scope` AADSTS28000.
 * - `GET /devicelogin`: a static page (codes are approved through the control API).
 */
export function registerDeviceCode(app: FastifyInstance, ctx: EmulatorContext): void {
  app.post<{ Params: { tenant: string } }>('/:tenant/oauth2/v2.0/devicecode', async (req, reply) => {
    const name = req.params.tenant;
    const alias = name.toLowerCase();
    if (alias === 'consumers') {
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
    const tenant = TENANT_ALIASES.has(alias) ? undefined : ctx.store.resolve(name);
    if (!TENANT_ALIASES.has(alias) && !tenant) return sendAad(ctx, req, reply, 400, 90002, 'invalid_tenant', tenantNotFound(name));
    const form = (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;
    const field = (k: string): string | undefined => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
    const g: GrantContext = { ctx, req, reply, field, basic: null };
    const clientId = field('client_id');
    if (!clientId) return missing(g, 'client_id');
    const scope = field('scope');
    if (scope === undefined || scope.trim() === '') return missing(g, 'scope');
    const known =
      FIRST_PARTY.has(clientId.toLowerCase()) ||
      (tenant
        ? findApp(tenant, clientId) !== undefined || ctx.store.findHomeApp(clientId)?.app.signInAudience === 'AzureADMultipleOrgs'
        : ctx.store.findHomeApp(clientId) !== undefined);
    if (!known) {
      return sendAad(
        ctx,
        req,
        reply,
        400,
        700016,
        'unauthorized_client',
        `Application with identifier '${clientId}' was not found in the directory '${tenant ? tenant.displayName : name}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      );
    }
    const parsed = resolveScope(g, scope);
    if (!('resource' in parsed)) return parsed;
    const entry = ctx.signIn.createDeviceCode(tenant ? tenant.id : null, clientId, scope);
    autoApprove(ctx, entry);
    const settings = ctx.signIn.deviceCodeSettings;
    const url = deviceLoginUrl(ctx);
    return reply
      .header('cache-control', 'no-store, no-cache')
      .header('pragma', 'no-cache')
      .header('x-ms-request-id', newId())
      .type('application/json; charset=utf-8')
      .send({
        user_code: entry.userCode,
        device_code: entry.deviceCode,
        verification_uri: url,
        expires_in: settings.expiresInSeconds,
        interval: settings.intervalSeconds,
        message: `To sign in, use a web browser to open the page ${url} and enter the code ${entry.userCode} to authenticate.`,
      });
  });

  app.get('/devicelogin', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><html><head><title>Enter code</title></head><body><h1>Enter code</h1><p>Vigil emulator: approve or decline device codes through the control API (<code>POST /_emulator/device-codes/{userCode}/approve</code>).</p></body></html>',
      ),
  );
}
