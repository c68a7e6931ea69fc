import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { RESOURCES, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { DEFAULT_LIMITS, identityCost, Throttler, type ThrottleRefusal } from '../../emulator/throttling.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
/** 10 users + guests (S), 100 users (M), 520 users (L). */
let small: Tenant;
let medium: Tenant;
let large: Tenant;
let token: string;

beforeAll(async () => {
  small = generateTenant({ seed: 'thr-s', sizes: { users: 10, guests: 2, groups: 3, environments: 1, agents: 2, teamsAppsPerUser: 2 } });
  medium = generateTenant({ seed: 'thr-m', sizes: { users: 100, guests: 0, groups: 2, environments: 1, agents: 0 } });
  large = generateTenant({ seed: 'thr-l', sizes: { users: 520, guests: 0, groups: 2, environments: 1, agents: 0 } });
  emu = await startEmulator({ tenants: [small, medium, large] });
  http = emulatorClient(emu);
  token = await http.appToken(small, RESOURCES.graph);
});

afterEach(() => {
  emu.control.setThrottling({ enabled: false });
  emu.control.resetThrottlingCounters();
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

/** GETs `path` `n` times in sequence; the statuses. */
async function burst(path: string, n: number, tok = token): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await http.get(path, { token: tok })).status);
  return out;
}

const LONG = 1000; // seconds: a window so long that a burst refills nothing measurable

describe('off by default', () => {
  it('a fresh emulator enforces nothing and counts nothing', async () => {
    const statuses = await burst('/graph/v1.0/users?$top=5', 30);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const state = emu.control.throttling();
    expect(state.enabled).toBe(false);
    expect(state.totals).toEqual({ requests: 0, throttled: 0 });
  });

  it('the defaults are the documented figures', () => {
    const { limits } = emu.control.throttling();
    expect(limits.graphIdentityAppTenant).toEqual({ small: 3500, medium: 5000, large: 8000, windowSeconds: 10 });
    expect(limits.graphIdentityApp).toEqual({ capacity: 150_000, windowSeconds: 20 });
    expect(limits.dataverseUser).toEqual({ capacity: 6000, windowSeconds: 300 });
    expect(limits.dataverseConcurrency).toBe(52);
    expect(limits.managementActivityTenant).toEqual({ capacity: 2000, windowSeconds: 60 });
    expect(limits.powerBiGetInfo).toEqual({ capacity: 500, windowSeconds: 3600 });
  });
});

