import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { powerBiInventoryGroundTruth, SCAN_MAX_CONCURRENT, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

const ADMIN = '/powerbi/v1.0/myorg/admin';
const NOW = Date.parse('2026-11-20T12:00:00Z');
const MINUTE = 60_000;
const DAY = 86_400_000;

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let token: string;

const get = (path: string) => http.get(path.startsWith('https:') ? path : `${ADMIN}${path}`, { token });
const getInfo = (ids: unknown, query = 'lineage=true&datasourceDetails=true&getArtifactUsers=true') =>
  http.request('POST', `${ADMIN}/workspaces/getInfo?${query}`, { token, body: { workspaces: ids } });

beforeAll(async () => {
  tenant = generateTenant({
    seed: 'pbi-scanner',
    permissions: ['User.Read.All', 'ActivityFeed.Read'],
    now: new Date(NOW).toISOString(),
    sizes: { users: 15, guests: 2, environments: 1, agents: 0, powerBiWorkspaces: 9 },
  });
  emu = await startEmulator({ tenants: [tenant] });
  emu.control.setClock(new Date(NOW).toISOString());
  http = emulatorClient(emu);
  token = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://analysis.windows.net/powerbi/api', kind: 'app' })).access_token;
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

describe('Power BI scanner routes', () => {
  it('generates workspaces with reports, datasets, guests, groups, personal workspaces and widely shared reports', () => {
    const truth = powerBiInventoryGroundTruth(tenant);
    expect(truth.workspaces).toBe(9);
    expect(truth.personalWorkspaces).toBe(3);
    expect(truth.reports).toBeGreaterThan(truth.datasets - 1);
    expect(truth.workspacesWithGuests).toBeGreaterThan(0);
    expect(truth.workspacesSharedWithGroups).toBeGreaterThan(0);
    expect(truth.publishedToWeb).toBeGreaterThan(0);
    expect(truth.organizationLinks).toBeGreaterThan(0);
    // Same seed, same model; the rest of the tenant is not disturbed by the Power BI generator's own rng.
    const again = generateTenant({
      seed: 'pbi-scanner',
      now: new Date(NOW).toISOString(),
      sizes: { users: 15, guests: 2, environments: 1, agents: 0, powerBiWorkspaces: 9 },
    });
    expect(again.powerBi).toEqual(tenant.powerBi);
    const without = generateTenant({
      seed: 'pbi-scanner',
      now: new Date(NOW).toISOString(),
      sizes: { users: 15, guests: 2, environments: 1, agents: 0, powerBiWorkspaces: 0 },
    });
    expect({ ...without, powerBi: undefined }).toEqual({ ...again, powerBi: undefined });
  });

  it('lists every workspace without modifiedSince, only later changes with it, and refuses modifiedSince outside 30 min–30 days', async () => {
    const all = await get('/workspaces/modified?excludePersonalWorkspaces=false');
    expect(all.status).toBe(200);
    expect((all.json as { id: string }[]).map((w) => w.id).sort()).toEqual(tenant.powerBi!.workspaces.map((w) => w.id).sort());
    const shared = await get('/workspaces/modified?excludePersonalWorkspaces=true');
    expect((shared.json as unknown[]).length).toBe(6);

    const since = new Date(NOW - 40 * MINUTE).toISOString();
    expect((await get(`/workspaces/modified?modifiedSince=${since}`)).json).toEqual([]);
    const target = tenant.powerBi!.workspaces[0]!;
    emu.control.changePowerBiWorkspace(tenant.id, target.id, { kind: 'addReport', name: 'Fresh report' });
    expect((await get(`/workspaces/modified?modifiedSince=${since}`)).json).toEqual([{ id: target.id }]);

    for (const bad of [new Date(NOW - 10 * MINUTE).toISOString(), new Date(NOW - 31 * DAY).toISOString(), 'yesterday']) {
      const res = await get(`/workspaces/modified?modifiedSince=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.json.error.message).toMatch(/modifiedSince/);
    }
  });

  it('runs a scan NotStarted → Running → Succeeded; the result is refused before and served after, with users and data sources', async () => {
    const ids = tenant.powerBi!.workspaces.map((w) => w.id);
    const started = await getInfo(ids);
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ id: expect.any(String), status: 'NotStarted' });
    expect(started.headers.location).toBe(`${emu.url}${ADMIN}/workspaces/scanStatus/${started.json.id}`);
    const early = await get(`/workspaces/scanResult/${started.json.id}`);
    expect(early.status).toBe(400);
    expect((await get(`/workspaces/scanStatus/${started.json.id}`)).json.status).toBe('Running');
    expect((await get(`/workspaces/scanStatus/${started.json.id}`)).json.status).toBe('Succeeded');
    const result = await get(`/workspaces/scanResult/${started.json.id}`);
    expect(result.status).toBe(200);
    const truth = powerBiInventoryGroundTruth(tenant);
    const workspaces = result.json.workspaces as {
      reports: { users: unknown[] }[];
      datasets: { datasourceUsages: unknown[] }[];
      users: { groupUserAccessRight: string }[];
    }[];
    expect(workspaces).toHaveLength(truth.workspaces);
    expect(workspaces.reduce((n, w) => n + w.reports.length, 0)).toBe(truth.reports);
    expect(workspaces.every((w) => w.users.every((u) => typeof u.groupUserAccessRight === 'string'))).toBe(true);
    expect(result.json.datasourceInstances.length).toBeGreaterThan(0);
    expect((await get('/workspaces/scanStatus/00000000-0000-4000-8000-000000000000')).status).toBe(404);

    // Kept 24 hours on the emulated clock.
    emu.control.setClock(new Date(NOW + DAY + MINUTE).toISOString());
    expect((await get(`/workspaces/scanResult/${started.json.id}`)).status).toBe(404);
    emu.control.setClock(new Date(NOW).toISOString());
  });

  it('refuses more than 100 workspace ids or a malformed body with 400, and a 17th scan in flight with 429 Retry-After', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const tooMany = await getInfo(many);
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.message).toMatch(/100/);
    expect((await getInfo([])).status).toBe(400);
    expect((await getInfo(['not-a-guid'])).status).toBe(400);

    const one = [tenant.powerBi!.workspaces[1]!.id];
    const scans: string[] = [];
    for (let i = 0; i < SCAN_MAX_CONCURRENT; i++) {
      const res = await getInfo(one);
      expect(res.status).toBe(202);
      scans.push(res.json.id as string);
    }
    const refused = await getInfo(one);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    // Finishing one scan frees a slot.
    await get(`/workspaces/scanStatus/${scans[0]}`);
    await get(`/workspaces/scanStatus/${scans[0]}`);
    expect((await getInfo(one)).status).toBe(202);
    for (const id of scans) for (let i = 0; i < 2; i++) await get(`/workspaces/scanStatus/${id}`);
  });

  it('a scan can be made to fail; deleted workspaces are scanned with state Deleted', async () => {
    tenant.powerBi!.failScans = 1;
    const failing = await getInfo([tenant.powerBi!.workspaces[2]!.id]);
    await get(`/workspaces/scanStatus/${failing.json.id}`);
    const status = await get(`/workspaces/scanStatus/${failing.json.id}`);
    expect(status.json).toMatchObject({ status: 'Failed', error: { code: expect.any(String) } });

    const victim = tenant.powerBi!.workspaces[3]!;
    emu.control.changePowerBiWorkspace(tenant.id, victim.id, { kind: 'delete' });
    const scan = await getInfo([victim.id]);
    await get(`/workspaces/scanStatus/${scan.json.id}`);
    await get(`/workspaces/scanStatus/${scan.json.id}`);
    expect((await get(`/workspaces/scanResult/${scan.json.id}`)).json.workspaces).toEqual([expect.objectContaining({ id: victim.id, state: 'Deleted' })]);
    expect(((await get('/workspaces/modified')).json as { id: string }[]).map((w) => w.id)).not.toContain(victim.id);
    expect(
      ((await get(`/workspaces/modified?modifiedSince=${new Date(NOW - 40 * MINUTE).toISOString()}`)).json as { id: string }[]).map((w) => w.id),
    ).toContain(victim.id);
  });

  it('pages the widely shared artifacts with continuation links, one list per kind', async () => {
    tenant.powerBi!.widelySharedPageSize = 1;
    for (const [list, shareType, expected] of [
      ['publishedToWeb', 'PublishToWeb', powerBiInventoryGroundTruth(tenant).publishedToWeb],
      ['linksSharedToWholeOrganization', 'Link', powerBiInventoryGroundTruth(tenant).organizationLinks],
    ] as const) {
      const entities: { shareType: string; sharer: { principalType: string } }[] = [];
      let res = await get(`/widelySharedArtifacts/${list}`);
      for (;;) {
        expect(res.status).toBe(200);
        entities.push(...res.json.artifactAccessEntities);
        if (!res.json.continuationUri) break;
        expect(res.json.continuationUri).toContain(`/widelySharedArtifacts/${list}?continuationToken='`);
        res = await get(res.json.continuationUri);
      }
      expect(entities).toHaveLength(expected);
      expect(entities.every((e) => e.shareType === shareType && e.sharer.principalType === 'User')).toBe(true);
    }
    expect((await get("/widelySharedArtifacts/publishedToWeb?continuationToken='bogus'")).status).toBe(400);
    tenant.powerBi!.widelySharedPageSize = undefined;
  });

  it('answers 401 PowerBINotAuthorizedException while service principals may not use the read-only admin APIs', async () => {
    emu.control.setPowerBiAdminApiAccess(tenant.id, false);
    const res = await get('/workspaces/modified');
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('PowerBINotAuthorizedException');
    emu.control.setPowerBiAdminApiAccess(tenant.id, true);
  });
});
