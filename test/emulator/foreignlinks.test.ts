import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let graphToken: string;
const EVIL = 'https://127.0.0.2:8443';

beforeAll(async () => {
  tenant = generateTenant({ seed: 7, sizes: { users: 12, guests: 1, groups: 2, environments: 1, agents: 1 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  const app = tenant.apps[0]!;
  graphToken = (await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value })).json.access_token;
});

afterEach(() => emu.control.clearForeignLinks());

afterAll(async () => {
  await http.close();
  await emu.close();
});

describe('foreign-link fault', () => {
  it('puts the link on another origin, keeping its path and skip token, only where the rule says', async () => {
    const plain = await http.get('/graph/v1.0/users?$top=5', { token: graphToken });
    const next = plain.json['@odata.nextLink'] as string;
    expect(next.startsWith(`${emu.url}/graph/v1.0/users`)).toBe(true);

    const res = await http.request('PUT', '/_emulator/foreign-links', {
      body: [{ service: 'graph', field: '@odata.nextLink', origin: EVIL, match: '/users' }],
    });
    expect(res.status).toBe(200);
    const foreign = await http.get('/graph/v1.0/users?$top=5', { token: graphToken });
    expect(foreign.json['@odata.nextLink']).toBe(`${EVIL}${next.slice(emu.url.length)}`);
    // Other paths and other fields are untouched.
    const groups = await http.get('/graph/v1.0/groups?$top=1', { token: graphToken });
    expect(String(groups.json['@odata.nextLink'])).toMatch(new RegExp(`^${emu.url.replace(/\./g, '\\.')}/`));
    expect(emu.control.foreignLinks().counters.byField['@odata.nextLink']).toBe(1);

    emu.control.clearForeignLinks();
    expect((await http.get('/graph/v1.0/users?$top=5', { token: graphToken })).json['@odata.nextLink']).toBe(next);
  });

  it('refuses a rule whose origin has a path or is not http(s)', async () => {
    for (const origin of [`${EVIL}/x`, 'ftp://127.0.0.2', '']) {
      const res = await http.request('PUT', '/_emulator/foreign-links', { body: [{ service: 'graph', field: 'nextLink', origin }] });
      expect(res.status, origin).toBe(400);
    }
    expect(emu.control.foreignLinks().rules).toEqual([]);
  });
});
