import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant, tenantAccounts } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

const PATH = '/powerbi/v1.0/myorg/admin/activityevents';
const NOW = '2025-06-10T20:00:00Z';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let appToken: string;

const events = (query: string, token = appToken) => http.get(`${PATH}?${query}`, { token });

/** Follows continuationUri until lastResultSet; returns all entities and the responses. */
async function all(query: string): Promise<{ entities: Record<string, unknown>[]; pages: { count: number; last: boolean; uri: string | null }[] }> {
  let res = await events(query);
  const entities: Record<string, unknown>[] = [];
  const pages = [];
  for (;;) {
    expect(res.status).toBe(200);
    entities.push(...res.json.activityEventEntities);
    pages.push({ count: res.json.activityEventEntities.length, last: res.json.lastResultSet, uri: res.json.continuationUri });
    if (res.json.lastResultSet) break;
    res = await http.get(res.json.continuationUri, { token: appToken });
  }
  return { entities, pages };
}

beforeAll(async () => {
  // The app as Microsoft documents it for the read-only admin APIs: no Power BI permission.
  tenant = generateTenant({
    seed: 'powerbi',
    permissions: ['User.Read.All', 'ActivityFeed.Read'],
    sizes: { users: 20, guests: 2, environments: 1, agents: 0 },
  });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  appToken = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://analysis.windows.net/powerbi/api', kind: 'app' })).access_token;
  emu.control.configureFeed(tenant.id, { recordsPerHour: 2000 });
});