describe('Graph identity & access (resource units per app + tenant)', () => {
  it('a burst over the limit gets 429 + Retry-After and the throttle headers; within it none', async () => {
    emu.control.setThrottling({ enabled: true, limits: { graphIdentityAppTenant: { small: 20, medium: 40, large: 80, windowSeconds: LONG } } });
    // GET users costs 2 RU: ten fit in 20, the eleventh does not.
    const first = await http.get('/graph/v1.0/users', { token });
    expect(first.status).toBe(200);
    expect(first.headers['x-ms-resource-unit']).toBe('2');
    const rest = await burst('/graph/v1.0/users', 9);
    expect(rest.every((s) => s === 200)).toBe(true);
    expect(emu.control.throttling().totals).toEqual({ requests: 10, throttled: 0 });
    const over = await http.get('/graph/v1.0/users', { token });
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(Number(over.headers['retry-after']))).toBe(true);
    expect(over.json.error.code).toBe('TooManyRequests');
    expect(over.json.error.innerError.status).toBe('429');
    expect(over.headers['x-ms-throttle-scope']).toBe(`Tenant_Application/ReadWrite/${small.apps[0]!.appId.toLowerCase()}/${small.id.toLowerCase()}`);
    expect(over.headers['x-ms-throttle-information']).toBe('ResourceUnitLimitExceeded');
    const state = emu.control.throttling();
    expect(state.totals).toEqual({ requests: 11, throttled: 1 });
    expect(state.byService.graph).toEqual({ requests: 11, throttled: 1 });
    expect(state.buckets.find((b) => b.limit === 'graphIdentityAppTenant')).toMatchObject({ requests: 11, throttled: 1 });
    expect(emu.control.requests().at(-1)).toMatchObject({ status: 429, throttled: true });
  });

  it('$select lowers the cost by 1, $expand raises it, $top < 20 lowers it, never below 1', async () => {
    emu.control.setThrottling({ enabled: true, limits: { graphIdentityAppTenant: { small: 20, medium: 40, large: 80, windowSeconds: LONG } } });
    expect((await http.get('/graph/v1.0/users?$select=id', { token })).headers['x-ms-resource-unit']).toBe('1');
    expect((await http.get('/graph/v1.0/users?$select=id&$top=5', { token })).headers['x-ms-resource-unit']).toBe('1');
    const group = small.groups[0]!.id;
    expect((await http.get(`/graph/v1.0/groups/${group}/members`, { token })).headers['x-ms-resource-unit']).toBe('3');
    expect((await http.get(`/graph/v1.0/groups/${group}/members?$select=id`, { token })).headers['x-ms-resource-unit']).toBe('2');
    expect((await http.get('/graph/v1.0/groups', { token })).headers['x-ms-resource-unit']).toBe('1');
    // 20 − 1 − 1 − 3 − 2 − 1 = 12 RU left: twelve $select'ed user pages pass, the thirteenth does not.
    const statuses = await burst('/graph/v1.0/users?$select=id', 13);
    expect(statuses.slice(0, 12).every((s) => s === 200)).toBe(true);
    expect(statuses[12]).toBe(429);
  });

  it('the app + tenant quota follows the tenant size: S < 50 users, M 50–500, L > 500', async () => {
    expect(small.users.length).toBeLessThan(50);
    expect(medium.users.length).toBeGreaterThanOrEqual(50);
    expect(medium.users.length).toBeLessThanOrEqual(500);
    expect(large.users.length).toBeGreaterThan(500);
    emu.control.setThrottling({ enabled: true, limits: { graphIdentityAppTenant: { small: 7, medium: 11, large: 15, windowSeconds: LONG } } });
    const admitted = async (t: Tenant): Promise<number> => {
      const tok = await http.appToken(t, RESOURCES.graph);
      const statuses = await burst('/graph/v1.0/users?$select=id', 20, tok);
      return statuses.indexOf(429);
    };
    expect(await admitted(small)).toBe(7);
    expect(await admitted(medium)).toBe(11);
    expect(await admitted(large)).toBe(15);
  });

  it('a throttled client that waits Retry-After is served again (the bucket refills)', async () => {
    emu.control.setThrottling({ enabled: true, limits: { graphIdentityAppTenant: { small: 4, medium: 4, large: 4, windowSeconds: 2 } } });
    const statuses = await burst('/graph/v1.0/users?$select=id', 10);
    const over = statuses.indexOf(429);
    expect(over).toBeGreaterThanOrEqual(4);
    const refused = await http.get('/graph/v1.0/users?$select=id', { token });
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBe(1);
    await new Promise((r) => setTimeout(r, wait * 1000));
    expect((await http.get('/graph/v1.0/users?$select=id', { token })).status).toBe(200);
  });

  it('scale shrinks every capacity (0.01 of 3,500 RU = 35 for a small tenant)', async () => {
    emu.control.setThrottling({
      enabled: true,
      scale: 0.01,
      limits: { graphIdentityAppTenant: { ...DEFAULT_LIMITS.graphIdentityAppTenant, windowSeconds: LONG } },
    });
    const statuses = await burst('/graph/v1.0/users?$select=id', 40);
    expect(statuses.indexOf(429)).toBe(35);
  });
});

describe('Graph Teams (installedApps per app per tenant)', () => {
  it('installedApps has its own bucket: over it 429, identity requests unaffected', async () => {
    emu.control.setThrottling({ enabled: true, limits: { teamsGetAppTenant: { capacity: 5, windowSeconds: LONG } } });
    const user = small.users[0]!.id;
    const statuses = await burst(`/graph/v1.0/users/${user}/teamwork/installedApps`, 6);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await http.get('/graph/v1.0/users?$select=id', { token })).status).toBe(200);
    const state = emu.control.throttling();
    expect(state.byLimit.teamsGetAppTenant).toEqual({ requests: 6, throttled: 1 });
    expect(state.byLimit.graphIdentityAppTenant).toEqual({ requests: 1, throttled: 0 });
  });
});

