import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant, groundTruth } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let big: Tenant;
let step: Tenant;
let bare: Tenant;

beforeAll(async () => {
  big = generateTenant({ seed: 1, sizes: { users: 1400, guests: 100, groups: 15, environments: 1, agents: 0 } });
  step = generateTenant({ seed: 2, permissions: 'step-by-step', sizes: { users: 30 } });
  bare = generateTenant({ seed: 3, permissions: ['ActivityFeed.Read'], sizes: { users: 10 } });
  emu = await startEmulator({ tenants: [big, step, bare] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const graphToken = (t: Tenant) => http.appToken(t, 'https://graph.microsoft.com');

/** Follows @odata.nextLink until absent; returns all items and the pages fetched. */
const all = (first: string, token: string) => http.pages(first, { token });

describe('Graph users', () => {
  it('pages over 999 with $top and $select, absolute nextLinks and an opaque $skiptoken', async () => {
    const token = await graphToken(big);
    const { items, pages } = await all('/graph/v1.0/users?$top=999&$select=id,displayName,accountEnabled,userType,createdDateTime', token);
    expect(pages).toHaveLength(2);
    expect(items).toHaveLength(1500);
    expect(new Set(items.map((u) => u.id)).size).toBe(1500);
    expect(pages[0]!['@odata.context']).toBe(`${emu.url}/graph/v1.0/$metadata#users(id,displayName,accountEnabled,userType,createdDateTime)`);
    const next = pages[0]!['@odata.nextLink'] as string;
    expect(next.startsWith(`${emu.url}/graph/v1.0/users?`)).toBe(true);
    expect(new URL(next).searchParams.get('$skiptoken')).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Object.keys(items[0]!).sort()).toEqual(['accountEnabled', 'createdDateTime', 'displayName', 'id', 'userType']);
    expect(items.filter((u) => u.userType === 'Guest')).toHaveLength(100);
    expect(items.filter((u) => u.accountEnabled === false)).toHaveLength(groundTruth(big).disabledUsers);
  });

  it('returns the documented default property set with a default page of 100', async () => {
    const token = await graphToken(big);
    const res = await http.get('/graph/v1.0/users', { token });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json;odata\.metadata=minimal/);
    expect(res.json.value).toHaveLength(100);
    expect(res.json['@odata.context']).toBe(`${emu.url}/graph/v1.0/$metadata#users`);
    expect(Object.keys(res.json.value[0]).sort()).toEqual(
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
  });

  it('rejects $top above 999 and unknown $select properties', async () => {
    const token = await graphToken(big);
    const top = await http.get('/graph/v1.0/users?$top=1000', { token });
    expect(top.status).toBe(400);
    expect(top.json.error.code).toBe('Request_UnsupportedQuery');
    expect(top.json.error.message).toBe("Invalid page size specified: '1000'. Must be between 1 and 999 inclusive.");
    const sel = await http.get('/graph/v1.0/users?$select=id,shoeSize', { token });
    expect(sel.status).toBe(400);
    expect(sel.json.error.message).toContain("'shoeSize'");
    const skip = await http.get('/graph/v1.0/users?$skiptoken=garbage', { token });
    expect(skip.status).toBe(400);
    expect(skip.json.error.code).toBe('Directory_ExpiredPageToken');
  });
});

describe('Graph groups and members', () => {
  it('lists groups and pages mixed-type members', async () => {
    const token = await graphToken(big);
    const groups = await all(
      '/graph/v1.0/groups?$top=5&$select=id,displayName,groupTypes,securityEnabled,mailEnabled,visibility,mail,description,createdDateTime',
      token,
    );
    expect(groups.items).toHaveLength(15);
    expect(groups.pages).toHaveLength(3);
    let memberships = 0;
    const kinds = new Set<string>();
    for (const g of groups.items) {
      const members = await all(`/graph/v1.0/groups/${g.id as string}/members?$top=999&$select=id,displayName`, token);
      memberships += members.items.length;
      for (const m of members.items) {
        kinds.add(m['@odata.type'] as string);
        expect(m.id).toBeTruthy();
      }
      if (g.displayName === 'All Company') expect(members.pages).toHaveLength(2); // 1400 members
    }
    expect(memberships).toBe(groundTruth(big).memberships);
    expect([...kinds].sort()).toEqual(['#microsoft.graph.device', '#microsoft.graph.group', '#microsoft.graph.servicePrincipal', '#microsoft.graph.user']);
  });

  it('answers an unknown group with 404 Request_ResourceNotFound', async () => {
    const token = await graphToken(big);
    const res = await http.get('/graph/v1.0/groups/00000000-0000-4000-8000-000000000000/members', { token });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('Request_ResourceNotFound');
    expect(res.json.error.innerError['request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('Graph authorization', () => {
  it('accepts step-by-step permissions (User.Read.All + Group.Read.All) for every read', async () => {
    const token = await graphToken(step);
    for (const path of ['/graph/v1.0/users', '/graph/v1.0/groups', `/graph/v1.0/groups/${step.groups[1]!.id}/members`]) {
      expect((await http.get(path, { token })).status).toBe(200);
    }
  });

  it('answers 403 Authorization_RequestDenied without a Graph role', async () => {
    const token = await graphToken(bare);
    for (const path of ['/graph/v1.0/users', '/graph/v1.0/groups', `/graph/v1.0/groups/${bare.groups[0]!.id}/members`]) {
      const res = await http.get(path, { token });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe('Authorization_RequestDenied');
      expect(res.json.error.message).toBe('Insufficient privileges to complete the operation.');
      expect(Object.keys(res.json.error.innerError).sort()).toEqual(['client-request-id', 'date', 'request-id']);
    }
  });

  it('answers 401 InvalidAuthenticationToken for missing, wrong-audience, expired and forged tokens', async () => {
    const missing = await http.get('/graph/v1.0/users');
    expect(missing.status).toBe(401);
    expect(missing.json.error.code).toBe('InvalidAuthenticationToken');

    const app = big.apps[0]!;
    const bap = await http.token({ tenant: big.id, clientId: app.appId, clientSecret: app.secrets[0]!.value, scope: 'https://service.powerapps.com/.default' });
    const wrongAud = await http.get('/graph/v1.0/users', { token: bap.json.access_token });
    expect(wrongAud.status).toBe(401);
    expect(wrongAud.json.error.message).toContain('Invalid audience');

    const expired = await emu.control.mintToken({ tenantId: big.id, kind: 'app', resource: 'https://graph.microsoft.com', expiresInSeconds: -30 });
    const exp = await http.get('/graph/v1.0/users', { token: expired.access_token });
    expect(exp.status).toBe(401);
    expect(exp.json.error.message).toContain('expired');

    const good = await graphToken(big);
    const [h, p] = good.split('.');
    const forged = `${h}.${p}.${'A'.repeat(342)}`;
    expect((await http.get('/graph/v1.0/users', { token: forged })).status).toBe(401);
  });
});