beforeEach(() => {
  emu.control.setClock(NOW);
  emu.control.setPowerBiSettings(tenant.id, { servicePrincipalsCanUseReadOnlyAdminApis: true, pageSize: 5000 });
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

describe('Power BI activity events', () => {
  it('answers one UTC day page by page (one hour per page) until lastResultSet, matching the ground truth', async () => {
    const { entities, pages } = await all("startDateTime='2025-06-10T07:55:00.000Z'&endDateTime='2025-06-10T10:59:59.999Z'");
    expect(pages.length).toBe(4); // 07:55–08:55, 08:55–09:55, 09:55–10:55, 10:55–11:00
    expect(
      pages
        .slice(0, -1)
        .every((p) => !p.last && p.uri?.startsWith(`${emu.url}/powerbi/v1.0/myorg/admin/activityevents?continuationToken='`) && p.uri.endsWith("'")),
    ).toBe(true);
    expect(pages.at(-1)).toMatchObject({ last: true, uri: null });
    const truth = emu.control.powerBiGroundTruth(tenant.id, { from: '2025-06-10T07:55:00Z', to: '2025-06-10T11:00:00Z' });
    expect(truth.count).toBeGreaterThan(100);
    expect(entities.map((e) => e.Id)).toEqual(truth.ids);
    for (const e of entities) {
      expect(e).toMatchObject({ RecordType: 20, Workload: 'PowerBI', OrganizationId: tenant.id });
      expect(e.Activity).toBe(e.Operation);
      expect(String(e.CreationTime) >= '2025-06-10T07:55:00' && String(e.CreationTime) <= '2025-06-10T10:59:59').toBe(true);
    }
    expect(Object.keys(truth.byActivity)).toContain('ViewReport');
  });

  it('splits an hour into several pages at pageSize and keeps order; the continuation token echoes in the JSON', async () => {
    emu.control.setPowerBiSettings(tenant.id, { pageSize: 10 });
    const first = await events("startDateTime='2025-06-10T08:00:00'&endDateTime='2025-06-10T08:59:59'");
    expect(first.json.activityEventEntities).toHaveLength(10);
    expect(first.json.lastResultSet).toBe(false);
    expect(first.json.continuationUri).toBe(`${emu.url}${PATH}?continuationToken='${first.json.continuationToken}'`);
    const { entities, pages } = await all("startDateTime='2025-06-10T08:00:00'&endDateTime='2025-06-10T08:59:59'");
    const truth = emu.control.powerBiGroundTruth(tenant.id, { from: '2025-06-10T08:00:00Z', to: '2025-06-10T09:00:00Z' });
    expect(pages.length).toBe(Math.ceil(truth.count / 10));
    expect(entities.map((e) => e.Id)).toEqual(truth.ids);
    // A client that decodes the token before sending it works too.
    const decoded = decodeURIComponent(first.json.continuationToken);
    expect((await events(`continuationToken='${encodeURIComponent(decoded)}'`)).status).toBe(200);
  });

  it('filters by Activity and UserId, and only serves events that happened on the emulated clock', async () => {
    const { entities } = await all("startDateTime='2025-06-10T06:00:00Z'&endDateTime='2025-06-10T08:00:00Z'&$filter=Activity eq 'viewreport'");
    expect(entities.length).toBeGreaterThan(0);
    expect(entities.every((e) => e.Activity === 'ViewReport')).toBe(true);
    const user = String(entities[0]!.UserId);
    const mine = await all(
      `startDateTime='2025-06-10T06:00:00Z'&endDateTime='2025-06-10T08:00:00Z'&$filter=Activity eq 'ViewReport' and UserId eq '${user.toUpperCase()}'`,
    );
    expect(mine.entities.length).toBeGreaterThan(0);
    expect(mine.entities.every((e) => e.UserId === user)).toBe(true);
    emu.control.setClock('2025-06-10T19:30:00Z');
    const future = await all("startDateTime='2025-06-10T19:00:00Z'&endDateTime='2025-06-10T23:59:59Z'");
    expect(future.entities.every((e) => String(e.CreationTime) <= '2025-06-10T19:30:00')).toBe(true);
  });

  it('serves planted RecordType 20 records of Audit.General', async () => {
    const [added] = emu.control.addAuditRecords(
      tenant.id,
      'Audit.General',
      [
        {
          RecordType: 20,
          CreationTime: '2025-06-10T03:00:00',
          Operation: 'PublishToWebReport',
          Activity: 'PublishToWebReport',
          Workload: 'PowerBI',
          UserId: 'x@y',
          ReportName: 'Board pack',
        },
      ],
      { contentCreated: '2025-06-10T04:00:00Z' },
    );
    const { entities } = await all("startDateTime='2025-06-10T03:00:00Z'&endDateTime='2025-06-10T03:59:59Z'&$filter=Activity eq 'PublishToWebReport'");
    expect(entities.map((e) => e.Id)).toContain(added!.ids[0]);
  });

  it('rejects unquoted times, two UTC days, a window older than 30 days and bad tokens with 400', async () => {
    for (const q of [
      'startDateTime=2025-06-10T01:00:00Z&endDateTime=2025-06-10T02:00:00Z',
      "startDateTime='2025-06-09T23:00:00Z'&endDateTime='2025-06-10T01:00:00Z'",
      "startDateTime='2025-05-01T00:00:00Z'&endDateTime='2025-05-01T01:00:00Z'",
      "startDateTime='2025-06-10T01:00:00Z'",
      "continuationToken='bm90IGEgdG9rZW4='",
      "startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'&$filter=ItemName eq 'x'",
    ]) {
      const res = await events(q);
      expect(res.status, q).toBe(400);
      expect(res.json.error.code, q).toBe('InvalidRequest');
    }
  });

  it('service principals need the tenant setting; users need an admin role; tokens need the Power BI audience', async () => {
    emu.control.setPowerBiAdminApiAccess(tenant.id, false);
    const refused = await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'");
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('PowerBINotAuthorizedException');
    const admin = tenantAccounts(tenant).globalAdmin!;
    const adminToken = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://analysis.windows.net/powerbi/api', userId: admin.id }))
      .access_token;
    expect((await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'", adminToken)).status).toBe(200);
    const ordinary = tenantAccounts(tenant).ordinaryUser!;
    const userToken = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://analysis.windows.net/powerbi/api', userId: ordinary.id }))
      .access_token;
    expect((await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'", userToken)).status).toBe(401);
    // The setting on: an app holding no Power BI role is served; one holding Tenant.Read.All (admin-consented) is
    // refused with the same 401, as Microsoft documents ("must not have any admin-consent required permissions").
    emu.control.setPowerBiAdminApiAccess(tenant.id, true);
    expect((await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'")).status).toBe(200);
    const consented = (
      await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://analysis.windows.net/powerbi/api', kind: 'app', roles: ['Tenant.Read.All'] })
    ).access_token;
    const withRoles = await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'", consented);
    expect(withRoles.status).toBe(401);
    expect(withRoles.json).toEqual({
      error: {
        code: 'PowerBINotAuthorizedException',
        'pbi.error': { code: 'PowerBINotAuthorizedException', parameters: {}, details: [], exceptionCulprit: 1 },
      },
    });
    // The tenants some report: such apps served too (a setting, off by default).
    emu.control.setPowerBiSettings(tenant.id, { rejectServicePrincipalsWithPowerBiRoles: false });
    expect((await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'", consented)).status).toBe(200);
    emu.control.setPowerBiSettings(tenant.id, { rejectServicePrincipalsWithPowerBiRoles: true });
    const manage = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://manage.office.com', kind: 'app' })).access_token;
    expect((await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'", manage)).status).toBe(401);
    const expired = (
      await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://analysis.windows.net/powerbi/api', kind: 'app', expiresInSeconds: -10 })
    ).access_token;
    expect((await events("startDateTime='2025-06-10T01:00:00Z'&endDateTime='2025-06-10T02:00:00Z'", expired)).json.error.code).toBe('TokenExpired');
  });
});
