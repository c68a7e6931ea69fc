import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

const ENVS = '/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments?api-version=2020-10-01';
const ADMIN_APPS = '/bap/providers/Microsoft.BusinessAppPlatform/adminApplications';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;

beforeAll(async () => {
  tenant = generateTenant({ seed: 77, managementApp: false, sizes: { environments: 4, agents: 8 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const appToken = (resource = 'https://service.powerapps.com') => http.appToken(tenant, resource);

describe('BAP management-app registration', () => {
  it('answers 403 "does not have permission to access the path" until a user registers the app, then 200', async () => {
    const app = tenant.apps[0]!;
    const token = await appToken();
    const before = await http.get(ENVS, { token });
    expect(before.status).toBe(403);
    expect(before.json).toEqual({
      error: {
        code: 'Forbidden',
        message: `The service principal with id '${app.servicePrincipalObjectId}' for application ${app.appId} does not have permission to access the path '/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments' in tenant ${tenant.id}.`,
      },
    });

    // An app token cannot register itself.
    const self = await http.request('PUT', `${ADMIN_APPS}/${app.appId}?api-version=2020-10-01`, { token });
    expect(self.status).toBe(403);
    expect((await http.get(`${ADMIN_APPS}/${app.appId}?api-version=2020-10-01`, { token })).status).toBe(403);

    const admin = await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://service.powerapps.com' });
    const put = await http.request('PUT', `${ADMIN_APPS}/${app.appId}?api-version=2020-10-01`, {
      token: admin.access_token,
      headers: { 'content-type': 'application/json' },
      body: '',
    });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ applicationId: app.appId });

    const get = await http.get(`${ADMIN_APPS}/${app.appId}?api-version=2020-10-01`, { token: admin.access_token });
    expect(get.json).toEqual({ applicationId: app.appId });
    const list = await http.get(`${ADMIN_APPS}?api-version=2020-10-01`, { token: admin.access_token });
    expect(list.json.value).toEqual([{ applicationId: app.appId }]);

    const after = await http.get(ENVS, { token }); // the same token works now: registration is checked live
    expect(after.status).toBe(200);
    expect(after.json.value).toHaveLength(4);

    const del = await http.request('DELETE', `${ADMIN_APPS}/${app.appId}?api-version=2020-10-01`, { token: admin.access_token });
    expect([200, 204]).toContain(del.status);
    expect((await http.get(ENVS, { token })).status).toBe(403);
    emu.control.update(tenant.id, 'apps', app.appId, { isManagementApp: true });
  });

  it('serves environments in the BAP admin shape', async () => {
    const token = await appToken('https://api.bap.microsoft.com');
    const res = await http.get(ENVS, { token });
    expect(res.status).toBe(200);
    type Env = { name: string; properties: { databaseType: string; linkedEnvironmentMetadata?: Record<string, string> } };
    const [def, ...rest] = res.json.value as Env[];
    expect(def).toMatchObject({
      id: `/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments/${def!.name}`,
      type: 'Microsoft.BusinessAppPlatform/scopes/environments',
      location: expect.any(String),
      name: `Default-${tenant.id}`,
      properties: {
        tenantId: tenant.id,
        azureRegion: expect.any(String),
        displayName: `${tenant.displayName} (default)`,
        createdTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        createdBy: { id: expect.any(String), displayName: expect.any(String), type: expect.any(String) },
        provisioningState: 'Succeeded',
        environmentSku: 'Default',
        isDefault: true,
        databaseType: 'CommonDataService',
        states: { management: { id: expect.any(String) }, runtime: { id: 'Enabled' } },
      },
    });
    const lem = def!.properties.linkedEnvironmentMetadata!;
    expect(lem.instanceUrl).toBe(`${emu.url}/dataverse/${lem.uniqueName}/`);
    expect(lem.instanceApiUrl).toBe(`${emu.url}/dataverse/${lem.uniqueName}`);
    expect(lem).toMatchObject({ domainName: expect.any(String), version: expect.stringMatching(/^9\.2\./), instanceState: 'Ready' });
    const none = rest.filter((e) => e.properties.databaseType === 'None');
    expect(none).toHaveLength(1);
    expect(none[0]!.properties.linkedEnvironmentMetadata).toBeUndefined();

    const one = await http.get(`/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments/${def!.name}?api-version=2020-10-01`, { token });
    expect(one.json.name).toBe(def!.name);
    const missing = await http.get(
      '/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments/00000000-0000-4000-8000-000000000000?api-version=2020-10-01',
      { token },
    );
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('EnvironmentNotFound');
  });

  it('requires api-version and the BAP audience', async () => {
    const token = await appToken();
    const noVersion = await http.get('/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments', { token });
    expect(noVersion.status).toBe(400);
    expect(noVersion.json.error.code).toBe('MissingApiVersionParameter');
    const graph = await appToken('https://graph.microsoft.com');
    expect((await http.get(ENVS, { token: graph })).status).toBe(401);
    expect((await http.get(ENVS)).status).toBe(401);
  });
});

describe('BAP addAppUser', () => {
  it('makes the app a System Administrator application user, opening Dataverse', async () => {
    const app = tenant.apps[0]!;
    const env = tenant.environments.find((e) => e.dataverse && !e.dataverse.appUsers.some((a) => a.appId === app.appId))!;
    const org = env.dataverse!;
    const dvToken = await appToken(`${emu.url}/dataverse/${org.uniqueName}`);
    const bots = `/dataverse/${org.uniqueName}/api/data/v9.2/bots`;
    const denied = await http.get(bots, { token: dvToken });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe('0x80072560');

    const token = await appToken();
    const add = await http.request(
      'POST',
      `/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments/${env.name}/addAppUser?api-version=2020-10-01`,
      {
        token,
        body: { servicePrincipalAppId: app.appId },
      },
    );
    expect(add.status).toBe(200);
    const ok = await http.get(bots, { token: dvToken });
    expect(ok.status).toBe(200);
    expect(ok.json.value).toHaveLength(org.bots.length);
    const su = org.systemusers.find((s) => s.applicationid === app.appId)!;
    expect(su.accessmode).toBe(4);
  });
});
