import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant, tenantAccounts } from '../../emulator/generate.ts';
import { ControlError, DIRECTORY_ROLES, generateManagedApp, startEmulator, type ManagedApp, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

const REDIRECT = 'https://vigil.example.com/consent/callback';
const QUICK_GRAPH = [
  'GroupMember.Read.All',
  'User.Read.All',
  'ExternalConnection.Read.All',
  'TeamsAppInstallation.ReadForUser.All',
  'AiEnterpriseInteraction.Read.All',
];

let emu: RunningEmulator;
let http: EmulatorClient;
let managed: ManagedApp;
let alpha: Tenant;
let beta: Tenant;
let gamma: Tenant;

beforeAll(async () => {
  managed = generateManagedApp({ seed: 5, redirectUris: [REDIRECT, 'http://localhost:8080/consent'] });
  alpha = generateTenant({ seed: 501, sizes: { users: 8, environments: 1, agents: 2 } });
  beta = generateTenant({ seed: 502, sizes: { users: 8, environments: 1, agents: 2 } });
  gamma = generateTenant({ seed: 503, sizes: { users: 8, environments: 1, agents: 2 } });
  emu = await startEmulator({ tenants: [alpha, beta, gamma], managedApps: [managed] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

function ccToken(tenant: string, scope = 'https://graph.microsoft.com/.default'): ReturnType<EmulatorClient['token']> {
  return http.token({ tenant, clientId: managed.appId, clientSecret: managed.clientSecret, scope });
}

function consentUrl(tenant: string, params: Record<string, string>, v2 = false): string {
  return `/${tenant}${v2 ? '/v2.0' : ''}/adminconsent?${new URLSearchParams(params)}`;
}

describe('generateManagedApp', () => {
  it('creates a multi-tenant app with its own secret, requested permissions and redirect URIs in an operator tenant', () => {
    const { tenant, app } = managed;
    expect(tenant.apps).toEqual([app]);
    expect(tenant.connectorAppId).toBeUndefined();
    expect(tenant.environments).toHaveLength(0);
    expect(app).toMatchObject({
      appId: managed.appId,
      homeTenantId: tenant.id,
      signInAudience: 'AzureADMultipleOrgs',
      redirectUris: [REDIRECT, 'http://localhost:8080/consent'],
      grantedRoles: {},
    });
    expect(app.secrets[0]!.value).toBe(managed.clientSecret);
    expect(app.servicePrincipalObjectId).not.toBe(app.appId);
    expect(app.requiredResourceAccess).toEqual({
      'https://graph.microsoft.com': QUICK_GRAPH,
      'https://manage.office.com': ['ActivityFeed.Read'],
      'https://analysis.windows.net/powerbi/api': ['Tenant.Read.All'],
    });
    const again = generateManagedApp({ seed: 5, redirectUris: [REDIRECT], now: '2025-01-01T00:00:00Z' });
    const again2 = generateManagedApp({ seed: 5, redirectUris: [REDIRECT], now: '2025-01-01T00:00:00Z' });
    expect(again2).toEqual(again);
    expect(again.appId).toBe(managed.appId);
  });

  it('can home the app in an existing tenant', () => {
    const host = generateTenant({ seed: 9, sizes: { users: 4, environments: 0, agents: 0 } });
    const m = generateManagedApp({ seed: 6, redirectUris: [REDIRECT], operatorTenant: host, permissions: ['User.Read.All'] });
    expect(m.tenant).toBe(host);
    expect(host.apps).toHaveLength(2);
    expect(m.app.requiredResourceAccess).toEqual({ 'https://graph.microsoft.com': ['User.Read.All'] });
  });
});

describe('admin consent (v1) and the service principal it creates', () => {
  it('refuses client credentials before consent with AADSTS7000229', async () => {
    const res = await ccToken(alpha.id);
    expect(res.status).toBe(401);
    expect(res.json.error).toBe('invalid_client');
    expect(res.json.error_codes).toEqual([7000229]);
    expect(res.json.error_description).toContain(
      `AADSTS7000229: The client application ${managed.appId} is missing service principal in the tenant ${alpha.id}.`,
    );
  });

  it('approves: 302 with admin_consent=True, a service principal with its own id, and roles in the token', async () => {
    const res = await http.get(consentUrl(alpha.domains[0]!, { client_id: managed.appId, redirect_uri: REDIRECT, state: 'abc.123_-~' }));
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${REDIRECT}?admin_consent=True&tenant=${alpha.id}&state=abc.123_-~`);
    const sp = emu.control.servicePrincipal(alpha.id, managed.appId);
    expect(sp.servicePrincipalObjectId).not.toBe(managed.appId);
    expect(sp.servicePrincipalObjectId).not.toBe(managed.app.servicePrincipalObjectId);
    expect(sp.secrets).toEqual([]);
    expect(sp.homeTenantId).toBe(managed.tenant.id);

    const graph = await ccToken(alpha.id);
    expect(graph.status).toBe(200);
    const claims = decodeJwt(graph.json.access_token);
    expect(claims).toMatchObject({
      tid: alpha.id,
      oid: sp.servicePrincipalObjectId,
      sub: sp.servicePrincipalObjectId,
      appid: managed.appId,
      idtyp: 'app',
      roles: QUICK_GRAPH,
    });
    const manage = decodeJwt((await ccToken(alpha.id, 'https://manage.office.com/.default')).json.access_token);
    expect(manage.roles).toEqual(['ActivityFeed.Read']);
    const pbi = decodeJwt((await ccToken(alpha.id, 'https://analysis.windows.net/powerbi/api/.default')).json.access_token);
    expect(pbi.roles).toEqual(['Tenant.Read.All']);

    // The home tenant has no grant; a wrong secret is refused as for any app.
    const wrong = await http.token({ tenant: alpha.id, clientId: managed.appId, clientSecret: 'xyz8Q~wrong' });
    expect(wrong.json.error_codes).toEqual([7000215]);

    // Consent again: idempotent (same service principal).
    const again = await http.get(consentUrl(alpha.id, { client_id: managed.appId, redirect_uri: REDIRECT, state: 's2' }));
    expect(again.status).toBe(302);
    expect(emu.control.servicePrincipal(alpha.id, managed.appId).servicePrincipalObjectId).toBe(sp.servicePrincipalObjectId);
    expect(alpha.apps.filter((a) => a.appId === managed.appId)).toHaveLength(1);
  });

  it('consents into several tenants, each with a distinct service principal', async () => {
    const res = await http.get(consentUrl(beta.id, { client_id: managed.appId, redirect_uri: 'http://localhost:8080/consent', state: 'b' }));
    expect(res.headers.location).toBe(`http://localhost:8080/consent?admin_consent=True&tenant=${beta.id}&state=b`);
    const a = emu.control.servicePrincipal(alpha.id, managed.appId);
    const b = emu.control.servicePrincipal(beta.id, managed.appId);
    expect(b.servicePrincipalObjectId).not.toBe(a.servicePrincipalObjectId);
    const ta = decodeJwt((await ccToken(alpha.id)).json.access_token);
    const tb = decodeJwt((await ccToken(beta.id)).json.access_token);
    expect([ta.tid, tb.tid]).toEqual([alpha.id, beta.id]);
    expect(ta.oid).toBe(a.servicePrincipalObjectId);
    expect(tb.oid).toBe(b.servicePrincipalObjectId);
  });

  it('revokes granted roles in one tenant only', async () => {
    emu.control.revokeServicePrincipalRoles(beta.id, managed.appId, {
      resource: 'https://graph.microsoft.com',
      roles: ['User.Read.All', 'AiEnterpriseInteraction.Read.All'],
    });
    const b = decodeJwt((await ccToken(beta.id)).json.access_token);
    expect(b.roles).toEqual(['GroupMember.Read.All', 'ExternalConnection.Read.All', 'TeamsAppInstallation.ReadForUser.All']);
    const a = decodeJwt((await ccToken(alpha.id)).json.access_token);
    expect(a.roles).toEqual(QUICK_GRAPH);

    // Over HTTP: every role of a resource; the claim disappears.
    const res = await http.request('POST', '/_emulator/revoke-roles', {
      body: { tenant: beta.domains[0], appId: managed.appId, resource: 'https://manage.office.com' },
    });
    expect(res.status).toBe(200);
    expect(res.json.grantedRoles['https://manage.office.com']).toBeUndefined();
    expect(decodeJwt((await ccToken(beta.id, 'https://manage.office.com/.default')).json.access_token).roles).toBeUndefined();

    // Re-consent restores what the app requests.
    await http.get(consentUrl(beta.id, { client_id: managed.appId, redirect_uri: REDIRECT }));
    expect(decodeJwt((await ccToken(beta.id, 'https://manage.office.com/.default')).json.access_token).roles).toEqual(['ActivityFeed.Read']);
  });

  it('rejects a redirect_uri that is not registered (AADSTS50011), unknown apps and tenants', async () => {
    const bad = await http.get(consentUrl(gamma.id, { client_id: managed.appId, redirect_uri: `${REDIRECT}/other`, state: 'x' }), {
      headers: { accept: 'text/html' },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toContain('text/html');
    expect(bad.text).toContain('AADSTS50011: The redirect URI');
    const json = await http.get(consentUrl(gamma.id, { client_id: managed.appId, redirect_uri: 'https://evil.example.com/' }), {
      headers: { accept: 'application/json' },
    });
    expect(json.status).toBe(400);
    expect(json.json.error_codes).toEqual([50011]);
    const noApp = await http.get(consentUrl(gamma.id, { client_id: '00000000-1111-4222-8333-444444444444', redirect_uri: REDIRECT }));
    expect(noApp.status).toBe(400);
    expect(noApp.text).toContain('AADSTS700016');
    const noTenant = await http.get(consentUrl('nope.onmicrosoft.com', { client_id: managed.appId, redirect_uri: REDIRECT }));
    expect(noTenant.text).toContain('AADSTS90002');
    // A single-tenant app (the Mode A connector of alpha) cannot be consented elsewhere.
    const single = await http.get(consentUrl(gamma.id, { client_id: alpha.connectorAppId!, redirect_uri: REDIRECT }));
    expect(single.text).toContain('AADSTS700016');
    expect(() => emu.control.servicePrincipal(gamma.id, managed.appId)).toThrow(ControlError);
  });

  it('answers deny and consent_required with the documented redirects, creating nothing', async () => {
    emu.control.setConsentBehavior(gamma.id, 'deny');
    const deny = await http.get(consentUrl(gamma.id, { client_id: managed.appId, redirect_uri: REDIRECT, state: 'st' }));
    expect(deny.status).toBe(302);
    expect(deny.headers.location).toBe(`${REDIRECT}?error=permission_denied&error_description=The+admin+canceled+the+request&state=st`);

    const put = await http.request('PUT', '/_emulator/consent-behavior', { body: { tenant: gamma.domains[0], behavior: 'consent_required' } });
    expect(put.json).toEqual({ behavior: 'consent_required' });
    const refused = await http.get(consentUrl(gamma.id, { client_id: managed.appId, redirect_uri: REDIRECT, state: 'st' }));
    expect(refused.headers.location).toBe(
      `${REDIRECT}?admin_consent=True&error=consent_required&error_description=AADSTS65004%3a+The+resource+owner+or+authorization+server+denied+the+request.&state=st`,
    );
    expect(() => emu.control.servicePrincipal(gamma.id, managed.appId)).toThrow(ControlError);
    expect((await ccToken(gamma.id)).json.error_codes).toEqual([7000229]);
    expect((await http.request('PUT', '/_emulator/consent-behavior', { body: { tenant: gamma.id, behavior: 'maybe' } })).status).toBe(400);
    emu.control.setConsentBehavior(gamma.id, 'approve');
  });
});

describe('admin consent (v2) and common/organizations', () => {
  it('requires scope on v2 and echoes it in the redirect', async () => {
    const missing = await http.get(consentUrl(gamma.id, { client_id: managed.appId, redirect_uri: REDIRECT, state: 'v2' }, true));
    expect(missing.status).toBe(400);
    expect(missing.text).toContain("AADSTS900144: The request body must contain the following parameter: 'scope'.");
    const res = await http.get(
      consentUrl(gamma.id, { client_id: managed.appId, scope: 'https://graph.microsoft.com/.default', redirect_uri: REDIRECT, state: 'v2' }, true),
    );
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${REDIRECT}?admin_consent=True&tenant=${gamma.id}&state=v2&scope=https%3a%2f%2fgraph.microsoft.com%2f.default`);
    expect(decodeJwt((await ccToken(gamma.id)).json.access_token).roles).toEqual(QUICK_GRAPH);
  });

  it('uses the signed-in admin tenant for common and organizations', async () => {
    const t = generateTenant({ seed: 504, sizes: { users: 4, environments: 0, agents: 0 } });
    emu.control.addTenant(t);
    const none = await http.get(consentUrl('common', { client_id: managed.appId, redirect_uri: REDIRECT }));
    expect(none.status).toBe(400);
    expect(none.text).toContain('AADSTS50058');
    const put = await http.request('PUT', '/_emulator/signed-in-admin', { body: { tenant: t.domains[0] } });
    expect(put.json).toEqual({ tenant: t.id });
    const res = await http.get(consentUrl('organizations', { client_id: managed.appId, redirect_uri: REDIRECT, state: 'o' }));
    expect(res.headers.location).toBe(`${REDIRECT}?admin_consent=True&tenant=${t.id}&state=o`);
    expect(emu.control.servicePrincipal(t.id, managed.appId).homeTenantId).toBe(managed.tenant.id);
    emu.control.setSignedInAdminTenant(null);
  });

  it('consents through control, and serves an operator tenant added later', async () => {
    const later = generateManagedApp({ seed: 77, redirectUris: [REDIRECT], permissions: 'step-by-step', operatorDomain: 'lateop.onmicrosoft.com' });
    emu.control.addTenant(later.tenant);
    expect((await http.token({ tenant: alpha.id, clientId: later.appId, clientSecret: later.clientSecret })).json.error_codes).toEqual([7000229]);
    const sp = (await http.request('POST', '/_emulator/consent', { body: { tenant: alpha.id, appId: later.appId } })).json;
    expect(sp.grantedRoles['https://graph.microsoft.com']).toEqual(['User.Read.All', 'Group.Read.All']);
    const claims = decodeJwt((await http.token({ tenant: alpha.id, clientId: later.appId, clientSecret: later.clientSecret })).json.access_token);
    expect(claims.oid).toBe(sp.servicePrincipalObjectId);
    expect(() => emu.control.grantAdminConsent(alpha.id, '00000000-1111-4222-8333-444444444444')).toThrow(ControlError);
  });
});

describe('OpenID Connect sign-in: /authorize and the authorization_code grant', () => {
  const authorize = (tenant: string, params: Record<string, string>) => http.get(`/${tenant}/oauth2/v2.0/authorize?${new URLSearchParams(params)}`);
  const pkce = { verifier: 'v'.repeat(43), challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url') };
  const signIn = (tenant: Tenant, extra: Record<string, string> = {}) =>
    authorize(tenant.id, {
      client_id: managed.appId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid profile',
      state: 's.1',
      nonce: 'n-1',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
  const redeem = (tenant: string, code: string, extra: Record<string, string> = {}) =>
    http.request('POST', `/${tenant}/oauth2/v2.0/token`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: managed.appId,
        client_secret: managed.clientSecret,
        code,
        redirect_uri: REDIRECT,
        code_verifier: pkce.verifier,
        scope: 'openid profile',
        ...extra,
      }).toString(),
    });

  it("signs the tenant's Global Administrator in by default and issues an ID token with tid, oid, nonce and wids, once", async () => {
    const res = await signIn(beta); // beta consented above
    expect(res.status).toBe(302);
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('s.1');
    const code = location.searchParams.get('code')!;
    const tokens = await redeem(beta.id, code);
    expect(tokens.status).toBe(200);
    const id = decodeJwt(tokens.json.id_token as string);
    const admin = tenantAccounts(beta).globalAdmin!;
    expect(id).toMatchObject({
      aud: managed.appId,
      iss: `${emu.url}/${beta.id}/v2.0`,
      tid: beta.id,
      oid: admin.id,
      preferred_username: admin.userPrincipalName,
      nonce: 'n-1',
      wids: [DIRECTORY_ROLES.globalAdministrator],
      ver: '2.0',
    });
    expect((await redeem(beta.id, code)).json.error_codes).toEqual([54005]);
  });

  it("refuses a wrong PKCE verifier, another redirect URI, another tenant's path, and a code of an app without consent", async () => {
    const code = () => signIn(beta).then((r) => new URL(String(r.headers.location)).searchParams.get('code')!);
    expect((await redeem(beta.id, await code(), { code_verifier: 'w'.repeat(43) })).json.error_codes).toEqual([50148]);
    expect((await redeem(beta.id, await code(), { redirect_uri: 'http://localhost:8080/consent' })).json.error_codes).toEqual([500112]);
    expect((await redeem(alpha.id, await code())).json.error_codes).toEqual([9002313]);
    const delta = emu.control.addTenant(generateTenant({ seed: 'authorize-unconsented', sizes: { users: 6, environments: 0, agents: 0 } }));
    const unconsented = await signIn(delta);
    expect(new URL(String(unconsented.headers.location)).searchParams.get('error')).toBe('consent_required');
  });

  it("signs in the account the test chooses: a user without roles gets no wids; another tenant's account is refused (AADSTS50020)", async () => {
    const ordinary = tenantAccounts(beta).ordinaryUser!;
    emu.control.setBrowserUser(beta.id, ordinary.userPrincipalName);
    const res = await signIn(beta);
    const id = decodeJwt((await redeem(beta.id, new URL(String(res.headers.location)).searchParams.get('code')!)).json.id_token as string);
    expect(id.oid).toBe(ordinary.id);
    expect(id.wids).toBeUndefined();
    emu.control.setBrowserUser(beta.id, tenantAccounts(alpha).globalAdmin!.userPrincipalName);
    const foreign = await signIn(beta);
    expect(foreign.status).toBe(400);
    expect(foreign.text).toMatch(/AADSTS50020/);
    emu.control.setBrowserUser(beta.id, null);
    expect(() => emu.control.setBrowserUser(beta.id, 'nobody@nowhere.example')).toThrow(ControlError);
  });
});
