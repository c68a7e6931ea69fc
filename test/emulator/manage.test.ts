import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { CONTENT_TYPES, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

const PUB = '46b472a7-c68e-4adf-8ade-3db49497518e';
const NOW = '2025-06-10T12:00:00.000Z';
const HOUR = 3_600_000;

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let other: Tenant;
let token: string;

const root = (t: Tenant = tenant) => `/manage/api/v1.0/${t.id}/activity/feed`;
const get = (path: string, tok = token) => http.get(path, { token: tok });
const post = (path: string, tok = token, body?: unknown) => http.request('POST', path, { token: tok, ...(body === undefined ? {} : { body }) });

/** Lists every page of a content window, following NextPageUri; returns items and the page count. */
async function listAll(
  ct: string,
  query: string,
): Promise<{ items: { contentId: string; contentUri: string; contentCreated: string; contentExpiration: string; contentType: string }[]; pages: number }> {
  let url: string | undefined = `${root()}/subscriptions/content?contentType=${ct}&${query}&PublisherIdentifier=${PUB}`;
  const items = [];
  let pages = 0;
  while (url) {
    const res = await get(url);
    expect(res.status).toBe(200);
    items.push(...res.json);
    pages++;
    const next = res.headers.nextpageuri as string | undefined;
    url = next ? `${next}&PublisherIdentifier=${PUB}` : undefined;
  }
  return { items, pages };
}

beforeAll(async () => {
  tenant = generateTenant({ seed: 'feed', sizes: { users: 40, guests: 6, environments: 3, agents: 10 } });
  other = generateTenant({ seed: 'feed-other', sizes: { users: 5, guests: 0, environments: 1, agents: 0 } });
  emu = await startEmulator({ tenants: [tenant, other] });
  http = emulatorClient(emu);
  token = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://manage.office.com', kind: 'app' })).access_token;
});

beforeEach(() => {
  emu.control.setClock(NOW);
});

afterEach(() => {
  emu.control.clearFaults();
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

describe('subscriptions', () => {
  it('start answers enabled, a repeat answers AF20024, list and stop follow', async () => {
    const first = await post(`${root()}/subscriptions/start?contentType=Audit.SharePoint&PublisherIdentifier=${PUB}`);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ contentType: 'Audit.SharePoint', status: 'enabled', webhook: null });
    const again = await post(`${root()}/subscriptions/start?contentType=Audit.SharePoint&PublisherIdentifier=${PUB}`);
    expect(again.status).toBe(400);
    expect(again.json).toEqual({ error: { code: 'AF20024', message: 'The subscription is already enabled. No property change.' } });
    const list = await get(`${root()}/subscriptions/list?PublisherIdentifier=${PUB}`);
    expect(list.json).toContainEqual({ contentType: 'Audit.SharePoint', status: 'enabled', webhook: null });
    const stop = await post(`${root()}/subscriptions/stop?contentType=Audit.SharePoint&PublisherIdentifier=${PUB}`);
    expect(stop.status).toBe(200);
    expect(stop.text).toBe('');
    expect((await get(`${root()}/subscriptions/list`)).json).toContainEqual({ contentType: 'Audit.SharePoint', status: 'disabled', webhook: null });
    const content = await get(`${root()}/subscriptions/content?contentType=Audit.SharePoint`);
    expect(content.json).toEqual({ error: { code: 'AF20022', message: 'No subscription found for the specified content type.' } });
    expect((await post(`${root()}/subscriptions/start?contentType=Audit.SharePoint`)).status).toBe(200);
  });

  it('rejects unknown, missing and unavailable content types; lists nothing without a subscription', async () => {
    expect((await post(`${root()}/subscriptions/start?contentType=Audit.Nope`)).json.error).toEqual({
      code: 'AF20020',
      message: 'The specified content type is not valid.',
    });
    expect((await post(`${root()}/subscriptions/start`)).json.error.code).toBe('AF20001');
    emu.control.configureFeed(tenant.id, { unavailableContentTypes: ['DLP.All'] });
    const dlp = await post(`${root()}/subscriptions/start?contentType=DLP.All`);
    expect(dlp.status).toBe(400);
    expect(dlp.json.error).toEqual({ code: 'AF20012', message: `Specified tenant ID (${tenant.id}) is incorrectly configured in the system.` });
    emu.control.configureFeed(tenant.id, { unavailableContentTypes: [] });
    const none = await get(`${root()}/subscriptions/content?contentType=Audit.Exchange`);
    expect(none.status).toBe(400);
    expect(none.json.error.code).toBe('AF20022');
  });

  it('echoes a webhook and refuses a non-HTTPS address', async () => {
    const bad = await post(
      `${root(other)}/subscriptions/start?contentType=Audit.Exchange`,
      (await emu.control.mintToken({ tenantId: other.id, resource: 'https://manage.office.com', kind: 'app' })).access_token,
      { webhook: { address: 'http://hook.example' } },
    );
    expect(bad.json.error.code).toBe('AF20021');
  });
});

describe('authentication', () => {
  it('401 without a valid token for manage.office.com, 403 AF10001 without ActivityFeed.Read, AF20010 on a tenant mismatch', async () => {
    const none = await http.get(`${root()}/subscriptions/list`);
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ Message: 'Authorization has been denied for this request.' });
    const graph = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://graph.microsoft.com', kind: 'app' })).access_token;
    expect((await get(`${root()}/subscriptions/list`, graph)).status).toBe(401);
    const noRole = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://manage.office.com', kind: 'app', roles: ['ServiceHealth.Read'] }))
      .access_token;
    const denied = await get(`${root()}/subscriptions/list`, noRole);
    expect(denied.status).toBe(403);
    expect(denied.json.error).toEqual({
      code: 'AF10001',
      message: 'The permission set (ServiceHealth.Read) sent in the request did not include the expected permission ActivityFeed.Read.',
    });
    const mismatch = await get(`${root(other)}/subscriptions/list`);
    expect(mismatch.status).toBe(403);
    expect(mismatch.json.error).toEqual({
      code: 'AF20010',
      message: `The tenant ID passed in the URL (${other.id}) does not match the tenant ID passed in the access token (${tenant.id}).`,
    });
    expect((await get('/manage/api/v1.0/contoso.com/activity/feed/subscriptions/list')).json.error.code).toBe('AF20013');
  });
});

