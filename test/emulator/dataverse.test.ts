import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type DataverseOrg, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let readable: DataverseOrg;
let unreadable: DataverseOrg;

beforeAll(async () => {
  tenant = generateTenant({ seed: 9, sizes: { environments: 3, agents: 24, users: 40 } });
  const app = tenant.apps[0]!;
  readable = tenant.environments.find((e) => e.dataverse?.appUsers.some((a) => a.appId === app.appId))!.dataverse!;
  unreadable = tenant.environments.find((e) => e.dataverse && !e.dataverse.appUsers.some((a) => a.appId === app.appId))!.dataverse!;
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const dvToken = (org: DataverseOrg) => http.appToken(tenant, `${emu.url}/dataverse/${org.uniqueName}`);

describe('Dataverse bots', () => {
  it('pages with Prefer: odata.maxpagesize and a paging-cookie $skiptoken', async () => {
    const token = await dvToken(readable);
    const base = `/dataverse/${readable.uniqueName}/api/data/v9.2/bots?$select=botid,name,authenticationmode,accesscontrolpolicy,_ownerid_value,modifiedon,publishedon`;
    const seen: string[] = [];
    let url: string | undefined = base;
    let pages = 0;
    while (url) {
      const res = await http.get(url, { token, headers: { prefer: 'odata.maxpagesize=5', 'odata-version': '4.0', 'odata-maxversion': '4.0' } });
      expect(res.status).toBe(200);
      expect(res.headers['odata-version']).toBe('4.0');
      expect(res.headers['preference-applied']).toBe('odata.maxpagesize=5');
      expect(res.json['@odata.context']).toBe(
        `${emu.url}/dataverse/${readable.uniqueName}/api/data/v9.2/$metadata#bots(botid,name,authenticationmode,accesscontrolpolicy,_ownerid_value,modifiedon,publishedon)`,
      );
      const value = res.json.value as Record<string, unknown>[];
      expect(value.length).toBeLessThanOrEqual(5);
      for (const b of value) {
        expect(Object.keys(b)).toEqual([
          '@odata.etag',
          'botid',
          'name',
          'authenticationmode',
          'accesscontrolpolicy',
          '_ownerid_value',
          'modifiedon',
          'publishedon',
        ]);
        seen.push(b.botid as string);
      }
      url = res.json['@odata.nextLink'] as string | undefined;
      if (url) {
        expect(url.startsWith(`${emu.url}/dataverse/${readable.uniqueName}/api/data/v9.2/bots?$select=`)).toBe(true);
        expect(decodeURIComponent(new URL(url).searchParams.get('$skiptoken') ?? '')).toMatch(
          /^<cookie pagenumber="\d+" pagingcookie=".+" istracking="False" \/>$/,
        );
      }
      pages++;
    }
    expect(seen).toEqual(readable.bots.map((b) => b.botid));
    expect(pages).toBe(Math.ceil(readable.bots.length / 5));
  });

  it('returns every column by default, at most 5000 per page', async () => {
    const token = await dvToken(readable);
    const res = await http.get(`/dataverse/${readable.uniqueName}/api/data/v9.2/bots`, { token, headers: { prefer: 'odata.maxpagesize=10000' } });
    expect(res.headers['preference-applied']).toBe('odata.maxpagesize=5000');
    expect(res.json['@odata.nextLink']).toBeUndefined();
    const bot = res.json.value[0];
    for (const col of [
      'botid',
      'name',
      'schemaname',
      'authenticationmode',
      'authenticationtrigger',
      'accesscontrolpolicy',
      'authorizedsecuritygroupids',
      'publishedon',
      '_publishedby_value',
      '_ownerid_value',
      'owneridtype',
      'statecode',
      'statuscode',
      'language',
      'runtimeprovider',
      'template',
      'createdon',
      'modifiedon',
      'configuration',
    ]) {
      expect(bot).toHaveProperty(col);
    }
    expect(bot.owneridtype).toBe('systemuser');
    expect(typeof JSON.parse(bot.configuration)).toBe('object');
  });

  it('serves systemusers with $filter on applicationid', async () => {
    const token = await dvToken(readable);
    const app = tenant.apps[0]!;
    const res = await http.get(
      `/dataverse/${readable.uniqueName}/api/data/v9.2/systemusers?$select=systemuserid,fullname,applicationid,azureactivedirectoryobjectid,isdisabled,accessmode&$filter=applicationid eq ${app.appId}`,
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.json.value).toHaveLength(1);
    expect(res.json.value[0]).toMatchObject({ applicationid: app.appId, accessmode: 4, azureactivedirectoryobjectid: app.servicePrincipalObjectId });
    const people = await http.get(`/dataverse/${readable.uniqueName}/api/data/v9.2/systemusers`, { token });
    expect(people.json.value.length).toBe(readable.systemusers.length);
    expect(
      people.json.value.some(
        (s: { applicationid: string | null; azureactivedirectoryobjectid: string | null }) =>
          s.applicationid === null && s.azureactivedirectoryobjectid !== null,
      ),
    ).toBe(true);
  });
});

describe('Dataverse access', () => {
  it('answers 403 0x80072560 when the app is not an application user', async () => {
    const token = await dvToken(unreadable);
    const res = await http.get(`/dataverse/${unreadable.uniqueName}/api/data/v9.2/bots`, { token });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: { code: '0x80072560', message: 'The user is not a member of the organization.' } });
  });

  it('answers 403 0x80040220 for an application user without System Administrator', async () => {
    const app = tenant.apps[0]!;
    const appUser = readable.appUsers.find((a) => a.appId === app.appId)!;
    const roles = appUser.roles;
    appUser.roles = ['Basic User'];
    try {
      const token = await dvToken(readable);
      const res = await http.get(`/dataverse/${readable.uniqueName}/api/data/v9.2/bots`, { token });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe('0x80040220');
      expect(res.json.error.message).toMatch(
        new RegExp(`^Principal user \\(Id=${appUser.systemuserid}, type=8\\) is missing prvReadbot privilege \\(Id=[0-9a-f-]{36}\\)$`),
      );
    } finally {
      appUser.roles = roles;
    }
  });

  it('answers 401 for a token of another resource', async () => {
    const token = await dvToken(unreadable);
    const res = await http.get(`/dataverse/${readable.uniqueName}/api/data/v9.2/bots`, { token });
    expect(res.status).toBe(401);
    expect(String(res.headers['www-authenticate'])).toContain('Bearer authorization_uri=');
  });
});