describe('Graph $batch', () => {
  it('each inner request is charged on its own: inner 429 with Retry-After, outer 200', async () => {
    emu.control.setThrottling({
      enabled: true,
      limits: { graphIdentityAppTenant: { small: 4, medium: 4, large: 4, windowSeconds: LONG }, teamsGetAppTenant: { capacity: 1, windowSeconds: LONG } },
    });
    const user = small.users[0]!.id;
    const requests = [
      ...Array.from({ length: 6 }, (_, i) => ({ id: `u${i}`, method: 'GET', url: '/users?$select=id' })),
      { id: 't0', method: 'GET', url: `/users/${user}/teamwork/installedApps` },
      { id: 't1', method: 'GET', url: `/users/${user}/teamwork/installedApps` },
    ];
    const res = await http.request('POST', '/graph/v1.0/$batch', { token, body: { requests } });
    expect(res.status).toBe(200);
    const byId = new Map<string, { status: number; headers: Record<string, string>; body: { error?: { code: string } } }>(
      (res.json.responses as { id: string; status: number; headers: Record<string, string>; body: { error?: { code: string } } }[]).map((r) => [r.id, r]),
    );
    const users = [0, 1, 2, 3, 4, 5].map((i) => byId.get(`u${i}`)!.status);
    expect(users).toEqual([200, 200, 200, 200, 429, 429]);
    const throttled = byId.get('u4')!;
    expect(Number(throttled.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(throttled.body.error!.code).toBe('TooManyRequests');
    // The Teams inner requests go to the Teams bucket (identity exhausted does not matter; capacity 1 there).
    expect(byId.get('t0')!.status).toBe(200);
    expect(byId.get('t1')!.status).toBe(429);
    const state = emu.control.throttling();
    expect(state.byLimit.graphIdentityAppTenant).toEqual({ requests: 6, throttled: 2 });
    expect(state.byLimit.teamsGetAppTenant).toEqual({ requests: 2, throttled: 1 });
  });
});

describe('control over HTTP', () => {
  it('PUT /_emulator/throttling turns it on, GET reads counters, DELETE /throttling/counters zeroes them; bad input 400', async () => {
    const put = await http.request('PUT', '/_emulator/throttling', {
      body: { enabled: true, limits: { teamsGetAppTenant: { capacity: 1, windowSeconds: LONG } } },
    });
    expect(put.status).toBe(200);
    expect(put.json.enabled).toBe(true);
    const user = small.users[0]!.id;
    expect(await burst(`/graph/v1.0/users/${user}/teamwork/installedApps`, 2)).toEqual([200, 429]);
    const got = await http.get('/_emulator/throttling');
    expect(got.json.totals).toEqual({ requests: 2, throttled: 1 });
    expect((await http.request('DELETE', '/_emulator/throttling/counters')).status).toBe(204);
    expect((await http.get('/_emulator/throttling')).json.totals).toEqual({ requests: 0, throttled: 0 });
    expect((await http.request('PUT', '/_emulator/throttling', { body: { enabled: true, scale: 0 } })).status).toBe(400);
    expect((await http.request('PUT', '/_emulator/throttling', { body: { enabled: true, limits: { nope: 1 } } })).status).toBe(400);
    expect((await http.request('PUT', '/_emulator/throttling', { body: { scale: 1 } })).status).toBe(400);
  });
});

describe('Throttler (in process, fake clock)', () => {
  const app = 'app-1';
  const mk = (users = 10) => {
    let now = 0;
    const t = new Throttler(
      () => users,
      () => now,
    );
    return { t, advance: (ms: number) => void (now += ms) };
  };
  const graph = (tid: string, url: string, method = 'GET') => ({ service: 'graph' as const, method, url, claims: { tid, appId: app, oid: 'o' } });

  it('identity costs follow the documented table', () => {
    const q = (s = '') => new URLSearchParams(s);
    expect(identityCost('GET', 'users', q())).toEqual({ ru: 2, write: 0 });
    expect(identityCost('GET', 'users/delta', q('$select=id'))).toEqual({ ru: 1, write: 0 });
    expect(identityCost('GET', 'groups/g/transitiveMembers', q('$top=10'))).toEqual({ ru: 4, write: 0 });
    expect(identityCost('GET', 'applications', q('$expand=owners'))).toEqual({ ru: 3, write: 0 });
    expect(identityCost('GET', 'servicePrincipals/x/appRoleAssignments', q())).toEqual({ ru: 2, write: 0 });
    expect(identityCost('POST', 'directoryObjects/getByIds', q())).toEqual({ ru: 3, write: 0 });
    expect(identityCost('PATCH', 'users/u', q())).toEqual({ ru: 1, write: 1 });
  });

  it('Teams GETs of one app share the across-tenants bucket', () => {
    const { t } = mk();
    t.set({ enabled: true, limits: { teamsGetAppTenant: { capacity: 5, windowSeconds: 10 }, teamsGetApp: { capacity: 8, windowSeconds: 10 } } });
    const path = '/graph/v1.0/users/u/teamwork/installedApps';
    for (let i = 0; i < 5; i++) expect(t.admit(graph('t1', path))).not.toHaveProperty('limit');
    expect(t.admit(graph('t1', path))).toMatchObject({ limit: 'teamsGetAppTenant' });
    for (let i = 0; i < 3; i++) expect(t.admit(graph('t2', path))).not.toHaveProperty('limit');
    expect(t.admit(graph('t2', path))).toMatchObject({ limit: 'teamsGetApp', key: app });
  });

  it('Retry-After is the time until the bucket holds the cost; refusals consume nothing', () => {
    const { t, advance } = mk();
    t.set({ enabled: true, limits: { graphIdentityAppTenant: { small: 10, medium: 10, large: 10, windowSeconds: 10 } } });
    for (let i = 0; i < 5; i++) t.admit(graph('t1', '/graph/v1.0/users'));
    const r = t.admit(graph('t1', '/graph/v1.0/users')) as ThrottleRefusal;
    expect(r.retryAfterSeconds).toBe(2); // 2 RU at 1 RU/s
    advance(1000);
    expect(t.admit(graph('t1', '/graph/v1.0/users'))).toHaveProperty('limit'); // 1 RU only
    advance(1000);
    expect(t.admit(graph('t1', '/graph/v1.0/users'))).not.toHaveProperty('limit');
  });

  it('identity writes are charged to the write quotas too', () => {
    const { t } = mk();
    t.set({ enabled: true, limits: { graphIdentityWriteTenant: { capacity: 2, windowSeconds: 300 } } });
    expect(t.admit(graph('t1', '/graph/v1.0/users/u', 'PATCH'))).not.toHaveProperty('limit');
    expect(t.admit(graph('t1', '/graph/v1.0/groups/g', 'PATCH'))).not.toHaveProperty('limit');
    const r = t.admit(graph('t1', '/graph/v1.0/users/u', 'PATCH')) as ThrottleRefusal;
    expect(r).toMatchObject({ limit: 'graphIdentityWriteTenant' });
    expect(r.headers['x-ms-throttle-information']).toBe('WriteLimitExceeded');
    expect(t.admit(graph('t1', '/graph/v1.0/users'))).not.toHaveProperty('limit'); // reads still pass
  });

  it('Dataverse concurrency: the 53rd request in flight of one user is refused until one finishes', () => {
    const { t } = mk();
    t.set({ enabled: true });
    const dv = (oid: string) => ({
      service: 'dataverse' as const,
      method: 'GET',
      url: '/dataverse/org1/api/data/v9.2/bots',
      claims: { tid: 't', appId: app, oid },
    });
    const admitted = Array.from({ length: 52 }, () => t.admit(dv('u1')));
    expect(admitted.every((a) => a && !('limit' in a))).toBe(true);
    expect(t.admit(dv('u1'))).toMatchObject({ limit: 'dataverseConcurrency', retryAfterSeconds: 1 });
    expect(t.admit(dv('u2'))).not.toHaveProperty('limit'); // another user
    (admitted[0] as { release: () => void }).release();
    expect(t.admit(dv('u1'))).not.toHaveProperty('limit');
  });

  it('not enforced when off, or without a token', () => {
    const { t } = mk();
    expect(t.admit(graph('t1', '/graph/v1.0/users'))).toBeNull();
    t.set({ enabled: true });
    expect(t.admit({ service: 'graph', method: 'GET', url: '/graph/v1.0/users', claims: null })).toBeNull();
  });
});