describe('content listing', () => {
  beforeAll(() => {
    emu.control.setClock(NOW);
    for (const ct of CONTENT_TYPES) emu.control.startSubscription(tenant.id, ct);
    emu.control.configureFeed(tenant.id, { pageSize: 200, recordsPerHour: 120, duplicateShare: 0.02 });
  });

  it('lists the last 24 hours by default, absolute content URIs with $ in ids, sorted by contentCreated', async () => {
    const res = await get(`${root()}/subscriptions/content?contentType=Audit.General&PublisherIdentifier=${PUB}`);
    expect(res.status).toBe(200);
    expect(res.json.length).toBeGreaterThan(50);
    const now = Date.parse(NOW);
    for (const item of res.json) {
      expect(Object.keys(item)).toEqual(['contentType', 'contentId', 'contentUri', 'contentCreated', 'contentExpiration']);
      expect(item.contentType).toBe('Audit.General');
      expect(item.contentId).toContain('$');
      expect(item.contentUri).toBe(`${emu.url}/manage/api/v1.0/${tenant.id}/activity/feed/audit/${item.contentId}`);
      expect(item.contentCreated).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const created = Date.parse(item.contentCreated);
      expect(created).toBeGreaterThanOrEqual(now - 24 * HOUR);
      expect(created).toBeLessThanOrEqual(now);
      expect(Date.parse(item.contentExpiration) - created).toBe(7 * 24 * HOUR);
    }
    const created = res.json.map((i: { contentCreated: string }) => i.contentCreated);
    expect([...created].sort()).toEqual(created);
  });

  it('accepts the three documented time formats, start inclusive and end exclusive', async () => {
    const at = '2025-06-10T08:00:00.000Z';
    const [planted] = emu.control.addAuditRecords(tenant.id, 'Audit.Exchange', [{ RecordType: 50, Operation: 'MailItemsAccessed', UserId: 'probe@x' }], {
      contentCreated: at,
    });
    const ids = async (start: string, end: string) => {
      const res = await get(`${root()}/subscriptions/content?contentType=Audit.Exchange&startTime=${start}&endTime=${end}`);
      expect(res.status).toBe(200);
      return res.json.map((i: { contentId: string }) => i.contentId);
    };
    expect(await ids('2025-06-10T08:00:00', '2025-06-10T09:00:00')).toContain(planted!.contentId);
    expect(await ids('2025-06-10T07:00', '2025-06-10T08:00')).not.toContain(planted!.contentId);
    expect(await ids('2025-06-10', '2025-06-10T12:00')).toContain(planted!.contentId);
    expect(await ids('2025-06-09', '2025-06-10')).not.toContain(planted!.contentId);
  });

  it('answers window errors with AF20055 (or AF20030 when configured) and bad times with AF20002', async () => {
    const message =
      'Start time and end time must both be specified (or both omitted) and must be less than or equal to 24 hours apart, with the start time no more than 7 days in the past.';
    const base = `${root()}/subscriptions/content?contentType=Audit.General`;
    for (const q of [
      '&startTime=2025-06-10T00:00',
      '&endTime=2025-06-10T00:00',
      '&startTime=2025-06-08T00:00&endTime=2025-06-09T00:00:01',
      '&startTime=2025-06-02T11:00&endTime=2025-06-03T00:00',
    ]) {
      const res = await get(`${base}${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.error, q).toEqual({ code: 'AF20055', message });
    }
    expect((await get(`${base}&startTime=2025-06-09T00:00&endTime=2025-06-10T00:00`)).status).toBe(200); // exactly 24 h
    expect((await get(`${base}&startTime=2025-06-03T12:00&endTime=2025-06-04T00:00`)).status).toBe(200); // exactly 7 days back
    emu.control.configureFeed(tenant.id, { windowErrorCode: 'AF20030' });
    expect((await get(`${base}&startTime=2025-06-08T00:00&endTime=2025-06-10T00:00`)).json.error.code).toBe('AF20030');
    emu.control.configureFeed(tenant.id, { windowErrorCode: 'AF20055' });
    expect((await get(`${base}&startTime=10/06/2025&endTime=2025-06-10T01:00`)).json.error).toEqual({
      code: 'AF20002',
      message: 'Invalid parameter type: startTime. Expected type: datetime',
    });
  });

  it('pages with NextPageUri (absolute, same window, &nextPage=) until absent; the union is the whole listing', async () => {
    const window = 'startTime=2025-06-09T12:00:00&endTime=2025-06-10T12:00:00';
    emu.control.configureFeed(tenant.id, { pageSize: 7 });
    const first = await get(`${root()}/subscriptions/content?contentType=Audit.General&${window}&PublisherIdentifier=${PUB}`);
    expect(first.json).toHaveLength(7);
    const next = first.headers.nextpageuri as string;
    expect(next).toMatch(
      new RegExp(
        `^${emu.url.replace(/\./g, '\\.')}/manage/api/v1\\.0/${tenant.id}/activity/feed/subscriptions/content\\?contentType=Audit\\.General&startTime=2025-06-09T12:00:00&endTime=2025-06-10T12:00:00&nextPage=\\w`,
      ),
    );
    const paged = await listAll('Audit.General', window);
    emu.control.configureFeed(tenant.id, { pageSize: 10_000 });
    const whole = await listAll('Audit.General', window);
    expect(whole.pages).toBe(1);
    expect(paged.pages).toBe(Math.ceil(whole.items.length / 7));
    expect(paged.items).toEqual(whole.items);
    const bad = await get(`${root()}/subscriptions/content?contentType=Audit.General&${window}&nextPage=nonsense`);
    expect(bad.json.error).toEqual({ code: 'AF20031', message: 'Invalid nextPage Input: nonsense.' });
    emu.control.configureFeed(tenant.id, { pageSize: 3, nextPageUriVersion: 'v1' });
    const v1 = await get(`${root()}/subscriptions/content?contentType=Audit.General&${window}`);
    expect(v1.headers.nextpageuri).toContain('/manage/api/v1/');
    expect((await get(v1.headers.nextpageuri as string)).status).toBe(200);
    emu.control.configureFeed(tenant.id, { pageSize: 200, nextPageUriVersion: 'v1.0' });
  });

  it('the implied 24-hour window is written into NextPageUri', async () => {
    emu.control.configureFeed(tenant.id, { pageSize: 5 });
    const res = await get(`${root()}/subscriptions/content?contentType=Audit.SharePoint`);
    expect(res.headers.nextpageuri).toContain('&startTime=2025-06-09T12:00:00&endTime=2025-06-10T12:00:00&nextPage=');
    emu.control.configureFeed(tenant.id, { pageSize: 200 });
  });
});

describe('content blobs', () => {
  beforeAll(() => {
    emu.control.setClock(NOW);
    for (const ct of CONTENT_TYPES) emu.control.startSubscription(tenant.id, ct);
  });

  it('serves a JSON array of common-schema records; unknown and malformed ids are AF20050 / AF20052', async () => {
    const list = await get(`${root()}/subscriptions/content?contentType=Audit.SharePoint`);
    const blob = await get(`${list.json[0].contentUri}?PublisherIdentifier=${PUB}`);
    expect(blob.status).toBe(200);
    expect(blob.headers['content-type']).toMatch(/^application\/json/);
    expect(Array.isArray(blob.json)).toBe(true);
    for (const r of blob.json) {
      expect(r.Id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(r.CreationTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      expect(r).toMatchObject({ RecordType: 6, OrganizationId: tenant.id, UserType: 0 });
      expect(typeof r.UserKey).toBe('string');
      expect(typeof r.UserId).toBe('string');
      expect(typeof r.ClientIP).toBe('string');
      expect(r.ObjectId).toBe(`${r.SiteUrl}${r.SourceRelativeUrl}/${r.SourceFileName}`);
    }
    const id = list.json[0].contentId as string;
    const unknown = id.replace(/^\d{4}/, '2019');
    expect((await get(`${root()}/audit/${unknown}`)).json.error).toEqual({ code: 'AF20050', message: `The specified content (${unknown}) does not exist.` });
    expect((await get(`${root()}/audit/not-a-content-id`)).json.error).toEqual({
      code: 'AF20052',
      message: 'Content ID not-a-content-id in the URL is invalid.',
    });
  });

  it('a blob exists only once the clock reaches contentCreated and expires 7 days later (AF20051)', async () => {
    const created = Date.parse(NOW) + HOUR;
    const [added] = emu.control.addAuditRecords(tenant.id, 'Audit.General', [{ RecordType: 20, Operation: 'ViewReport', UserId: 'a@b' }], {
      contentCreated: new Date(created).toISOString(),
    });
    const uri = `${root()}/audit/${added!.contentId}`;
    const window = `startTime=2025-06-10T12:00&endTime=2025-06-10T14:00`;
    const listed = async () =>
      (await get(`${root()}/subscriptions/content?contentType=Audit.General&${window}`)).json.map((i: { contentId: string }) => i.contentId);
    expect(await listed()).not.toContain(added!.contentId);
    expect((await get(uri)).json.error.code).toBe('AF20050');
    emu.control.advanceClock(2 * 3600);
    expect(await listed()).toContain(added!.contentId);
    expect((await get(uri)).json).toHaveLength(1);
    emu.control.setClock(new Date(created + 7 * 24 * HOUR - 1000).toISOString());
    expect((await get(uri)).status).toBe(200);
    emu.control.advanceClock(1);
    const expired = await get(uri);
    expect(expired.status).toBe(400);
    expect(expired.json).toEqual({
      error: {
        code: 'AF20051',
        message: `Content requested with the key ${added!.contentId} has already expired. Content older than 7 days cannot be retrieved.`,
      },
    });
  });

  it('generated blobs expire on the clock too', async () => {
    const list = await get(`${root()}/subscriptions/content?contentType=Audit.Exchange`);
    const item = list.json[0];
    emu.control.setClock(item.contentExpiration);
    const res = await get(item.contentUri);
    expect(res.json.error.code).toBe('AF20051');
  });
});

describe('feed data and ground truth', () => {
  beforeAll(() => {
    for (const ct of CONTENT_TYPES) emu.control.startSubscription(tenant.id, ct);
  });

  it('a full collection of a window equals the ground truth: unique ids per content type, duplicates by design', async () => {
    emu.control.setClock(NOW);
    emu.control.configureFeed(tenant.id, { recordsPerHour: 600, duplicateShare: 0.1, blobSize: 25, pageSize: 40 });
    const window = { from: '2025-06-09T18:00:00.000Z', to: '2025-06-10T06:00:00.000Z' };
    const truth = emu.control.auditGroundTruth(tenant.id, window);
    let records = 0;
    for (const ct of CONTENT_TYPES) {
      const { items } = await listAll(ct, 'startTime=2025-06-09T18:00:00&endTime=2025-06-10T06:00:00');
      const ids: string[] = [];
      for (const item of items) {
        const res = await get(`${item.contentUri}?PublisherIdentifier=${PUB}`);
        expect(res.json.length).toBeLessThanOrEqual(25);
        ids.push(...res.json.map((r: { Id: string }) => r.Id));
      }
      records += ids.length;
      const t = truth.contentTypes[ct];
      expect(new Set(ids).size, ct).toBe(t.unique);
      expect(ids.length, ct).toBe(t.records);
      expect(items.length, ct).toBe(t.blobs);
      expect(new Set(ids)).toEqual(new Set(t.ids));
    }
    expect(records).toBe(truth.total.records);
    expect(truth.total.duplicates).toBeGreaterThan(0);
    expect(truth.total.records - truth.total.unique).toBe(truth.total.duplicates);
    expect(Object.values(truth.byRecordType).reduce((a, b) => a + b, 0)).toBe(truth.total.unique);
    emu.control.configureFeed(tenant.id, { recordsPerHour: 120, duplicateShare: 0.02, blobSize: 200, pageSize: 200 });
  });

  it('ground truth separates lost (expired) and pending content', () => {
    emu.control.setClock(NOW);
    const window = { from: '2025-06-03T13:00:00Z', to: '2025-06-04T00:00:00Z' };
    const before = emu.control.auditGroundTruth(tenant.id, { ...window, includeIds: false });
    expect(before.total.expiredUnique).toBe(0);
    expect(before.contentTypes['Audit.General'].ids).toBeUndefined();
    emu.control.setClock('2025-06-10T18:00:00Z');
    const later = emu.control.auditGroundTruth(tenant.id, { ...window, includeIds: false });
    expect(later.total.expiredUnique).toBeGreaterThan(0);
    expect(later.total.unique + later.total.expiredUnique).toBe(before.total.unique);
    emu.control.setClock('2025-06-03T20:00:00Z');
    const early = emu.control.auditGroundTruth(tenant.id, { ...window, includeIds: false });
    expect(early.total.pendingUnique).toBeGreaterThan(0);
    expect(early.total.unique + early.total.pendingUnique).toBe(before.total.unique);
  });

  it('is deterministic: the same tenant and seed give the same blobs in another emulator', async () => {
    const twin = await startEmulator({ tenants: [generateTenant({ seed: 'feed', sizes: { users: 40, guests: 6, environments: 3, agents: 10 } })] });
    try {
      twin.control.setClock(NOW);
      twin.control.startSubscription(tenant.id, 'Audit.General');
      const c2 = emulatorClient(twin);
      const t2 = (await twin.control.mintToken({ tenantId: tenant.id, resource: 'https://manage.office.com', kind: 'app' })).access_token;
      emu.control.setClock(NOW);
      const a = await get(`${root()}/subscriptions/content?contentType=Audit.General&startTime=2025-06-10T00:00&endTime=2025-06-10T06:00`);
      const b = await c2.get(`${root()}/subscriptions/content?contentType=Audit.General&startTime=2025-06-10T00:00&endTime=2025-06-10T06:00`, { token: t2 });
      expect(b.json.map((i: { contentId: string }) => i.contentId)).toEqual(a.json.map((i: { contentId: string }) => i.contentId));
      const blobA = await get(a.json[3].contentUri);
      const blobB = await c2.get(b.json[3].contentUri, { token: t2 });
      expect(blobB.text).toBe(blobA.text);
      await c2.close();
    } finally {
      await twin.close();
    }
  });

  it('planted records are served as given and counted by the ground truth', async () => {
    emu.control.setClock(NOW);
    const positive = {
      RecordType: 256,
      Operation: 'BotUpdateOperation-BotAuthUpdate',
      Workload: 'PowerPlatform',
      UserId: 'mallory@x',
      PropertyCollection: [
        {
          Name: 'powerplatform.analytics.resource.bot.update_details.change',
          Value: '[{"PropertyName":"AuthenticationMode","OldValue":"Integrated","NewValue":"None"}]',
        },
      ],
    };
    const nearMiss = {
      ...positive,
      PropertyCollection: [
        {
          Name: 'powerplatform.analytics.resource.bot.update_details.change',
          Value: '[{"PropertyName":"AuthenticationMode","OldValue":"None","NewValue":"Integrated"}]',
        },
      ],
    };
    const added = emu.control.addAuditRecords(tenant.id, 'Audit.General', [positive, nearMiss], { contentCreated: '2025-06-10T11:00:00Z' });
    expect(added).toHaveLength(1);
    const blob = await get(`${root()}/audit/${added[0]!.contentId}`);
    expect(blob.json).toHaveLength(2);
    expect(blob.json[0]).toMatchObject(positive);
    expect(blob.json[0].Id).toBe(added[0]!.ids[0]);
    expect(blob.json[0].OrganizationId).toBe(tenant.id);
    expect(blob.json[0].CreationTime).toBe('2025-06-10T10:15:00');
    const truth = emu.control.auditGroundTruth(tenant.id, { from: '2025-06-10T11:00:00Z', to: '2025-06-10T11:00:01Z' });
    expect(truth.contentTypes['Audit.General'].ids).toEqual(expect.arrayContaining(added[0]!.ids));
    expect(truth.byOperation['BotUpdateOperation-BotAuthUpdate']).toBeGreaterThanOrEqual(2);
  });
});

describe('PublisherIdentifier and throttling', () => {
  it('records PublisherIdentifier in the request log and counts requests without it', async () => {
    emu.control.resetPublisherStats();
    emu.control.resetLog();
    await get(`${root()}/subscriptions/list?PublisherIdentifier=${PUB}`);
    await get(`${root()}/subscriptions/list`);
    await get(`${root()}/subscriptions/list?publisheridentifier=${PUB}`);
    expect(emu.control.feedRequestsWithoutPublisherIdentifier()).toBe(1);
    expect(emu.control.publisherStats()).toEqual({ total: 3, withoutPublisherIdentifier: 1, byPublisher: { [PUB]: 2 } });
    const log = emu.control.requests({ service: 'managementActivity' });
    expect(log.map((e) => e.publisherIdentifier)).toEqual([PUB, null, PUB]);
    expect(emu.control.requests({ service: 'graph' }).every((e) => !('publisherIdentifier' in e))).toBe(true);
    const counters = await http.get('/_emulator/feed-requests');
    expect(counters.json.withoutPublisherIdentifier).toBe(1);
  });

  it('af429 answers HTTP 403 AF429 naming the method and publisher; other services get a plain 429', async () => {
    emu.control.startSubscription(tenant.id, 'Audit.General');
    emu.control.setFaults({ rate: 1, kinds: ['af429'], services: ['managementActivity', 'graph'] });
    const listing = await get(`${root()}/subscriptions/content?contentType=Audit.General&PublisherIdentifier=${PUB}`);
    expect(listing.status).toBe(403);
    expect(listing.headers['retry-after']).toBeUndefined();
    expect(listing.json).toEqual({ error: { code: 'AF429', message: `Too many requests. Method=ListContent, PublisherId=${PUB}` } });
    const blob = await get(`${root()}/audit/20250610100000000000000$20250610090000000000010$audit_general$Audit_General$emu0004`);
    expect(blob.json.error.message).toBe('Too many requests. Method=GetBlob, PublisherId=00000000-0000-0000-0000-000000000000');
    const graphToken = (await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://graph.microsoft.com', kind: 'app' })).access_token;
    expect((await http.get('/graph/v1.0/users', { token: graphToken })).status).toBe(429);
    expect(emu.control.faults().counters.byKind.af429).toBe(3);
    expect(emu.control.requests({ service: 'managementActivity' }).at(-1)).toMatchObject({ status: 403, fault: 'af429' });
  });
});
