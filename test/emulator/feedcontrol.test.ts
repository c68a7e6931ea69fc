import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { ControlError, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;

beforeAll(async () => {
  tenant = generateTenant({ seed: 'feed-control', sizes: { users: 10, guests: 1, environments: 1, agents: 0 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

describe('feed control over HTTP', () => {
  it('sets, advances and reads the clock', async () => {
    expect((await http.request('PUT', '/_emulator/clock', { body: { now: '2025-06-10T12:00:00Z' } })).json).toEqual({
      now: '2025-06-10T12:00:00.000Z',
      frozen: true,
      offsetMs: 0,
    });
    expect((await http.request('POST', '/_emulator/clock/advance', { body: { seconds: 3600 } })).json.now).toBe('2025-06-10T13:00:00.000Z');
    expect((await http.get('/_emulator/clock')).json.now).toBe('2025-06-10T13:00:00.000Z');
    expect(emu.control.clock().now).toBe('2025-06-10T13:00:00.000Z');
    expect((await http.request('PUT', '/_emulator/clock', { body: { now: 'yesterday' } })).json.error.code).toBe('InvalidClock');
    const real = await http.request('PUT', '/_emulator/clock', { body: { now: null } });
    expect(real.json.frozen).toBe(false);
    emu.control.setClock('2025-06-10T13:00:00Z');
  });

  it('reads and changes feed settings; validates them', async () => {
    const before = (await http.get(`/_emulator/feeds/${tenant.id}/settings`)).json;
    expect(before).toMatchObject({
      seed: tenant.id,
      recordsPerHour: 120,
      blobSize: 200,
      pageSize: 200,
      duplicateShare: 0.02,
      batchMinutes: 10,
      minDelayMinutes: 30,
      maxDelayMinutes: 90,
      unavailableContentTypes: [],
    });
    const after = await http.request('PUT', `/_emulator/feeds/${tenant.id}/settings`, {
      body: { recordsPerHour: 60, mix: { 'DLP.All': 0 }, unavailableContentTypes: ['DLP.All'] },
    });
    expect(after.json).toMatchObject({ recordsPerHour: 60, unavailableContentTypes: ['DLP.All'] });
    expect(after.json.mix['DLP.All']).toBe(0);
    expect(after.json.mix['Audit.General']).toBe(0.4);
    const bad = await http.request('PUT', `/_emulator/feeds/${tenant.id}/settings`, { body: { blobSize: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('InvalidFeedSettings');
    expect(() => emu.control.configureFeed(tenant.id, { mix: { 'Audit.Nope': 1 } as never })).toThrow(ControlError);
    expect(() => emu.control.configureFeed('no-such-tenant', {})).toThrow(/no served tenant/);
  });

  it('starts subscriptions, plants records and answers the ground truth', async () => {
    const sub = await http.request('PUT', `/_emulator/feeds/${tenant.id}/subscriptions/Audit.General`, { body: {} });
    expect(sub.json).toEqual({ contentType: 'Audit.General', status: 'enabled', webhook: null });
    expect((await http.request('PUT', `/_emulator/feeds/${tenant.id}/subscriptions/DLP.All`, { body: {} })).status).toBe(409);
    const added = await http.request('POST', `/_emulator/feeds/${tenant.id}/records`, {
      body: { contentType: 'Audit.General', contentCreated: '2025-06-10T12:30:00Z', records: [{ RecordType: 30, Operation: 'CreateFlow' }] },
    });
    expect(added.status).toBe(201);
    expect(added.json[0]).toMatchObject({
      contentType: 'Audit.General',
      contentCreated: '2025-06-10T12:30:00.000Z',
      contentExpiration: '2025-06-17T12:30:00.000Z',
    });
    expect(added.json[0].contentId).toMatch(/\$audit_general\$Audit_General\$emuinj$/);
    const truth = await http.get(`/_emulator/feeds/${tenant.id}/ground-truth?from=2025-06-10T12:30:00Z&to=2025-06-10T12:31:00Z`);
    expect(truth.json.contentTypes['Audit.General'].ids).toEqual(added.json[0].ids);
    expect(truth.json.byOperation).toEqual({ CreateFlow: 1 });
    const noIds = await http.get(
      `/_emulator/feeds/${tenant.id}/ground-truth?from=2025-06-10T00:00:00Z&to=2025-06-10T12:00:00Z&includeIds=false&basis=creationTime`,
    );
    expect(noIds.json.basis).toBe('creationTime');
    expect(noIds.json.contentTypes['Audit.General'].ids).toBeUndefined();
    expect(noIds.json.total.unique).toBeGreaterThan(0);
    expect((await http.get(`/_emulator/feeds/${tenant.id}/subscriptions`)).json).toEqual([{ contentType: 'Audit.General', status: 'enabled', webhook: null }]);
    expect((await http.request('PUT', `/_emulator/feeds/${tenant.id}/subscriptions/Audit.General`, { body: { enabled: false } })).status).toBe(204);
    expect(emu.control.subscriptions(tenant.id)[0]!.status).toBe('disabled');
  });

  it('changes Power BI settings and reports PublisherIdentifier counters', async () => {
    const pbi = await http.request('PUT', '/_emulator/powerbi-settings', { body: { tenant: tenant.id, servicePrincipalsCanUseReadOnlyAdminApis: false } });
    expect(pbi.json).toEqual({
      servicePrincipalsCanUseReadOnlyAdminApis: false,
      rejectServicePrincipalsWithPowerBiRoles: true,
      pageSize: 5000,
      historyDays: 30,
    });
    expect((await http.get(`/_emulator/powerbi-settings/${tenant.id}`)).json.servicePrincipalsCanUseReadOnlyAdminApis).toBe(false);
    await http.get(`/manage/api/v1.0/${tenant.id}/activity/feed/subscriptions/list`);
    expect((await http.get('/_emulator/feed-requests')).json.withoutPublisherIdentifier).toBeGreaterThan(0);
    expect((await http.request('DELETE', '/_emulator/feed-requests')).status).toBe(204);
    expect(emu.control.publisherStats()).toEqual({ total: 0, withoutPublisherIdentifier: 0, byPublisher: {} });
    const pbiGt = await http.get(`/_emulator/feeds/${tenant.id}/powerbi-ground-truth?from=2025-06-10T00:00:00Z&to=2025-06-10T12:00:00Z`);
    expect(pbiGt.json.count).toBe(pbiGt.json.ids.length);
  });

  it('serves non-ASCII tenant data as UTF-8', async () => {
    const cafe = emu.control.addTenant(
      generateTenant({ seed: 'utf8', displayName: 'Café Müller', sizes: { users: 5, guests: 0, environments: 1, agents: 0 } }),
    );
    emu.control.setClock('2025-06-10T13:00:00Z');
    emu.control.configureFeed(cafe.id, { kindMix: { copilot: 0, powerApps: 0, flow: 0, powerPlatformAdmin: 0, powerPlatformDlp: 0 } });
    emu.control.startSubscription(cafe.id, 'Audit.General');
    const token = (await emu.control.mintToken({ tenantId: cafe.id, resource: 'https://manage.office.com', kind: 'app' })).access_token;
    const list = await http.get(`/manage/api/v1.0/${cafe.id}/activity/feed/subscriptions/content?contentType=Audit.General`, { token });
    const blob = await http.get(list.json[0].contentUri, { token });
    expect(blob.json[0]).toMatchObject({ RecordType: 20, CapacityName: 'Café Müller P1' });
    expect(Number(blob.headers['content-length'])).toBe(Buffer.byteLength(blob.text, 'utf8'));
  });
});
