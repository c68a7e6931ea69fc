import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { COPILOT_SKU_ID, copilotGroundTruth, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let noPerm: Tenant;

const PATH = (userId: string) => `/graph/v1.0/copilot/users/${userId}/interactionHistory/getAllEnterpriseInteractions`;
const licensed = (t: Tenant) => t.users.filter((u) => u.assignedLicenses?.some((l) => l.skuId === COPILOT_SKU_ID));

beforeAll(async () => {
  tenant = generateTenant({ seed: 'copilot-emu', sizes: { users: 60, guests: 4, copilotUsersPercent: 50, copilotPairsPerUser: 6 } });
  noPerm = generateTenant({ seed: 'copilot-noperm', permissions: ['User.Read.All'], sizes: { users: 10 } });
  emu = await startEmulator({ tenants: [tenant, noPerm] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const token = (t: Tenant) => http.appToken(t, 'https://graph.microsoft.com');

const all = (first: string, tok: string) => http.pages(first, { token: tok });

describe('Copilot interaction history', () => {
  it('licenses exactly floor(percent × enabled members) and serves assignedLicenses when selected', async () => {
    const members = tenant.users.filter((u) => u.userType === 'Member' && u.accountEnabled).length;
    expect(licensed(tenant)).toHaveLength(Math.floor(members / 2));
    const tok = await token(tenant);
    const res = await http.get('/graph/v1.0/users?$select=id,assignedLicenses&$top=999', { token: tok });
    expect(res.status).toBe(200);
    const withSku = (res.json.value as { assignedLicenses: { skuId: string }[] }[]).filter((u) => u.assignedLicenses.some((l) => l.skuId === COPILOT_SKU_ID));
    expect(withSku).toHaveLength(licensed(tenant).length);
    const delta = await all('/graph/v1.0/users/delta?$select=id,assignedLicenses', tok);
    expect(delta.items.filter((u) => (u.assignedLicenses as { skuId: string }[]).some((l) => l.skuId === COPILOT_SKU_ID))).toHaveLength(
      licensed(tenant).length,
    );
    const plain = await http.get('/graph/v1.0/users?$top=1', { token: tok });
    expect(plain.json.value[0]).not.toHaveProperty('assignedLicenses');
  });

  it('pages with $top and $skiptoken, counts with @odata.count, and returns every interaction of the ground truth', async () => {
    const tok = await token(tenant);
    let total = 0;
    for (const u of licensed(tenant)) {
      const { items, pages } = await all(`${PATH(u.id)}?$top=3`, tok);
      expect(pages[0]!['@odata.count']).toBe(items.length);
      expect(pages.length).toBe(Math.max(1, Math.ceil(items.length / 3)));
      if (pages.length > 1) expect(new URL(pages[0]!['@odata.nextLink'] as string).searchParams.get('$skiptoken')).toBeTruthy();
      expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
      for (const i of items) expect(i).toMatchObject({ interactionType: expect.stringMatching(/^(userPrompt|aiResponse)$/), body: { contentType: 'text' } });
      total += items.length;
    }
    expect(total).toBe(copilotGroundTruth(tenant).interactions);
    expect(copilotGroundTruth(tenant).withSecrets).toBeGreaterThan(0);
    expect(copilotGroundTruth(tenant).withPersonal).toBeGreaterThan(0);
  });

  it('filters on createdDateTime gt/lt and appClass eq', async () => {
    const tok = await token(tenant);
    const u = licensed(tenant).find((x) => (tenant.copilot!.interactions[x.id]?.length ?? 0) >= 4)!;
    const stored = tenant.copilot!.interactions[u.id]!.map((i) => i.wire);
    const pivot = String(stored[1]!.createdDateTime);
    const after = await all(`${PATH(u.id)}?$filter=${encodeURIComponent(`createdDateTime gt ${pivot}`)}`, tok);
    expect(after.items.map((i) => i.id)).toEqual(stored.filter((i) => String(i.createdDateTime) > pivot).map((i) => i.id));
    const before = await all(`${PATH(u.id)}?$filter=${encodeURIComponent(`createdDateTime lt ${pivot}`)}`, tok);
    expect(before.items).toHaveLength(1);
    const cls = String(stored[0]!.appClass);
    const byClass = await all(`${PATH(u.id)}?$filter=${encodeURIComponent(`appClass eq '${cls}'`)}`, tok);
    expect(byClass.items.length).toBe(stored.filter((i) => i.appClass === cls).length);
    const bad = await http.get(`${PATH(u.id)}?$filter=${encodeURIComponent("locale eq 'en-us'")}`, { token: tok });
    expect(bad.status).toBe(400);
  });

  it('answers an unlicensed user with an empty collection and an unknown user with 404', async () => {
    const tok = await token(tenant);
    const unlicensed = tenant.users.find((u) => !u.assignedLicenses?.length)!;
    const res = await http.get(PATH(unlicensed.id), { token: tok });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ '@odata.count': 0, value: [] });
    expect((await http.get(PATH('00000000-0000-0000-0000-000000000000'), { token: tok })).status).toBe(404);
  });

  it('refuses an app without AiEnterpriseInteraction.Read.All', async () => {
    const res = await http.get(PATH(noPerm.users[0]!.id), { token: await token(noPerm) });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('Authorization_RequestDenied');
  });

  it('adds new interactions through the control API, after the existing ones', async () => {
    const before = copilotGroundTruth(tenant).interactions;
    const res = await http.request('POST', `/_emulator/copilot/${tenant.id}/interactions`, { body: { pairs: 1, seed: 'more' } });
    expect(res.status).toBe(201);
    expect(copilotGroundTruth(tenant).interactions).toBe(before + 2 * licensed(tenant).length);
    const truth = await http.get(`/_emulator/copilot/${tenant.id}/ground-truth`);
    expect(truth.json.interactions).toBe(before + 2 * licensed(tenant).length);
  });
});
