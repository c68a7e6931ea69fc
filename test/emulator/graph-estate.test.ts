import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant, groundTruth } from '../../emulator/generate.ts';
import { graphEstateGroundTruth, INSTALLED_APPS_PAGE_SIZE } from '../../emulator/graphestate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

type Json = Record<string, unknown>;

let emu: RunningEmulator;
let http: EmulatorClient;
/** One tenant per scenario, so one test's changes never show in another's delta rounds. */
let members: Tenant;
let estate: Tenant;
let bare: Tenant;

beforeAll(async () => {
  members = generateTenant({ seed: 'estate-members', sizes: { users: 60, guests: 4, groups: 8, environments: 1, agents: 0 } });
  estate = generateTenant({
    seed: 'estate-apps',
    sizes: { users: 30, guests: 3, groups: 2, environments: 1, agents: 0, externalConnections: 4, teamsAppCatalog: 14 },
  });
  bare = generateTenant({
    seed: 'estate-bare',
    permissions: ['User.Read.All', 'GroupMember.Read.All'],
    sizes: { users: 6, groups: 2, environments: 1, agents: 0 },
  });
  emu = await startEmulator({ tenants: [members, estate, bare] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const graphToken = (t: Tenant) => http.appToken(t, 'https://graph.microsoft.com');

/** Follows a delta round to its deltaLink; returns every group object of every page and the deltaLink. */
async function round(first: string, token: string, headers: Record<string, string> = {}): Promise<{ items: Json[]; pages: number; deltaLink: string }> {
  const items: Json[] = [];
  let pages = 0;
  let url = first;
  for (;;) {
    const res = await http.get(url, { token, headers });
    expect(res.status).toBe(200);
    pages++;
    items.push(...(res.json.value as Json[]));
    const next = res.json['@odata.nextLink'] as string | undefined;
    if (!next) return { items, pages, deltaLink: res.json['@odata.deltaLink'] as string };
    url = next;
  }
}

/** `group/member` pairs of members@delta entries, split into added and removed. */
function memberDelta(items: Json[]): { added: string[]; removed: string[]; types: Set<string> } {
  const added: string[] = [];
  const removed: string[] = [];
  const types = new Set<string>();
  for (const g of items) {
    for (const m of (g['members@delta'] ?? []) as Json[]) {
      types.add(m['@odata.type'] as string);
      (m['@removed'] ? removed : added).push(`${g.id as string}/${m.id as string}`);
    }
  }
  return { added: added.sort(), removed: removed.sort(), types };
}

describe('groups/delta with members', () => {
  it('the first round carries every member of every group (large groups split over pages); later rounds only membership changes', async () => {
    const token = await graphToken(members);
    const truth = groundTruth(members);
    // 4 groups per page: at most 20 member entries per page, so "All Company" (60 members) repeats over pages.
    const initial = await round('/graph/v1.0/groups/delta?$select=displayName,members', token, { prefer: 'odata.maxpagesize=4' });
    const first = memberDelta(initial.items);
    expect(first.added).toHaveLength(truth.memberships);
    expect(new Set(first.added).size).toBe(truth.memberships);
    expect(first.removed).toEqual([]);
    const kinds = Object.entries(truth.membershipsByKind)
      .filter(([, n]) => n > 0)
      .map(([k]) => `#microsoft.graph.${k}`);
    expect(first.types).toEqual(new Set(kinds));
    const allCompany = initial.items.filter((g) => g.id === members.groups[0]!.id);
    expect(allCompany.length).toBeGreaterThan(1);
    for (const g of allCompany) expect(g.displayName).toBe(members.groups[0]!.displayName);
    expect(new Set(initial.items.map((g) => g.id))).toEqual(new Set(members.groups.map((g) => g.id)));

    // Unchanged: one page, nothing.
    const quiet = await round(initial.deltaLink, token);
    expect(quiet.pages).toBe(1);
    expect(quiet.items).toEqual([]);

    // A member added, one removed, a user deleted (leaves its groups), a group deleted.
    const ctl = emu.control;
    const [g1, g2, g3] = [members.groups[1]!, members.groups[2]!, members.groups[3]!];
    const newcomer = members.users.find((u) => !members.memberships[g1.id]!.includes(u.id))!;
    ctl.add(members.id, 'memberships', { groupId: g1.id, memberId: newcomer.id });
    const leaving = members.memberships[g2.id]!.find((id) => members.users.some((u) => u.id === id))!;
    ctl.remove(members.id, 'memberships', { groupId: g2.id, memberId: leaving });
    const leaver = members.users.find(
      (u) => u.id !== newcomer.id && u.id !== leaving && Object.values(members.memberships).filter((ids) => ids.includes(u.id)).length >= 2,
    )!;
    const leaverGroups = members.groups.filter((g) => members.memberships[g.id]!.includes(leaver.id) && g.id !== g3.id).map((g) => g.id);
    // A deleted group also leaves the groups it was a member of.
    const containing = members.groups.filter((g) => members.memberships[g.id]!.includes(g3.id)).map((g) => `${g.id}/${g3.id}`);
    ctl.remove(members.id, 'users', leaver.id);
    ctl.remove(members.id, 'groups', g3.id);

    const changes = await round(quiet.deltaLink, token);
    const delta = memberDelta(changes.items);
    expect(delta.added).toEqual([`${g1.id}/${newcomer.id}`]);
    expect(delta.removed).toEqual([`${g2.id}/${leaving}`, ...leaverGroups.map((g) => `${g}/${leaver.id}`), ...containing].sort());
    expect(changes.items.find((g) => g.id === g3.id)).toEqual({ id: g3.id, '@removed': { reason: 'deleted' } });

    // Without members in $select, membership changes are not group changes.
    const plain = await round('/graph/v1.0/groups/delta?$select=displayName', token);
    expect(plain.items.some((g) => 'members@delta' in g)).toBe(false);
    ctl.add(members.id, 'memberships', {
      groupId: g1.id,
      memberId: leaver.id === g1.id ? members.users[1]!.id : members.users.find((u) => !members.memberships[g1.id]!.includes(u.id))!.id,
    });
    expect((await round(plain.deltaLink, token)).items).toEqual([]);
  });
});

describe('$batch', () => {
  const appsUrl = (id: string) => `/users/${id}/teamwork/installedApps?$expand=teamsApp,teamsAppDefinition`;

  it('routes inner requests to the same handlers, answers in any order, 404 inside for an unknown user', async () => {
    const token = await graphToken(estate);
    const users = estate.users.slice(0, 5);
    const requests = [
      ...users.map((u, i) => ({ id: String(i + 1), method: 'GET', url: appsUrl(u.id) })),
      { id: 'gone', method: 'GET', url: appsUrl('00000000-0000-4000-8000-000000000000') },
    ];
    const res = await http.request('POST', '/graph/v1.0/$batch', { token, body: { requests } });
    expect(res.status).toBe(200);
    const responses = res.json.responses as { id: string; status: number; body: Json }[];
    expect(responses.map((r) => r.id).sort()).toEqual(requests.map((r) => r.id).sort());
    expect(responses.map((r) => r.id)).not.toEqual(requests.map((r) => r.id));
    const byId = new Map(responses.map((r) => [r.id, r]));
    expect(byId.get('gone')!.status).toBe(404);
    for (const [i, u] of users.entries()) {
      const r = byId.get(String(i + 1))!;
      expect(r.status).toBe(200);
      const direct = await http.get(`/graph/v1.0${appsUrl(u.id)}`, { token });
      expect(r.body).toEqual(direct.json);
    }
    // The first user has every catalogue app: more than one page, with an absolute nextLink inside the inner body.
    const first = byId.get('1')!.body;
    expect(first.value).toHaveLength(INSTALLED_APPS_PAGE_SIZE);
    expect(first['@odata.nextLink']).toMatch(new RegExp(`^${emu.url.replace(/\./g, '\\.')}/graph/v1\\.0/users/`));
    const item = (first.value as Json[])[0]!;
    expect(item.teamsApp).toMatchObject({ distributionMethod: expect.stringMatching(/^(store|organization|sideloaded)$/) });
    expect(item.teamsAppDefinition).toMatchObject({ version: expect.any(String), publishingState: 'published' });
  });

  it('refuses more than 20 requests, duplicate ids and absolute URLs with 400', async () => {
    const token = await graphToken(estate);
    const many = Array.from({ length: 21 }, (_, i) => ({ id: String(i), method: 'GET', url: appsUrl(estate.users[i]!.id) }));
    const tooMany = await http.request('POST', '/graph/v1.0/$batch', { token, body: { requests: many } });
    expect(tooMany.status).toBe(400);
    expect((tooMany.json.error as Json).code).toBe('BadRequest');
    expect((await http.request('POST', '/graph/v1.0/$batch', { token, body: { requests: many.slice(0, 20) } })).status).toBe(200);
    const dupes = await http.request('POST', '/graph/v1.0/$batch', { token, body: { requests: [many[0], { ...many[1], id: many[0]!.id }] } });
    expect(dupes.status).toBe(400);
    const absolute = await http.request('POST', '/graph/v1.0/$batch', {
      token,
      body: { requests: [{ id: '1', method: 'GET', url: `${emu.url}/graph/v1.0${appsUrl(estate.users[0]!.id)}` }] },
    });
    expect(absolute.status).toBe(400);
  });

  it('throttles inner requests one by one (429 with Retry-After inside a 200) as the fault config says', async () => {
    const token = await graphToken(estate);
    emu.control.setFaults({ rate: 0.5, kinds: ['429-fractional'], seed: 5, services: ['graph'], match: '/installedApps', maxRetryAfterSeconds: 0.5 });
    try {
      const requests = estate.users.slice(0, 20).map((u, i) => ({ id: String(i + 1), method: 'GET', url: appsUrl(u.id) }));
      const res = await http.request('POST', '/graph/v1.0/$batch', { token, body: { requests } });
      expect(res.status).toBe(200);
      const responses = res.json.responses as { status: number; headers: Record<string, string>; body: Json }[];
      const throttled = responses.filter((r) => r.status === 429);
      expect(throttled.length).toBeGreaterThan(0);
      expect(throttled.length).toBeLessThan(20);
      for (const r of throttled) {
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        expect((r.body.error as Json).code).toBe('TooManyRequests');
      }
      expect(emu.control.faults().counters.total).toBe(throttled.length);
    } finally {
      emu.control.clearFaults();
    }
  });
});

describe('external connections and installed apps', () => {
  it('lists external connections in pages; 403 without ExternalConnection.Read.All or TeamsAppInstallation.ReadForUser.All', async () => {
    const token = await graphToken(estate);
    const truth = graphEstateGroundTruth(estate);
    const ids: string[] = [];
    let url = '/graph/v1.0/external/connections?$top=3';
    for (;;) {
      const res = await http.get(url, { token });
      expect(res.status).toBe(200);
      for (const c of res.json.value as Json[]) {
        ids.push(c.id as string);
        expect(c).toMatchObject({ name: expect.any(String), state: expect.any(String), configuration: { authorizedAppIds: expect.any(Array) } });
      }
      if (!res.json['@odata.nextLink']) break;
      url = res.json['@odata.nextLink'] as string;
    }
    expect(ids).toHaveLength(truth.externalConnections);

    const bareToken = await graphToken(bare);
    const denied = await http.get('/graph/v1.0/external/connections', { token: bareToken });
    expect(denied.status).toBe(403);
    expect((denied.json.error as Json).code).toBe('Authorization_RequestDenied');
    expect((await http.get(`/graph/v1.0/users/${bare.users[0]!.id}/teamwork/installedApps`, { token: bareToken })).status).toBe(403);
  });

  it('generates a realistic mix fast for a large tenant (50,000 users, about 100,000 installations)', () => {
    const started = performance.now();
    const big = generateTenant({
      seed: 'estate-big',
      sizes: { users: 50_000, guests: 0, groups: 10, environments: 1, agents: 0, teamsAppsPerUser: 2, teamsAppCatalog: 40 },
    });
    const truth = graphEstateGroundTruth(big);
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(truth.teamsAppInstallations).toBeGreaterThan(80_000);
    expect(truth.teamsAppInstallations).toBeLessThan(120_000);
    for (const n of Object.values(truth.teamsAppInstallationsByMethod)) expect(n).toBeGreaterThan(0);
    // Sideloaded custom agents are few in the catalogue but installed by many users each.
    const agents = big.graphEstate!.teamsApps.filter((a) => a.distributionMethod === 'sideloaded').length;
    expect(truth.teamsAppInstallationsByMethod.sideloaded / agents).toBeGreaterThan(
      truth.teamsAppInstallationsByMethod.store / big.graphEstate!.teamsApps.filter((a) => a.distributionMethod === 'store').length,
    );
  });
});
