import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant, tenantAccounts } from '../../emulator/generate.ts';
import {
  generateManagedApp,
  PUBLIC_CLIENT_IDS,
  startEmulator,
  type DataverseOrg,
  type Environment,
  type ManagedApp,
  type RunningEmulator,
  type TenantAccounts,
  type Tenant,
} from '../../emulator/index.ts';

const BAP = '/bap/providers/Microsoft.BusinessAppPlatform';
const V = 'api-version=2020-10-01';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let accounts: TenantAccounts;
let managed: ManagedApp;
let dvEnv: Environment;
let org: DataverseOrg;
let noDv: Environment;

beforeAll(async () => {
  tenant = generateTenant({ seed: 4242, sizes: { users: 16, environments: 4, agents: 6 } });
  accounts = tenantAccounts(tenant);
  managed = generateManagedApp({ seed: 4243, redirectUris: ['https://vigil.example.com/cb'] });
  emu = await startEmulator({ tenants: [tenant], managedApps: [managed] });
  http = emulatorClient(emu);
  emu.control.grantAdminConsent(tenant.id, managed.appId);
  dvEnv = tenant.environments.find((e) => e.dataverse && !e.isDefault)!;
  org = dvEnv.dataverse!;
  noDv = tenant.environments.find((e) => !e.dataverse)!;
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

async function userToken(who: keyof TenantAccounts, resource = 'https://service.powerapps.com'): Promise<string> {
  const a = accounts[who]!;
  const res = await http.request('POST', `/${tenant.id}/oauth2/v2.0/token`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: PUBLIC_CLIENT_IDS.powerAppsModule,
      scope: `${resource}//.default`,
      username: a.userPrincipalName,
      password: a.password,
    }).toString(),
  });
  expect(res.status).toBe(200);
  return res.json.access_token as string;
}

async function managedToken(resource = 'https://service.powerapps.com'): Promise<string> {
  const res = await http.token({ tenant: tenant.id, clientId: managed.appId, clientSecret: managed.clientSecret, scope: `${resource}/.default` });
  expect(res.status).toBe(200);
  return res.json.access_token as string;
}

const dvBase = (): string => `/dataverse/${org.uniqueName}/api/data/v9.2`;
const dvResource = (): string => `${emu.url}/dataverse/${org.uniqueName}`;

describe('BAP adminApplications needs a Global or Power Platform Administrator', () => {
  it('registers the managed app (after consent) with an admin user token, and refuses others', async () => {
    const path = `${BAP}/adminApplications/${managed.appId}?${V}`;
    const app = await managedToken();
    const asApp = await http.request('PUT', path, { token: app });
    expect(asApp.status).toBe(403);
    expect(asApp.json.error.message).toContain('does not have permission to access the path');
    expect((await http.get(`${BAP}/adminApplications?${V}`, { token: app })).status).toBe(403);

    const ordinary = await userToken('ordinaryUser');
    for (const [method, p] of [
      ['PUT', path],
      ['GET', path],
      ['DELETE', path],
      ['GET', `${BAP}/adminApplications?${V}`],
    ] as const) {
      const res = await http.request(method, p, { token: ordinary });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe('Forbidden');
      expect(typeof res.json.error.message).toBe('string');
    }

    const ga = await userToken('globalAdmin');
    expect((await http.get(path, { token: ga })).status).toBe(404);
    const put = await http.request('PUT', path, { token: ga, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ applicationId: managed.appId });
    const ppa = await userToken('powerPlatformAdmin');
    expect((await http.get(path, { token: ppa })).json).toEqual({ applicationId: managed.appId });
    const list = await http.get(`${BAP}/adminApplications?${V}`, { token: ppa });
    expect(list.json.value).toContainEqual({ applicationId: managed.appId });
    // The managed app now reads environments with its own token.
    expect((await http.get(`${BAP}/scopes/admin/environments?${V}`, { token: app })).status).toBe(200);

    const missing = await http.request('PUT', `${BAP}/adminApplications/00000000-1111-4222-8333-444444444444?${V}`, { token: ga });
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe('ServicePrincipalNotFound');

    expect((await http.request('DELETE', path, { token: ppa })).status).toBe(204);
    expect((await http.get(path, { token: ga })).status).toBe(404);
    expect((await http.get(`${BAP}/scopes/admin/environments?${V}`, { token: app })).status).toBe(403);
    // Control can still set the registration directly.
    emu.control.update(tenant.id, 'apps', managed.appId, { isManagementApp: true });
    expect((await http.get(path, { token: ga })).status).toBe(200);
  });
});

