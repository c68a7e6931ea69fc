import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

type Json = Record<string, unknown>;

let emu: RunningEmulator;
let http: EmulatorClient;
/** One tenant per scenario, so one test's changes never show in another's delta rounds. */
let users: Tenant;
let groups: Tenant;
let select: Tenant;
let expiring: Tenant;
let usersOnly: Tenant;
let bare: Tenant;

beforeAll(async () => {
  users = generateTenant({ seed: 41, sizes: { users: 20, guests: 3, groups: 3, environments: 1, agents: 0 } });
  groups = generateTenant({ seed: 42, sizes: { users: 10, guests: 1, groups: 9, environments: 1, agents: 0 } });
  select = generateTenant({ seed: 43, sizes: { users: 12, guests: 2, groups: 3, environments: 1, agents: 0 } });
  expiring = generateTenant({ seed: 44, sizes: { users: 8, guests: 1, groups: 3, environments: 1, agents: 0 } });
  usersOnly = generateTenant({ seed: 45, permissions: ['User.Read.All'], sizes: { users: 6, groups: 2 } });
  bare = generateTenant({ seed: 46, permissions: ['ActivityFeed.Read'], sizes: { users: 6, groups: 2 } });
  emu = await startEmulator({ tenants: [users, groups, select, expiring, usersOnly, bare] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const graphToken = (t: Tenant) => http.appToken(t, 'https://graph.microsoft.com');

interface Round {
  items: Json[];
  pages: Json[];
  deltaLink: string;
}

/**
 * Follows a delta round to its end: every page but the last has a nextLink and no deltaLink, the last a deltaLink
 * and no nextLink.
 */
async function round(first: string, token: string, headers: Record<string, string> = {}): Promise<Round> {
  const items: Json[] = [];
  const pages: Json[] = [];
  let url: string = first;
  for (;;) {
    const res = await http.get(url, { token, headers });
    expect(res.status).toBe(200);
    pages.push(res.json);
    items.push(...(res.json.value as Json[]));
    const next = res.json['@odata.nextLink'] as string | undefined;
    const delta = res.json['@odata.deltaLink'] as string | undefined;
    expect(next === undefined).not.toBe(delta === undefined);
    if (delta !== undefined) return { items, pages, deltaLink: delta };
    url = next!;
    expect(pages.length).toBeLessThan(1000);
  }
}

const ids = (items: Json[]): string[] => items.map((i) => i.id as string).sort();

describe('users/delta', () => {
  it('initial round: every user exactly once across $top pages, absolute links, a final deltaLink', async () => {
    const token = await graphToken(users);
    const r = await round('/graph/v1.0/users/delta?$top=5', token);
    const live = users.users.map((u) => u.id).sort();
    expect(live).toHaveLength(23);
    expect(ids(r.items)).toEqual(live);
    expect(r.pages).toHaveLength(5);
    expect(r.pages.slice(0, -1).every((p) => (p.value as Json[]).length === 5)).toBe(true);
    const next = r.pages[0]!['@odata.nextLink'] as string;
    expect(next.startsWith(`${emu.url}/graph/v1.0/users/delta?$skiptoken=`)).toBe(true);
    expect([...new URL(next).searchParams.keys()]).toEqual(['$skiptoken']); // $top travels inside the token
    expect(r.deltaLink.startsWith(`${emu.url}/graph/v1.0/users/delta?$deltatoken=`)).toBe(true);
    expect([...new URL(r.deltaLink).searchParams.keys()]).toEqual(['$deltatoken']);
    expect(r.pages[0]!['@odata.context']).toBe(`${emu.url}/graph/v1.0/$metadata#users`);
    expect(Object.keys(r.items[0]!).sort()).toEqual(
      [
        'businessPhones',
        'displayName',
        'givenName',
        'id',
        'jobTitle',
        'mail',
        'mobilePhone',
        'officeLocation',
        'preferredLanguage',
        'surname',
        'userPrincipalName',
      ].sort(),
    );
    expect(r.items.some((i) => '@removed' in i)).toBe(false);
  });

  it('a deltaLink returns exactly the added, updated and removed users, then an unchanged round is empty', async () => {
    const token = await graphToken(users);
    const initial = await round('/graph/v1.0/users/delta?$top=5', token);

    const added = emu.control.add(users.id, 'users', { userPrincipalName: `delta.hire@${users.domains[0]}`, displayName: 'Delta Hire' }) as { id: string };
    const updated = users.users[3]!;
    emu.control.update(users.id, 'users', updated.id, { displayName: 'Renamed Person', jobTitle: 'Lead' });
    const removed = users.users[7]!;
    emu.control.remove(users.id, 'users', removed.id);

    const changes = await round(initial.deltaLink, token);
    expect(changes.pages).toHaveLength(1);
    expect(ids(changes.items)).toEqual([added.id, updated.id, removed.id].sort());
    const byId = new Map(changes.items.map((i) => [i.id as string, i]));
    expect(byId.get(removed.id)).toEqual({ id: removed.id, '@removed': { reason: 'deleted' } });
    expect(byId.get(added.id)).toMatchObject({ displayName: 'Delta Hire', userPrincipalName: `delta.hire@${users.domains[0]}` });
    expect(byId.get(updated.id)).toMatchObject({ displayName: 'Renamed Person', jobTitle: 'Lead' });
    expect(changes.deltaLink).not.toBe(initial.deltaLink);
    expect(changes.deltaLink.startsWith(`${emu.url}/graph/v1.0/users/delta?$deltatoken=`)).toBe(true);

    const quiet = await http.get(changes.deltaLink, { token });
    expect(quiet.status).toBe(200);
    expect(quiet.json.value).toEqual([]);
    expect(quiet.json['@odata.nextLink']).toBeUndefined();
    expect(quiet.json['@odata.deltaLink']).toMatch(/\/graph\/v1\.0\/users\/delta\?\$deltatoken=/);

    // The old deltaLink still works and still sees the same changes (a later state is not forced on it).
    expect(ids((await round(initial.deltaLink, token)).items)).toEqual([added.id, updated.id, removed.id].sort());
  });

  it('pages a change round with the initial $top, and a change made during the round comes in the next one', async () => {
    const token = await graphToken(users);
    const initial = await round('/graph/v1.0/users/delta?$top=2', token);
    const touched = users.users.slice(0, 7).map((u) => u.id);
    for (const id of touched) emu.control.update(users.id, 'users', id, { officeLocation: 'Building 7' });

    const first = await http.get(initial.deltaLink, { token });
    expect(first.json.value).toHaveLength(2);
    const next = first.json['@odata.nextLink'] as string;
    expect(next.startsWith(`${emu.url}/graph/v1.0/users/delta?$skiptoken=`)).toBe(true);
    const early = first.json.value[0].id as string;
    emu.control.update(users.id, 'users', early, { officeLocation: 'Building 8' }); // after it was delivered

    const rest = await round(next, token);
    const all = [...(first.json.value as Json[]), ...rest.items];
    expect(ids(all)).toEqual([...touched].sort());
    expect(rest.pages).toHaveLength(3); // 2 + 2 + 2 + 1
    expect(all.every((u) => u.officeLocation === 'Building 7' || u.id === early)).toBe(true);

    const after = await round(rest.deltaLink, token);
    expect(after.items).toHaveLength(1);
    expect(after.items[0]).toMatchObject({ id: early, officeLocation: 'Building 8' });
  });

  it('is served under beta and honours Prefer: odata.maxpagesize', async () => {
    const token = await graphToken(users);
    const r = await round('/graph/beta/users/delta', token, { prefer: 'odata.maxpagesize=10' });
    expect(ids(r.items)).toEqual(users.users.map((u) => u.id).sort());
    expect(r.pages).toHaveLength(Math.ceil(users.users.length / 10));
    expect(r.deltaLink.startsWith(`${emu.url}/graph/beta/users/delta?$deltatoken=`)).toBe(true);
    const res = await http.get('/graph/beta/users/delta', { token, headers: { prefer: 'odata.maxpagesize=4' } });
    expect(res.headers['preference-applied']).toBe('odata.maxpagesize=4');
    expect(res.json.value).toHaveLength(4);
  });
});

describe('groups/delta', () => {
  it('initial round lists every group once; a deltaLink returns the added, updated and removed groups', async () => {
    const token = await graphToken(groups);
    const initial = await round('/graph/v1.0/groups/delta?$top=4', token);
    expect(ids(initial.items)).toEqual(groups.groups.map((g) => g.id).sort());
    expect(initial.pages).toHaveLength(Math.ceil(groups.groups.length / 4));
    expect(initial.pages[0]!['@odata.nextLink']).toMatch(new RegExp(`^${emu.url.replace(/[.]/g, '\\.')}/graph/v1\\.0/groups/delta\\?\\$skiptoken=`));
    expect(initial.deltaLink.startsWith(`${emu.url}/graph/v1.0/groups/delta?$deltatoken=`)).toBe(true);

    const added = emu.control.add(groups.id, 'groups', { displayName: 'Delta Group' }) as { id: string };
    const removed = groups.groups[2]!;
    emu.control.remove(groups.id, 'groups', removed.id);
    const renamed = groups.groups[0]!;
    emu.control.update(groups.id, 'groups', renamed.id, { description: 'changed' });
    // Membership changes are not group changes here (members are read per group).
    emu.control.add(groups.id, 'memberships', { groupId: added.id, memberId: groups.users[0]!.id });

    const changes = await round(initial.deltaLink, token);
    expect(ids(changes.items)).toEqual([added.id, removed.id, renamed.id].sort());
    const byId = new Map(changes.items.map((i) => [i.id as string, i]));
    expect(byId.get(removed.id)).toEqual({ id: removed.id, '@removed': { reason: 'deleted' } });
    expect(byId.get(added.id)).toMatchObject({ displayName: 'Delta Group', securityEnabled: true });
    expect(byId.get(renamed.id)).toMatchObject({ description: 'changed' });

    const quiet = await round(changes.deltaLink, token);
    expect(quiet.pages).toHaveLength(1);
    expect(quiet.items).toEqual([]);

    // Users and groups keep separate logs: the users round of this tenant saw none of it.
    const userRound = await round('/graph/v1.0/users/delta', token);
    expect((await round(userRound.deltaLink, token)).items).toEqual([]);
  });
});

describe('control changes', () => {
  it('reads an id patched through control as a removal of the old id and an addition of the new one', async () => {
    const token = await graphToken(groups);
    const initial = await round('/graph/v1.0/users/delta', token);
    const user = groups.users[4]!;
    const oldId = user.id;
    const newId = '0f0f0f0f-0000-4000-8000-000000000001';
    emu.control.update(groups.id, 'users', oldId, { id: newId });
    const changes = await round(initial.deltaLink, token);
    expect(changes.items).toEqual([{ id: oldId, '@removed': { reason: 'deleted' } }, expect.objectContaining({ id: newId, displayName: user.displayName })]);
  });
});

describe('$select', () => {
  it('keeps the initial $select (and $top) inside the tokens, across pages and change rounds; id is always there', async () => {
    const token = await graphToken(select);
    const r = await round('/graph/v1.0/users/delta?$select=displayName,accountEnabled,userType&$top=4', token);
    expect(ids(r.items)).toEqual(select.users.map((u) => u.id).sort());
    expect(r.pages).toHaveLength(4);
    for (const item of r.items) expect(Object.keys(item).sort()).toEqual(['accountEnabled', 'displayName', 'id', 'userType']);
    for (const p of r.pages) expect(p['@odata.context']).toBe(`${emu.url}/graph/v1.0/$metadata#users(displayName,accountEnabled,userType)`);
    for (const p of r.pages.slice(0, -1)) expect([...new URL(p['@odata.nextLink'] as string).searchParams.keys()]).toEqual(['$skiptoken']);

    emu.control.update(select.id, 'users', select.users[0]!.id, { accountEnabled: false });
    const changes = await round(r.deltaLink, token);
    expect(changes.items).toEqual([
      { id: select.users[0]!.id, displayName: select.users[0]!.displayName, accountEnabled: false, userType: select.users[0]!.userType },
    ]);

    const g = await round('/graph/v1.0/groups/delta?$select=id,displayName&$top=2', token);
    expect(g.items).toEqual(select.groups.map((x) => ({ id: x.id, displayName: x.displayName })));
  });

  it('rejects unknown $select properties and unsupported options like the list routes', async () => {
    const token = await graphToken(select);
    const bad = await http.get('/graph/v1.0/users/delta?$select=id,shoeSize', { token });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('Request_BadRequest');
    const top = await http.get('/graph/v1.0/groups/delta?$top=1000', { token });
    expect(top.status).toBe(400);
    expect(top.json.error.code).toBe('Request_UnsupportedQuery');
  });
});

describe('tokens', () => {
  it('after expireDeltaTokens, older deltaLinks and nextLinks answer 410 syncStateNotFound; a new full round works', async () => {
    const token = await graphToken(expiring);
    const done = await round('/graph/v1.0/users/delta', token);
    const midway = (await http.get('/graph/v1.0/groups/delta?$top=1', { token })).json['@odata.nextLink'] as string;
    expect(midway).toBeTruthy();

    emu.control.expireDeltaTokens(expiring.domains[0]!);
    for (const url of [done.deltaLink, midway]) {
      const res = await http.get(url, { token });
      expect(res.status).toBe(410);
      expect(res.json.error.code).toBe('syncStateNotFound');
      expect(res.json.error.message).toBe('The sync state is not found or has expired. Please do a full sync.');
    }

    const fresh = await round('/graph/v1.0/users/delta', token);
    expect(ids(fresh.items)).toEqual(expiring.users.map((u) => u.id).sort());
    expect((await http.get(fresh.deltaLink, { token })).status).toBe(200);

    // Over HTTP: POST /_emulator/delta-tokens/expire {tenant}.
    const ctl = await http.request('POST', '/_emulator/delta-tokens/expire', { body: { tenant: expiring.id } });
    expect(ctl.status).toBe(204);
    expect((await http.get(fresh.deltaLink, { token })).status).toBe(410);
    const unknown = await http.request('POST', '/_emulator/delta-tokens/expire', { body: { tenant: 'nobody.onmicrosoft.com' } });
    expect(unknown.status).toBe(404);
    expect(() => emu.control.expireDeltaTokens('nobody.onmicrosoft.com')).toThrow(/no served tenant/);
  });

  it('answers a malformed or foreign token with 400 BadRequest "Invalid delta token."', async () => {
    const token = await graphToken(expiring);
    const r = await round('/graph/v1.0/users/delta', token);
    const deltatoken = new URL(r.deltaLink).searchParams.get('$deltatoken')!;
    const otherTenant = await round('/graph/v1.0/users/delta', await graphToken(select));
    const cases = [
      '/graph/v1.0/users/delta?$deltatoken=garbage',
      '/graph/v1.0/users/delta?$skiptoken=e30',
      `/graph/v1.0/groups/delta?$deltatoken=${deltatoken}`, // a users token on groups
      `/graph/v1.0/users/delta?$skiptoken=${deltatoken}`, // a deltatoken as a skiptoken
      `/graph/v1.0/users/delta?$deltatoken=${new URL(otherTenant.deltaLink).searchParams.get('$deltatoken')!}`, // another tenant's
    ];
    for (const url of cases) {
      const res = await http.get(url, { token });
      expect(res.status, url).toBe(400);
      expect(res.json.error.code).toBe('BadRequest');
      expect(res.json.error.message).toBe('Invalid delta token.');
    }
  });
});

describe('authorization', () => {
  it('refuses like GET /users and GET /groups: 403 without a role, 401 without a valid token', async () => {
    const token = await graphToken(bare);
    for (const path of ['/graph/v1.0/users', '/graph/v1.0/groups']) {
      const list = await http.get(path, { token });
      const delta = await http.get(`${path}/delta`, { token });
      expect(list.status).toBe(403);
      expect(delta.status).toBe(403);
      expect(delta.json.error.code).toBe(list.json.error.code);
      expect(delta.json.error.message).toBe(list.json.error.message);
      expect(Object.keys(delta.json.error.innerError).sort()).toEqual(['client-request-id', 'date', 'request-id']);
    }

    const partial = await graphToken(usersOnly);
    expect((await http.get('/graph/v1.0/users/delta', { token: partial })).status).toBe(200);
    const noGroups = await http.get('/graph/v1.0/groups/delta', { token: partial });
    expect(noGroups.status).toBe(403);
    expect(noGroups.json.error.code).toBe('Authorization_RequestDenied');

    const missing = await http.get('/graph/v1.0/users/delta');
    expect(missing.status).toBe(401);
    expect(missing.json.error.code).toBe('InvalidAuthenticationToken');
    expect(missing.json.error.message).toBe((await http.get('/graph/v1.0/users')).json.error.message);
  });
});
