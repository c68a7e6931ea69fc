import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type FaultKind, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let graphToken: string;

beforeAll(async () => {
  tenant = generateTenant({ seed: 5, sizes: { users: 30 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  const app = tenant.apps[0]!;
  graphToken = (await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value })).json.access_token;
});

afterEach(() => {
  emu.control.clearFaults();
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const USERS = '/graph/v1.0/users?$top=20';

describe('fault kinds', () => {
  it.each([
    ['429', 429, /^1$/],
    ['429-fractional', 429, /^0\.\d{2}$/],
    ['429-no-retry-after', 429, null],
    ['503', 503, /^1$/],
  ] as [FaultKind, number, RegExp | null][])('%s answers %i with the expected Retry-After', async (kind, status, retryAfter) => {
    emu.control.setFaults({ rate: 1, kinds: [kind], seed: 3 });
    const res = await http.get(USERS, { token: graphToken });
    expect(res.status).toBe(status);
    if (retryAfter) expect(String(res.headers['retry-after'])).toMatch(retryAfter);
    else expect(res.headers['retry-after']).toBeUndefined();
    expect(res.json.error.code).toBe(status === 429 ? 'TooManyRequests' : 'serviceNotAvailable');
    const last = emu.control.requests().at(-1)!;
    expect(last).toMatchObject({ method: 'GET', service: 'graph', status, fault: kind });
  });

  it('reset destroys the connection without a response', async () => {
    emu.control.setFaults({ rate: 1, kinds: ['reset'] });
    await expect(http.get(USERS, { token: graphToken })).rejects.toThrow();
    expect(emu.control.requests().at(-1)).toMatchObject({ status: 0, fault: 'reset', service: 'graph' });
  });

  it('truncate sends the full Content-Length, half the body, then closes', async () => {
    emu.control.clearFaults();
    const full = await http.get(USERS, { token: graphToken });
    emu.control.setFaults({ rate: 1, kinds: ['truncate'] });
    const res = await request(`${emu.url}${USERS}`, { dispatcher: http.dispatcher, headers: { authorization: `Bearer ${graphToken}` } });
    expect(res.statusCode).toBe(200);
    const declared = Number(res.headers['content-length']);
    expect(declared).toBeGreaterThan(100);
    expect(declared).toBe(Buffer.byteLength(full.text));
    await expect(res.body.text()).rejects.toThrow();
    expect(emu.control.requests().at(-1)).toMatchObject({ fault: 'truncate', service: 'graph' });
  });

  it('Dataverse and identity faults use their own bodies; identity is opt-in', async () => {
    const app = tenant.apps[0]!;
    emu.control.setFaults({ rate: 1, kinds: ['429'] });
    const token = await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value });
    expect(token.status).toBe(200); // identity not in the default services

    const org = tenant.environments[0]!.dataverse!;
    const dv = await http.get(`/dataverse/${org.uniqueName}/api/data/v9.2/bots`, { token: 'x' });
    expect(dv.status).toBe(429);
    expect(dv.json.error.code).toBe('0x80072322');

    emu.control.setFaults({ rate: 1, kinds: ['503'], services: ['identity'] });
    const idf = await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value });
    expect(idf.status).toBe(503);
    expect(idf.json.error).toBe('temporarily_unavailable');
    expect((await http.get(USERS, { token: graphToken })).status).toBe(200);
  });
});

describe('fault selection', () => {
  it('fails the chosen share of responses, deterministically from the seed, and counts them', async () => {
    const run = async (): Promise<number[]> => {
      emu.control.setFaults({ rate: 0.3, kinds: ['429', '503'], seed: 'abc' });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await http.get(USERS, { token: graphToken })).status);
      return statuses;
    };
    emu.control.resetFaultCounters();
    const a = await run();
    const b = await run();
    expect(a).toEqual(b);
    const failed = a.filter((s) => s !== 200).length;
    expect(failed).toBeGreaterThan(4);
    expect(failed).toBeLessThan(24);
    const { counters } = emu.control.faults();
    expect(counters.total).toBe(failed * 2);
    expect(counters.byService.graph).toBe(failed * 2);
    expect(counters.byKind['429'] + counters.byKind['503']).toBe(failed * 2);
  });

  it('is configurable over the HTTP control API', async () => {
    const put = await http.request('PUT', '/_emulator/faults', {
      body: { rate: 1, kinds: ['429-fractional'], services: ['graph'], maxRetryAfterSeconds: 0.2 },
    });
    expect(put.status).toBe(200);
    const res = await http.get(USERS, { token: graphToken });
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(0.2);
    expect((await http.request('DELETE', '/_emulator/faults')).status).toBe(204);
    expect((await http.get(USERS, { token: graphToken })).status).toBe(200);
    const bad = await http.request('PUT', '/_emulator/faults', { body: { rate: 2 } });
    expect(bad.status).toBe(400);
  });
});
