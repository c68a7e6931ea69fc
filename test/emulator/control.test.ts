import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { ControlError, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let graph: string;
let dir: string;

beforeAll(async () => {
  tenant = generateTenant({ seed: 31, sizes: { users: 20, groups: 4, environments: 3, agents: 6 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  const app = tenant.apps[0]!;
  graph = (await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value })).json.access_token;
  dir = mkdtempSync(join(tmpdir(), 'vigil-emulator-'));
});

afterAll(async () => {
  await http.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('endpoints', () => {
  it('exposes the custom cloud profile and writes endpoints.json with ca.pem', () => {
    const u = emu.url;
    expect(u).toBe(`https://127.0.0.1:${emu.port}`);
    expect(emu.endpoints).toEqual({
      name: 'custom',
      authorityHost: u,
      graph: { baseUrl: `${u}/graph`, resource: 'https://graph.microsoft.com' },
      bap: { baseUrl: `${u}/bap`, resource: 'https://service.powerapps.com' },
      powerApps: { baseUrl: `${u}/powerapps`, resource: 'https://service.powerapps.com' },
      flow: { baseUrl: `${u}/flow`, resource: 'https://service.flow.microsoft.com' },
      powerPlatform: { baseUrl: `${u}/powerplatform`, resource: 'https://api.powerplatform.com' },
      managementActivity: { baseUrl: `${u}/manage`, resource: 'https://manage.office.com' },
      powerBi: { baseUrl: `${u}/powerbi`, resource: 'https://analysis.windows.net/powerbi/api' },
      arm: { baseUrl: `${u}/arm`, resource: 'https://management.azure.com' },
      dataverseUrlPrefixes: [`${u}/dataverse/`],
      caFile: null,
    });
    const file = emu.writeEndpointsFile(join(dir, 'out'));
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(isAbsolute(written.caFile)).toBe(true);
    expect(readFileSync(written.caFile, 'utf8')).toBe(emu.caPem);
    expect({ ...written, caFile: null }).toEqual(emu.endpoints);
    expect(emu.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });
});

describe('in-process control', () => {
  it('adds, updates and removes users and memberships while serving', async () => {
    const user = emu.control.add(tenant.id, 'users', { userPrincipalName: `new.hire@${tenant.domains[0]}`, displayName: 'New Hire' }) as { id: string };
    const group = tenant.groups[1]!;
    emu.control.add(tenant.id, 'memberships', { groupId: group.id, memberId: user.id });
    const members = await http.get(`/graph/v1.0/groups/${group.id}/members?$top=999`, { token: graph });
    expect(members.json.value.map((m: { id: string }) => m.id)).toContain(user.id);

    emu.control.update(tenant.id, 'users', user.id, { accountEnabled: false, jobTitle: 'Intern' });
    const one = await http.get(`/graph/v1.0/users/${user.id}?$select=id,accountEnabled,jobTitle`, { token: graph });
    expect(one.json).toMatchObject({ id: user.id, accountEnabled: false, jobTitle: 'Intern' });

    emu.control.remove(tenant.id, 'users', user.id);
    expect((await http.get(`/graph/v1.0/users/${user.id}`, { token: graph })).status).toBe(404);
    expect(tenant.memberships[group.id]).not.toContain(user.id);
    expect(() => emu.control.remove(tenant.id, 'users', user.id)).toThrow(ControlError);
    expect(() => emu.control.add('nope', 'users', {})).toThrow(ControlError);
  });

  it('adds bots and environments, reflected by BAP, Dataverse and ground truth', async () => {
    const before = emu.control.groundTruth(tenant.id);
    const env = tenant.environments.find((e) => e.dataverse?.appUsers.length)!;
    const bot = emu.control.add(tenant.id, 'bots', { environment: env.displayName, name: 'Late Agent', authenticationmode: 1, accesscontrolpolicy: 0 }) as {
      botid: string;
    };
    const after = emu.control.groundTruth(tenant.id);
    expect(after.agents).toBe(before.agents + 1);
    expect(after.risks.noAuthentication).toBe(before.risks.noAuthentication + 1);

    emu.control.add(tenant.id, 'environments', { displayName: 'Pop-up Sandbox', dataverse: { uniqueName: 'unqpopup' } });
    const bap = (
      await http.token({
        tenant: tenant.id,
        clientId: tenant.apps[0]!.appId,
        clientSecret: tenant.apps[0]!.secrets[0]!.value,
        scope: 'https://service.powerapps.com/.default',
      })
    ).json.access_token;
    const envs = await http.get('/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments?api-version=2020-10-01', { token: bap });
    const popup = envs.json.value.find((e: { properties: { displayName: string } }) => e.properties.displayName === 'Pop-up Sandbox');
    expect(popup.properties.linkedEnvironmentMetadata.instanceUrl).toBe(`${emu.url}/dataverse/unqpopup/`);

    emu.control.add(tenant.id, 'appUsers', { environment: 'unqpopup', appId: tenant.apps[0]!.appId });
    emu.control.add(tenant.id, 'bots', { environment: 'unqpopup', name: 'Popup Bot' });
    const dv = (
      await http.token({
        tenant: tenant.id,
        clientId: tenant.apps[0]!.appId,
        clientSecret: tenant.apps[0]!.secrets[0]!.value,
        scope: `${emu.url}/dataverse/unqpopup/.default`,
      })
    ).json.access_token;
    const bots = await http.get('/dataverse/unqpopup/api/data/v9.2/bots?$select=name', { token: dv });
    expect(bots.json.value.map((b: { name: string }) => b.name)).toEqual(['Popup Bot']);

    emu.control.remove(tenant.id, 'bots', bot.botid);
    expect(emu.control.groundTruth(tenant.id).agents).toBe(before.agents + 1); // the popup bot remains
  });
});

describe('HTTP control', () => {
  it('edits the model, mints tokens, reports requests and generates tenants', async () => {
    const created = await http.request('POST', `/_emulator/tenants/${tenant.id}/groups`, { body: { displayName: 'Created Over HTTP' } });
    expect(created.status).toBe(201);
    const gid = created.json.id as string;
    const patched = await http.request('PATCH', `/_emulator/tenants/${tenant.id}/groups/${gid}`, { body: { description: 'patched' } });
    expect(patched.json.description).toBe('patched');
    const member = tenant.users[0]!.id;
    expect((await http.request('POST', `/_emulator/tenants/${tenant.id}/memberships`, { body: { groupId: gid, memberId: member } })).status).toBe(201);
    expect((await http.request('DELETE', `/_emulator/tenants/${tenant.id}/memberships/${gid}/${member}`)).status).toBe(204);
    expect(tenant.memberships[gid]).toEqual([]);
    expect((await http.request('DELETE', `/_emulator/tenants/${tenant.id}/groups/${gid}`)).status).toBe(204);
    expect((await http.request('POST', `/_emulator/tenants/${tenant.id}/unicorns`, { body: {} })).status).toBe(400);

    const minted = await http.request('POST', '/_emulator/tokens', {
      body: { tenantId: tenant.id, resource: 'https://graph.microsoft.com', kind: 'app', roles: [] },
    });
    expect(minted.status).toBe(200);
    const denied = await http.get('/graph/v1.0/users', { token: minted.json.access_token });
    expect(denied.status).toBe(403);

    await http.request('DELETE', '/_emulator/requests');
    await http.get('/graph/v1.0/users?$top=1', { token: graph });
    const log = await http.get('/_emulator/requests?service=graph');
    expect(log.json).toHaveLength(1);
    expect(log.json[0]).toMatchObject({ method: 'GET', service: 'graph', path: '/graph/v1.0/users?$top=1', status: 200 });

    const lifetime = await http.request('PUT', '/_emulator/token-lifetime', { body: { seconds: 60 } });
    expect(lifetime.status).toBe(200);
    const tok = await http.token({ tenant: tenant.id, clientId: tenant.apps[0]!.appId, clientSecret: tenant.apps[0]!.secrets[0]!.value });
    expect(tok.json.expires_in).toBe(60);
    emu.control.setTokenLifetime(3599);

    const gen = await http.request('POST', '/_emulator/tenants', {
      body: { generate: { seed: 'http-tenant', sizes: { users: 5, environments: 1, agents: 1 } } },
    });
    expect(gen.status).toBe(201);
    const truth = await http.get(`/_emulator/tenants/${gen.json.id}/ground-truth`);
    expect(truth.json.users).toBe(10);
    const doc = await http.get(`/${gen.json.domains[0]}/v2.0/.well-known/openid-configuration`);
    expect(doc.json.issuer).toBe(`${emu.url}/${gen.json.id}/v2.0`);
    expect((await http.request('POST', '/_emulator/tenants', { body: { generate: { seed: 'http-tenant' } } })).status).toBe(409);
  });

  it('never logs client secrets', async () => {
    const app = tenant.apps[0]!;
    await http.request('POST', `/${tenant.id}/oauth2/v2.0/token?client_secret=${encodeURIComponent(app.secrets[0]!.value)}`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: app.appId,
        client_secret: app.secrets[0]!.value,
        scope: 'https://graph.microsoft.com/.default',
      }).toString(),
    });
    const text = JSON.stringify(emu.control.requests());
    expect(text).not.toContain(app.secrets[0]!.value);
    expect(text).toContain('client_secret=REDACTED');
  });
});

describe('sign-in control', () => {
  it('mints user tokens for an administrator by default, with wids', async () => {
    const minted = await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://service.powerapps.com' });
    const claims = JSON.parse(Buffer.from(minted.access_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(claims.wids).toEqual(['62e90394-69f5-4237-9190-012177145e10']);
    expect(claims.oid).toBe(tenant.users[0]!.id);
  });

  it('serves consent, device-code and sign-in settings over HTTP', async () => {
    expect((await http.get(`/_emulator/consent-behavior/${tenant.domains[0]}`)).json).toEqual({ behavior: 'approve' });
    expect((await http.request('PUT', '/_emulator/consent-behavior', { body: { tenant: tenant.id, behavior: 'deny' } })).json).toEqual({ behavior: 'deny' });
    expect(emu.control.consentBehavior(tenant.id)).toBe('deny');
    const settings = await http.request('PUT', '/_emulator/device-codes/settings', { body: { intervalSeconds: 1, expiresInSeconds: 60 } });
    expect(settings.json).toEqual({ intervalSeconds: 1, expiresInSeconds: 60 });
    expect((await http.request('PUT', '/_emulator/device-codes/settings', { body: { intervalSeconds: 0 } })).status).toBe(400);
    const start = await http.request('POST', `/${tenant.id}/oauth2/v2.0/devicecode`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: '04b07795-8ddb-461a-bbee-02f9e1bf7b46', scope: 'https://graph.microsoft.com/.default' }).toString(),
    });
    expect(start.json).toMatchObject({ interval: 1, expires_in: 60 });
    const codes = await http.get('/_emulator/device-codes');
    expect(codes.json.map((c: { userCode: string }) => c.userCode)).toContain(start.json.user_code);
    expect((await http.request('POST', `/_emulator/device-codes/${start.json.user_code}/decline`)).json.status).toBe('declined');
    expect((await http.request('POST', `/_emulator/device-codes/${start.json.user_code}/decline`)).status).toBe(409);
    expect((await http.request('POST', `/_emulator/device-codes/${start.json.user_code}/expire`)).status).toBe(200);
    expect((await http.request('PUT', '/_emulator/device-codes/auto-approve', { body: { tenant: tenant.id, upn: 'ghost@nowhere' } })).status).toBe(404);
    expect((await http.request('PUT', '/_emulator/signed-in-admin', { body: { tenant: null } })).json).toEqual({ tenant: null });
    expect((await http.request('DELETE', '/_emulator/sign-in-state')).status).toBe(204);
    expect(emu.control.consentBehavior(tenant.id)).toBe('approve');
    expect(emu.control.deviceCodes()).toEqual([]);
    expect(
      (await http.request('PUT', '/_emulator/environment-flags', { body: { tenant: tenant.id, environment: 'no-such-env', refuseAddAppUser: true } })).status,
    ).toBe(404);
  });
});
