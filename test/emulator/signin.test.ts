import { PublicClientApplication, type DeviceCodeRequest, type INetworkModule, type NetworkRequestOptions, type NetworkResponse } from '@azure/msal-node';
import { decodeJwt } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant, tenantAccounts } from '../../emulator/generate.ts';
import {
  ControlError,
  DIRECTORY_ROLES,
  PUBLIC_CLIENT_IDS,
  startEmulator,
  type RunningEmulator,
  type TenantAccounts,
  type Tenant,
} from '../../emulator/index.ts';

const GA = DIRECTORY_ROLES.globalAdministrator;
const PPA = DIRECTORY_ROLES.powerPlatformAdministrator;
const CLI = PUBLIC_CLIENT_IDS.azureCli;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let other: Tenant;
let accounts: TenantAccounts;

beforeAll(async () => {
  tenant = generateTenant({ seed: 808, sizes: { users: 12, environments: 2, agents: 2 } });
  other = generateTenant({ seed: 809, sizes: { users: 6, environments: 1, agents: 1 } });
  accounts = tenantAccounts(tenant);
  emu = await startEmulator({ tenants: [tenant, other] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

function form(tenantSeg: string, fields: Record<string, string>, path = 'token'): Promise<Awaited<ReturnType<EmulatorClient['request']>>> {
  return http.request('POST', `/${tenantSeg}/oauth2/v2.0/${path}`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

function ropc(
  fields: Partial<Record<'username' | 'password' | 'scope' | 'client_id' | 'client_secret', string>>,
  tenantSeg = tenant.id,
): ReturnType<typeof form> {
  const a = accounts.globalAdmin!;
  return form(tenantSeg, {
    grant_type: 'password',
    client_id: CLI,
    scope: 'https://service.powerapps.com//.default',
    username: a.userPrincipalName,
    password: a.password,
    ...fields,
  });
}

function expectAad(res: { status: number; json: Record<string, unknown> }, status: number, error: string, code: number): string {
  expect(res.status).toBe(status);
  expect(res.json.error).toBe(error);
  expect(res.json.error_codes).toEqual([code]);
  const d = res.json.error_description as string;
  expect(d.startsWith(`AADSTS${code}: `)).toBe(true);
  return d;
}

function networkClient(): INetworkModule {
  const send = async <T>(method: 'GET' | 'POST', url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> => {
    const res = await request(url, { method, dispatcher: http.dispatcher, headers: options?.headers, body: options?.body });
    return { status: res.statusCode, headers: res.headers as Record<string, string>, body: (await res.body.json()) as T };
  };
  return { sendGetRequestAsync: (url, options) => send('GET', url, options), sendPostRequestAsync: (url, options) => send('POST', url, options) };
}

function pca(authorityTenant: string, clientId: string = CLI): PublicClientApplication {
  return new PublicClientApplication({
    auth: { clientId, authority: `${emu.url}/${authorityTenant}`, knownAuthorities: [`127.0.0.1:${emu.port}`] },
    system: { networkClient: networkClient() },
  });
}

describe('generated sign-in accounts', () => {
  it('gives every generated tenant a Global Administrator, a Power Platform Administrator, an MFA user and an ordinary user', () => {
    const a = accounts;
    for (const acc of [a.globalAdmin, a.powerPlatformAdmin, a.mfaUser, a.ordinaryUser]) {
      expect(acc).toBeDefined();
      expect(acc!.password.length).toBeGreaterThanOrEqual(12);
    }
    const user = (id: string) => tenant.users.find((u) => u.id === id)!;
    expect(user(a.globalAdmin!.id).directoryRoles).toEqual([GA]);
    expect(user(a.globalAdmin!.id)).toBe(tenant.users[0]);
    expect(user(a.powerPlatformAdmin!.id).directoryRoles).toEqual([PPA]);
    expect(user(a.mfaUser!.id).mfaRequired).toBe(true);
    expect(user(a.ordinaryUser!.id).directoryRoles).toBeUndefined();
    expect(new Set([a.globalAdmin!.id, a.powerPlatformAdmin!.id, a.mfaUser!.id, a.ordinaryUser!.id]).size).toBe(4);
    // Deterministic; small tenants get what their members allow.
    expect(tenantAccounts(generateTenant({ seed: 808, sizes: { users: 12, environments: 2, agents: 2 } }))).toEqual(a);
    const tiny = tenantAccounts(generateTenant({ seed: 1, sizes: { users: 1, guests: 0, environments: 0, agents: 0 } }));
    expect(tiny.globalAdmin).toBeDefined();
    expect([tiny.powerPlatformAdmin, tiny.mfaUser, tiny.ordinaryUser]).toEqual([undefined, undefined, undefined]);
  });

  it('does not serve passwords or sign-in flags through Graph', async () => {
    const app = tenant.apps[0]!;
    const token = (await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value })).json.access_token;
    const res = await http.get(`/graph/v1.0/users/${accounts.globalAdmin!.id}?$select=id,userPrincipalName,accountEnabled`, { token });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(accounts.globalAdmin!.password);
    const full = await http.get(`/graph/v1.0/users/${accounts.mfaUser!.id}`, { token });
    expect(Object.keys(full.json)).not.toContain('password');
    expect(Object.keys(full.json)).not.toContain('mfaRequired');
  });
});

describe('resource-owner password grant', () => {
  it('issues a user token for the public first-party clients (double-slash scope)', async () => {
    for (const clientId of Object.values(PUBLIC_CLIENT_IDS)) {
      const res = await ropc({ client_id: clientId });
      expect(res.status).toBe(200);
      expect(res.json.token_type).toBe('Bearer');
      expect(res.json.expires_in).toBe(3599);
      const c = decodeJwt(res.json.access_token);
      expect(c).toMatchObject({
        aud: 'https://service.powerapps.com',
        idtyp: 'user',
        oid: accounts.globalAdmin!.id,
        upn: accounts.globalAdmin!.userPrincipalName,
        tid: tenant.id,
        appid: clientId,
        scp: 'user_impersonation',
        wids: [GA],
        ver: '1.0',
      });
      expect(typeof c.name).toBe('string');
    }
    const ppa = decodeJwt(
      (await ropc({ username: accounts.powerPlatformAdmin!.userPrincipalName, password: accounts.powerPlatformAdmin!.password })).json.access_token,
    );
    expect(ppa.wids).toEqual([PPA]);
    const plain = decodeJwt(
      (await ropc({ username: accounts.ordinaryUser!.userPrincipalName, password: accounts.ordinaryUser!.password, scope: 'User.Read openid profile' })).json
        .access_token,
    );
    expect(plain.wids).toBeUndefined();
    expect(plain.aud).toBe('https://graph.microsoft.com');
    expect(plain.scp).toBe('User.Read');
  });

  it('resolves /organizations from the username and answers OIDC extras', async () => {
    const res = await ropc({ scope: 'https://service.powerapps.com/.default openid profile offline_access' }, 'organizations');
    expect(res.status).toBe(200);
    expect(decodeJwt(res.json.access_token).tid).toBe(tenant.id);
    expect(typeof res.json.refresh_token).toBe('string');
    expect(decodeJwt(res.json.id_token)).toMatchObject({
      aud: CLI,
      tid: tenant.id,
      oid: accounts.globalAdmin!.id,
      preferred_username: accounts.globalAdmin!.userPrincipalName,
      ver: '2.0',
    });
    expect(res.json.scope).toContain('https://service.powerapps.com/user_impersonation');

    // The refresh token gets another resource's token.
    const refreshed = await form(tenant.id, {
      grant_type: 'refresh_token',
      client_id: CLI,
      refresh_token: res.json.refresh_token,
      scope: 'https://api.bap.microsoft.com/.default offline_access',
    });
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.json.access_token)).toMatchObject({ aud: 'https://api.bap.microsoft.com', oid: accounts.globalAdmin!.id });
    expectAad(await form(tenant.id, { grant_type: 'refresh_token', client_id: CLI, refresh_token: 'nope' }), 400, 'invalid_grant', 9002313);
  });

  it('answers each sign-in failure as Entra does', async () => {
    let d = expectAad(await ropc({ password: 'Wrong-password-1' }), 400, 'invalid_grant', 50126);
    expect(d).toContain('Error validating credentials due to invalid username or password.');

    const mfa = await ropc({ username: accounts.mfaUser!.userPrincipalName, password: accounts.mfaUser!.password });
    d = expectAad(mfa, 400, 'invalid_grant', 50076);
    expect(mfa.json.suberror).toBe('basic_action');
    expect(d).toContain("you must use multi-factor authentication to access '475226c6-020e-4fb2-8a90-7a972cbfc1d4'");

    const ordinary = tenant.users.find((u) => u.id === accounts.ordinaryUser!.id)!;
    ordinary.mfaRegistrationRequired = true;
    d = expectAad(await ropc({ username: ordinary.userPrincipalName, password: ordinary.password! }), 400, 'interaction_required', 50079);
    expect(d).toContain('you must enroll in multi-factor authentication');
    delete ordinary.mfaRegistrationRequired;
    ordinary.conditionalAccessBlocked = true;
    d = expectAad(await ropc({ username: ordinary.userPrincipalName, password: ordinary.password! }), 400, 'invalid_grant', 53003);
    expect(d).toContain('Access has been blocked by Conditional Access policies.');
    // The password is checked first.
    expectAad(await ropc({ username: ordinary.userPrincipalName, password: 'nope' }), 400, 'invalid_grant', 50126);
    delete ordinary.conditionalAccessBlocked;

    for (const seg of ['common', 'consumers']) expectAad(await ropc({}, seg), 400, 'invalid_request', 9001023);
    expectAad(await ropc({ username: `nobody@${tenant.domains[0]}` }), 400, 'invalid_grant', 50034);
    const noPassword = tenant.users.find((u) => u.userType === 'Member' && u.password === undefined && u.accountEnabled)!;
    expectAad(await ropc({ username: noPassword.userPrincipalName, password: 'anything' }), 400, 'invalid_grant', 50126);
    expectAad(await ropc({ client_secret: 'abc' }), 401, 'invalid_client', 700025);
    expectAad(await ropc({ client_id: '00000000-0000-4000-8000-000000000001' }), 400, 'unauthorized_client', 700016);
    expectAad(await ropc({ scope: 'https://graph.microsoft.com/User.Read https://manage.office.com/ActivityFeed.Read' }), 400, 'invalid_scope', 28000);
    expectAad(await ropc({ scope: 'https://unknown.example.com/.default' }), 400, 'invalid_resource', 500011);
  });

  it('accepts apps of the tenant that allow public client flows, and confidential ones with their secret', async () => {
    const connector = tenant.apps[0]!;
    expectAad(await ropc({ client_id: connector.appId }), 401, 'invalid_client', 7000218);
    const ok = await ropc({ client_id: connector.appId, client_secret: connector.secrets[0]!.value });
    expect(decodeJwt(ok.json.access_token).appid).toBe(connector.appId);
    emu.control.add(tenant.id, 'apps', { appId: '0a0a0a0a-1111-4222-8333-444444444444', displayName: 'Admin tool', isFallbackPublicClient: true });
    const pub = await ropc({ client_id: '0a0a0a0a-1111-4222-8333-444444444444' });
    expect(pub.status).toBe(200);
  });

  it('works with MSAL acquireTokenByUsernamePassword', async () => {
    const a = accounts.powerPlatformAdmin!;
    const result = await pca(tenant.domains[0]!, PUBLIC_CLIENT_IDS.powerAppsModule).acquireTokenByUsernamePassword({
      scopes: ['https://service.powerapps.com//.default'],
      username: a.userPrincipalName,
      password: a.password,
    });
    expect(result?.accessToken).toBeTruthy();
    expect(decodeJwt(result!.accessToken)).toMatchObject({ tid: tenant.id, oid: a.id, wids: [PPA], appid: PUBLIC_CLIENT_IDS.powerAppsModule });
    expect(result!.account?.username).toBe(a.userPrincipalName);

    const mfa = accounts.mfaUser!;
    await expect(
      pca(tenant.id).acquireTokenByUsernamePassword({
        scopes: ['https://service.powerapps.com//.default'],
        username: mfa.userPrincipalName,
        password: mfa.password,
      }),
    ).rejects.toMatchObject({
      errorCode: 'invalid_grant',
      subError: 'basic_action',
    });
    await expect(
      pca(tenant.id).acquireTokenByUsernamePassword({ scopes: ['https://service.powerapps.com//.default'], username: a.userPrincipalName, password: 'bad' }),
    ).rejects.toMatchObject({ errorCode: 'invalid_grant' });
  });
});

describe('device-code flow', () => {
  it('answers /devicecode, pends until approved through control, then issues a user token', async () => {
    const start = await form(tenant.id, { client_id: CLI, scope: 'https://service.powerapps.com//.default offline_access openid profile' }, 'devicecode');
    expect(start.status).toBe(200);
    expect(Object.keys(start.json)).toEqual(['user_code', 'device_code', 'verification_uri', 'expires_in', 'interval', 'message']);
    expect(start.json).toMatchObject({ verification_uri: `${emu.url}/devicelogin`, expires_in: 900, interval: 5 });
    expect(start.json.user_code).toMatch(/^[A-Z0-9]{9}$/);
    expect(start.json.message).toContain(start.json.user_code);
    expect((await http.get('/devicelogin', { headers: { accept: 'text/html' } })).status).toBe(200);

    const poll = () => form(tenant.id, { grant_type: DEVICE_GRANT, client_id: CLI, device_code: start.json.device_code });
    expectAad(await poll(), 400, 'authorization_pending', 70016);
    const approved = await http.request('POST', `/_emulator/device-codes/${start.json.user_code}/approve`, {
      body: { upn: accounts.globalAdmin!.userPrincipalName },
    });
    expect(approved.status).toBe(200);
    const res = await poll();
    expect(res.status).toBe(200);
    expect(decodeJwt(res.json.access_token)).toMatchObject({
      aud: 'https://service.powerapps.com',
      idtyp: 'user',
      oid: accounts.globalAdmin!.id,
      appid: CLI,
      wids: [GA],
      tid: tenant.id,
    });
    expect(res.json.refresh_token).toBeDefined();
    expectAad(await poll(), 400, 'invalid_grant', 70000);
  });

  it('answers declined, expired and unknown codes', async () => {
    const start = async () => (await form(tenant.id, { client_id: CLI, scope: 'https://graph.microsoft.com/.default' }, 'devicecode')).json;
    const poll = (code: string) => form(tenant.id, { grant_type: DEVICE_GRANT, client_id: CLI, device_code: code });
    const a = await start();
    emu.control.declineDeviceCode(a.user_code);
    expectAad(await poll(a.device_code), 400, 'authorization_declined', 65004);
    const b = await start();
    emu.control.expireDeviceCode(b.user_code);
    expectAad(await poll(b.device_code), 400, 'expired_token', 70019);
    expect(() => emu.control.approveDeviceCode(b.user_code, accounts.globalAdmin!.userPrincipalName)).toThrow(ControlError);
    expectAad(await poll('not-a-code'), 400, 'bad_verification_code', 70018);
    const c = await start();
    expect(() => emu.control.approveDeviceCode(c.user_code, `nobody@${tenant.domains[0]}`)).toThrow(ControlError);
    expect(() => emu.control.approveDeviceCode(c.user_code, other.users[0]!.userPrincipalName)).toThrow(ControlError); // another tenant's user
    expect((await http.request('POST', '/_emulator/device-codes/ZZZZZZZZZ/approve', { body: { upn: 'x@y' } })).status).toBe(404);
    // A Conditional-Access-blocked user is refused at redemption.
    const ordinary = tenant.users.find((u) => u.id === accounts.ordinaryUser!.id)!;
    ordinary.conditionalAccessBlocked = true;
    emu.control.approveDeviceCode(c.user_code, ordinary.userPrincipalName);
    expectAad(await poll(c.device_code), 400, 'invalid_grant', 53003);
    delete ordinary.conditionalAccessBlocked;
    expectAad(
      await form(tenant.id, { client_id: '00000000-0000-4000-8000-000000000001', scope: 'User.Read' }, 'devicecode'),
      400,
      'unauthorized_client',
      700016,
    );
  });

  it('works with MSAL acquireTokenByDeviceCode (interval and auto-approval through control)', async () => {
    emu.control.setDeviceCodeSettings({ intervalSeconds: 1 });
    const a = accounts.globalAdmin!;
    let shown: Parameters<DeviceCodeRequest['deviceCodeCallback']>[0] | undefined;
    const pending = pca(tenant.id).acquireTokenByDeviceCode({
      scopes: ['https://service.powerapps.com//.default'],
      deviceCodeCallback: (r) => {
        shown = r;
        setTimeout(() => emu.control.approveDeviceCode(r.userCode, a.userPrincipalName), 300);
      },
    });
    const result = await pending;
    expect(shown?.interval).toBe(1);
    expect(shown?.verificationUri).toBe(`${emu.url}/devicelogin`);
    expect(decodeJwt(result!.accessToken)).toMatchObject({ oid: a.id, wids: [GA], tid: tenant.id });
    expect(result!.account?.username).toBe(a.userPrincipalName);

    // Auto-approve (over HTTP) on the organizations endpoint.
    const put = await http.request('PUT', '/_emulator/device-codes/auto-approve', {
      body: { tenant: other.domains[0], upn: tenantAccounts(other).powerPlatformAdmin!.userPrincipalName },
    });
    expect(put.status).toBe(200);
    const auto = await pca('organizations').acquireTokenByDeviceCode({
      scopes: ['https://api.bap.microsoft.com/.default'],
      deviceCodeCallback: () => undefined,
    });
    expect(decodeJwt(auto!.accessToken)).toMatchObject({ tid: other.id, wids: [PPA], aud: 'https://api.bap.microsoft.com' });
    emu.control.setDeviceCodeAutoApprove(other.id, null);

    // Declined: MSAL stops polling with the server's error.
    const declined = pca(tenant.id).acquireTokenByDeviceCode({
      scopes: ['https://graph.microsoft.com/.default'],
      deviceCodeCallback: (r) => void emu.control.declineDeviceCode(r.userCode),
    });
    await expect(declined).rejects.toThrow(/authorization_declined/);
    emu.control.setDeviceCodeSettings({ intervalSeconds: 5 });
  });
});

describe('request log hygiene', () => {
  it('never logs passwords, secrets or device codes', async () => {
    const leaks = emu.control.requestLogLeaks();
    expect(leaks).toEqual([]);
    expect(() => emu.control.assertNoSecretsInRequestLog()).not.toThrow();
    const viaHttp = await http.request('POST', '/_emulator/requests/leaks', { body: {} });
    expect(viaHttp.json).toEqual([]);
    expect(emu.control.requests({ service: 'identity' }).length).toBeGreaterThan(10);

    // The helper does find a credential that reached a logged path (query values other than known secrets stay).
    await http.get(`/${tenant.id}/v2.0/.well-known/openid-configuration?leak=${encodeURIComponent(accounts.ordinaryUser!.password)}`);
    const found = emu.control.requestLogLeaks();
    expect(found).toHaveLength(1);
    expect(found[0]!.what).toBe(`password of ${accounts.ordinaryUser!.userPrincipalName}`);
    expect(found[0]!.path).not.toContain(accounts.ordinaryUser!.password);
    expect(emu.control.requestLogLeaks(['well-known']).length).toBeGreaterThan(1);
    expect(() => emu.control.assertNoSecretsInRequestLog()).toThrow(ControlError);
    // A `password` query parameter is redacted at logging time.
    await http.get(`/${tenant.id}/v2.0/.well-known/openid-configuration?password=${encodeURIComponent(accounts.globalAdmin!.password)}`);
    expect(emu.control.requestLogLeaks()).toHaveLength(1);
    emu.control.resetLog();
  });
});