describe('BAP addAppUser', () => {
  it('creates a System Administrator application user for a management app or an admin user, idempotently', async () => {
    const path = (env: Environment) => `${BAP}/scopes/admin/environments/${env.name}/addAppUser?${V}`;
    const body = { servicePrincipalAppId: managed.appId };
    const sp = emu.control.servicePrincipal(tenant.id, managed.appId);

    const ordinary = await http.request('POST', path(dvEnv), { token: await userToken('ordinaryUser'), body });
    expect(ordinary.status).toBe(403);
    expect(ordinary.json.error.code).toBe('Forbidden');

    const app = await managedToken(); // registered as a management app above
    const first = await http.request('POST', path(dvEnv), { token: app, body });
    expect(first.status).toBe(200);
    const su = org.systemusers.find((s) => s.applicationid === managed.appId)!;
    expect(su).toMatchObject({ accessmode: 4, azureactivedirectoryobjectid: sp.servicePrincipalObjectId });
    expect(org.appUsers.find((a) => a.appId === managed.appId)!.roles).toEqual(['System Administrator']);
    const again = await http.request('POST', path(dvEnv), { token: await userToken('globalAdmin'), body });
    expect(again.status).toBe(200);
    expect(org.systemusers.filter((s) => s.applicationid === managed.appId)).toHaveLength(1);
    const bots = await http.get(`${dvBase()}/bots?$select=botid`, { token: await managedToken(dvResource()) });
    expect(bots.status).toBe(200);

    const none = await http.request('POST', path(noDv), { token: app, body });
    expect(none.status).toBe(400);
    expect(none.json.error.code).toBe('EnvironmentHasNoDataverse');

    const other = tenant.environments.find((e) => e.dataverse && e !== dvEnv)!;
    const flags = await http.request('PUT', '/_emulator/environment-flags', {
      body: { tenant: tenant.id, environment: other.dataverse!.uniqueName, refuseAddAppUser: true },
    });
    expect(flags.json.refuseAddAppUser).toBe(true);
    const refused = await http.request('POST', path(other), { token: app, body });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ error: { code: 'AppUserCreationFailed', message: expect.stringContaining(managed.appId) } });
    emu.control.setEnvironmentFlags(tenant.id, other.name, { refuseAddAppUser: false });
    expect(other.refuseAddAppUser).toBeUndefined();
    expect((await http.request('POST', path(other), { token: app, body })).status).toBe(200);
  });
});

