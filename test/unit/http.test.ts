import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BudgetCharge, ThrottleBudget } from '../../src/platform/http/budget.ts';
import { HttpClient, parseRetryAfter, UpstreamHttpError } from '../../src/platform/http/client.ts';
import { LinkPolicy } from '../../src/platform/http/links.ts';
import { odataPages } from '../../src/platform/http/odata.ts';
import { silentLogger } from '../../src/platform/log/index.ts';

describe('Retry-After parsing', () => {
  it('reads integer and fractional seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2);
    expect(parseRetryAfter('2.128')).toBe(2.128);
    expect(parseRetryAfter(new Date(Date.now() + 3000).toUTCString())).toBeGreaterThan(1);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('HTTP pipeline', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  let throttledCount = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      if (req.url === '/foreign') return res.end(JSON.stringify({ value: [1], '@odata.nextLink': 'http://evil.example/next' }));
      if (req.url === '/expired') {
        if (req.headers.authorization === 'Bearer fresh') return res.end(JSON.stringify({ ok: true }));
        res.statusCode = 401;
        return res.end(JSON.stringify({ error: { code: 'InvalidAuthenticationToken', message: 'Lifetime validation failed' } }));
      }
      if (req.url?.startsWith('/throttled')) {
        // Throttled 40 times (10 of them without Retry-After), then answered.
        throttledCount++;
        if (throttledCount <= 40) {
          res.statusCode = 429;
          if (throttledCount > 10) res.setHeader('Retry-After', '0.01');
          return res.end(JSON.stringify({ error: { code: 'TooManyRequests' } }));
        }
        return res.end(JSON.stringify({ ok: true }));
      }
      if (req.url === '/split') {
        // A body sent in pieces: a byte order mark first, then "é" and "€" cut between two writes.
        const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ name: 'Zoé €', value: ['x'.repeat(70_000)] }))]);
        const cut = bytes.indexOf(Buffer.from('é')) + 1;
        const cut2 = bytes.indexOf(Buffer.from('€')) + 2;
        res.write(bytes.subarray(0, cut));
        setTimeout(() => {
          res.write(bytes.subarray(cut, cut2));
          setTimeout(() => res.end(bytes.subarray(cut2)), 20);
        }, 20);
        return;
      }
      if (req.url?.startsWith('/denied')) {
        res.statusCode = 403;
        return res.end(JSON.stringify({ error: { code: 'Authorization_RequestDenied', message: 'Insufficient privileges to complete the operation.' } }));
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  // This test's plain-HTTP server is the only Graph host.
  const http = () => new HttpClient({ links: new LinkPolicy({ bases: { graph: [base] } }), logger: silentLogger(), sleepMs: async () => undefined });

  it('never follows a next link to another host with the token', async () => {
    const pages = odataPages(http(), { api: 'graph', url: `${base}/foreign`, token: async () => 'tkn' });
    await expect(pages.next()).rejects.toMatchObject({ code: 'FOREIGN_LINK', message: expect.stringContaining('http://evil.example') });
  });

  it("throttling never fails a request: every 429 penalizes the request's service budget and is waited out", async () => {
    const acquired: BudgetCharge[] = [];
    const penalized: number[] = [];
    const budget: ThrottleBudget = {
      acquire: async (charge) => void acquired.push(charge),
      penalize: async (charge, seconds) => {
        expect(charge).toEqual({ service: 'graphIdentity', tenantId: 'tenant-1', cost: 2 });
        penalized.push(seconds);
        return true;
      },
    };
    const client = new HttpClient({ links: new LinkPolicy({ bases: { graph: [base] } }), logger: silentLogger(), sleepMs: async () => undefined, budget });
    const res = await client.send({ api: 'graph', url: `${base}/throttled`, tenantId: 'tenant-1', service: 'graphIdentity', cost: 2 });
    expect(res.body).toEqual({ ok: true });
    // 40 throttled answers (the pipeline used to give up after 6 + 24), each charged again before it was resent.
    expect(acquired).toHaveLength(41);
    expect(penalized).toHaveLength(40);
    expect(penalized.slice(10).every((s) => s === 0.01)).toBe(true);
    expect(client.statsFor('graph').throttled).toBe(40);
    // Without a tenant there is no budget to charge.
    throttledCount = 0;
    await client.send({ api: 'graph', url: `${base}/throttled` });
    expect(acquired).toHaveLength(41);
  });

  it('charges each Graph request to the service its path belongs to, in its units (outside the directory and Teams: the global limit)', async () => {
    const acquired: BudgetCharge[] = [];
    const budget: ThrottleBudget = { acquire: async (charge) => void acquired.push(charge), penalize: async () => true };
    const client = new HttpClient({ links: new LinkPolicy({ bases: { graph: [base] } }), logger: silentLogger(), sleepMs: async () => undefined, budget });
    const paths = [
      '/v1.0/users?$select=id,displayName',
      '/v1.0/groups/g1/members',
      '/v1.0/servicePrincipals?$top=1',
      '/v1.0/users/u1/teamwork/installedApps',
      '/v1.0/teams/t1/channels',
      '/v1.0/copilot/users/u1/interactionHistory/getAllEnterpriseInteractions',
      '/v1.0/reports/getOffice365ActiveUserDetail(period=%27D7%27)',
      '/v1.0/external/connections',
    ];
    for (const path of paths) await client.send({ api: 'graph', url: `${base}${path}`, tenantId: 'tenant-1' }).catch(() => undefined);
    expect(acquired.map((c) => [c.service, c.cost])).toEqual([
      ['graphIdentity', 1],
      ['graphIdentity', 3],
      ['graphIdentity', 1],
      ['graphTeams', 1],
      ['graphTeams', 1],
      ['graph', 1],
      ['graph', 1],
      ['graph', 1],
    ]);
    // A request that names its service (the outer $batch) keeps it.
    await client.send({ api: 'graph', url: `${base}/v1.0/users`, tenantId: 'tenant-1', service: 'graphTeams', cost: 20 }).catch(() => undefined);
    expect(acquired.at(-1)).toMatchObject({ service: 'graphTeams', cost: 20 });
  });

  it('a throttled wait ends when the signal is aborted', async () => {
    throttledCount = 0;
    const controller = new AbortController();
    const client = new HttpClient({
      links: new LinkPolicy({ bases: { graph: [base] } }),
      logger: silentLogger(),
      sleepMs: async () => controller.abort(new Error('stopped')),
    });
    await expect(client.send({ api: 'graph', url: `${base}/throttled`, signal: controller.signal })).rejects.toThrow('stopped');
  });

  it('reads a body that arrives in pieces as UTF-8, a character cut between pieces whole and a byte order mark dropped', async () => {
    const res = await http().send<{ name: string; value: string[] }>({ api: 'graph', url: `${base}/split` });
    expect(res.body.name).toBe('Zoé €');
    expect(res.body.value[0]).toHaveLength(70_000);
    expect(res.text.startsWith('{"name":"Zoé €"')).toBe(true);
  });

  it('retries a 401 once with a refreshed token', async () => {
    const res = await http().send({ api: 'graph', url: `${base}/expired`, token: async (force) => (force ? 'fresh' : 'stale') });
    expect(res.body).toEqual({ ok: true });
  });

  it('reports a 403 with the upstream code and message, without the token', async () => {
    const err = await http()
      .send({ api: 'graph', url: `${base}/denied?$select=id`, token: async () => 'secret-token' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect(err).toMatchObject({ status: 403, upstreamCode: 'Authorization_RequestDenied', kind: 'authorization' });
    expect(JSON.stringify((err as UpstreamHttpError).toJSON()) + (err as Error).message).not.toContain('secret-token');
    expect((err as Error).message).not.toContain('$select');
  });

  it('names an unreachable host and the setting to check after one retry, not after every backoff', async () => {
    // A port nobody listens on: connection refused. The client would retry other network failures 6 times.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadBase = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const waits: number[] = [];
    const client = new HttpClient({
      links: new LinkPolicy({ bases: { graph: [deadBase] } }),
      logger: silentLogger(),
      sleepMs: async (ms) => void waits.push(ms),
      unreachableHint: (host) => `check VIGIL_ENDPOINTS_FILE for ${host}`,
    });
    const err = await client.send({ api: 'graph', url: `${deadBase}/users` }).catch((e: unknown) => e);
    const host = new URL(deadBase).host;
    expect(err).toMatchObject({
      kind: 'upstream',
      code: 'UPSTREAM_UNREACHABLE',
      remediation: `check VIGIL_ENDPOINTS_FILE for ${host}`,
      detail: { host, api: 'graph', reason: 'ECONNREFUSED' },
    });
    expect((err as Error).message).toContain(`Cannot reach ${host}`);
    expect(waits).toHaveLength(1);
  });
});