describe('Dataverse Web API application-user sequence', () => {
  it('finds the root business unit, creates the application user, assigns and removes System Administrator', async () => {
    const target = tenant.environments.find((e) => e.dataverse && !e.dataverse.appUsers.some((a) => a.appId === managed.appId))!;
    org = target.dataverse!;
    const token = await userToken('powerPlatformAdmin', dvResource());

    const bu = await http.get(`${dvBase()}/businessunits?$select=businessunitid,name&$filter=parentbusinessunitid eq null`, { token });
    expect(bu.status).toBe(200);
    expect(bu.json.value).toEqual([{ '@odata.etag': expect.any(String), businessunitid: org.businessUnitId, name: expect.any(String) }]);

    const find = `${dvBase()}/systemusers?$select=applicationid,systemuserid,fullname,isdisabled,deletedstate,_businessunitid_value&$expand=systemuserroles_association($select=roleid,name,_businessunitid_value)&$filter=applicationid eq ${managed.appId}`;
    expect((await http.get(find, { token })).json.value).toEqual([]);

    const create = await http.request('POST', `${dvBase()}/systemusers`, {
      token,
      body: { applicationid: managed.appId, accessmode: 4, isdisabled: false, 'businessunitid@odata.bind': `/businessunits(${org.businessUnitId})` },
    });
    expect(create.status).toBe(204);
    const entityId = String(create.headers['odata-entityid']);
    const m = /\/api\/data\/v9\.2\/systemusers\(([0-9a-f-]{36})\)$/.exec(entityId);
    expect(m).not.toBeNull();
    const systemUserId = m![1]!;
    expect(entityId.startsWith(`${dvResource()}/api/data/v9.2/`)).toBe(true);
    const dup = await http.request('POST', `${dvBase()}/systemusers`, {
      token,
      body: { applicationid: managed.appId, accessmode: 4, isdisabled: false, 'businessunitid@odata.bind': `/businessunits(${org.businessUnitId})` },
    });
    expect(dup.status).toBe(412);
    expect(dup.json.error.code).toBe('0x80040237');
    const badBu = await http.request('POST', `${dvBase()}/systemusers`, {
      token,
      body: { applicationid: '0b0b0b0b-1111-4222-8333-444444444444', 'businessunitid@odata.bind': '/businessunits(00000000-0000-4000-8000-000000000000)' },
    });
    expect(badBu.status).toBe(404);

    // Not yet privileged: an application user without roles.
    const appDv = await managedToken(dvResource());
    const denied = await http.get(`${dvBase()}/bots`, { token: appDv });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe('0x80040220');

    const roles = await http.get(`${dvBase()}/roles?$select=roleid,name,_businessunitid_value&$filter=_businessunitid_value eq ${org.businessUnitId}`, {
      token,
    });
    expect(roles.status).toBe(200);
    const names = (roles.json.value as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['System Administrator', 'Basic User', 'Environment Maker']));
    const sysAdmin = (roles.json.value as { roleid: string; name: string; _businessunitid_value: string }[]).find((r) => r.name === 'System Administrator')!;
    expect(sysAdmin._businessunitid_value).toBe(org.businessUnitId);
    const byName = await http.get(`${dvBase()}/roles?$select=roleid,name&$filter=name eq 'System Administrator'`, { token });
    expect(byName.json.value).toHaveLength(1);

    const ref = `${dvBase()}/systemusers(${systemUserId})/systemuserroles_association/$ref`;
    const roleUrl = `${dvResource()}/api/data/v9.2/roles(${sysAdmin.roleid})`;
    const assoc = await http.request('POST', ref, { token, body: { '@odata.id': roleUrl } });
    expect(assoc.status).toBe(204);
    expect((await http.request('POST', ref, { token, body: { '@odata.id': roleUrl } })).status).toBe(204); // idempotent
    const found = await http.get(find, { token });
    expect(found.json.value).toHaveLength(1);
    expect(found.json.value[0]).toMatchObject({
      applicationid: managed.appId,
      systemuserid: systemUserId,
      isdisabled: false,
      deletedstate: 0,
      _businessunitid_value: org.businessUnitId,
    });
    expect(found.json.value[0].systemuserroles_association).toEqual([
      { '@odata.etag': expect.any(String), roleid: sysAdmin.roleid, name: 'System Administrator', _businessunitid_value: org.businessUnitId },
    ]);
    expect((await http.get(`${dvBase()}/bots`, { token: appDv })).status).toBe(200);
    // An application user holding System Administrator may run the sequence itself.
    expect((await http.get(`${dvBase()}/roles`, { token: appDv })).status).toBe(200);

    const unknownRole = await http.request('POST', ref, {
      token,
      body: { '@odata.id': `${dvResource()}/api/data/v9.2/roles(00000000-0000-4000-8000-000000000000)` },
    });
    expect(unknownRole.status).toBe(400);
    const del = await http.request('DELETE', `${ref}?$id=${encodeURIComponent(roleUrl)}`, { token });
    expect(del.status).toBe(204);
    expect((await http.get(`${dvBase()}/bots`, { token: appDv })).status).toBe(403);
    expect((await http.get(find, { token })).json.value[0].systemuserroles_association).toEqual([]);

    // refuseRoleAssignment makes the association fail.
    emu.control.setEnvironmentFlags(tenant.id, target.name, { refuseRoleAssignment: true });
    const refused = await http.request('POST', ref, { token, body: { '@odata.id': roleUrl } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('0x80040220');
    expect(refused.json.error.message).toContain('prvAssignRole');
    emu.control.setEnvironmentFlags(tenant.id, target.name, { refuseRoleAssignment: false });
    expect((await http.request('POST', ref, { token, body: { '@odata.id': roleUrl } })).status).toBe(204);
  });

  it('refuses callers that are not privileged in the environment', async () => {
    const ordinary = await userToken('ordinaryUser', dvResource());
    const res = await http.get(`${dvBase()}/businessunits`, { token: ordinary });
    expect(res.status).toBe(403);
    expect(['0x80072560', '0x80040220']).toContain(res.json.error.code);
    const post = await http.request('POST', `${dvBase()}/systemusers`, { token: ordinary, body: { applicationid: managed.appId } });
    expect(post.status).toBe(403);
    // A person who is a systemuser but holds no role is a member, not privileged.
    const maker = org.systemusers.find(
      (s) => s.azureactivedirectoryobjectid && tenant.users.some((u) => u.id === s.azureactivedirectoryobjectid && u.id !== accounts.globalAdmin!.id),
    )!;
    const user = tenant.users.find((u) => u.id === maker.azureactivedirectoryobjectid)!;
    const token = await emu.control.mintToken({ tenantId: tenant.id, userId: user.id, resource: dvResource() });
    const who = await http.get(`${dvBase()}/WhoAmI`, { token: token.access_token });
    expect(who.json.UserId).toBe(maker.systemuserid);
    const read = await http.get(`${dvBase()}/bots`, { token: token.access_token });
    expect(read.status).toBe(403);
    expect(read.json.error.code).toBe('0x80040220');
  });
});
