import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_CLOUD } from '../../src/config/cloud.ts';
import { streamContext } from '../../src/integration/index.ts';
import type { ThrottleBudget } from '../../src/platform/http/budget.ts';
import { HttpClient } from '../../src/platform/http/client.ts';
import { LinkPolicy } from '../../src/platform/http/links.ts';
import type { ClientCredentialProvider } from '../../src/platform/identity/index.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { addAppUser } from '../../src/sources/bap/client.ts';
import { assignSystemAdministrator } from '../../src/sources/dataverse/admin.ts';
import { readOneOrNull } from '../../src/sources/powerPlatform/admin.ts';
import { tenantSettingsStream } from '../../src/sources/powerPlatform/streams/tenantSettings.ts';
import { ROOT_SLICE, type StreamContext } from '../../src/sources/stream.ts';

/**
 * A stopped run never sleeps through a throttled wait: every send path of a run's context (the Power Platform admin
 * and Dataverse admin calls the grant sends, stream reads that do not name the signal) ends its budget wait and its
 * Retry-After sleep when the run's signal is aborted, with the signal's reason.
 */

/** A budget spent for good: an acquire only ends when its signal is aborted (never, without a signal). */
const spentBudget: ThrottleBudget = {
  acquire: (_charge, signal) =>
    new Promise((_resolve, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    }),
  penalize: async () => true,
};

const tokens = { tenantId: 'tenant-1', clientId: 'app-1', bearer: () => async () => 'token', roles: async () => [] } as unknown as ClientCredentialProvider;
const deps = (http: HttpClient) => ({ http, cloud: PUBLIC_CLOUD, logger: silentLogger() });

/** Runs `call`, stops the run 50 ms later, and returns how the call ended and after how long (at most 3 s). */
async function stoppedDuring(call: (ctx: StreamContext) => Promise<unknown>, http: HttpClient): Promise<{ error: unknown; ms: number }> {
  const controller = new AbortController();
  const ctx = streamContext(deps(http), tokens, controller.signal);
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('run stopped')), 50);
  const hung = new Promise((resolve) => setTimeout(() => resolve('still waiting after 3 s'), 3000).unref());
  const error = await Promise.race([
    call(ctx).then(
      () => 'finished',
      (e: unknown) => e,
    ),
    hung,
  ]);
  return { error, ms: Date.now() - started };
}

describe("a run's stop ends every throttled wait", () => {
  const budgeted = () => new HttpClient({ links: LinkPolicy.fromProfile(PUBLIC_CLOUD), logger: silentLogger(), budget: spentBudget });

  it.each([
    ['BAP addAppUser', (ctx: StreamContext) => addAppUser(ctx, 'env-1', '00000000-0000-0000-0000-000000000001')],
    [
      'the Dataverse admin sequence',
      (ctx: StreamContext) => assignSystemAdministrator(ctx, 'https://org1.crm.dynamics.com', '00000000-0000-0000-0000-000000000001', async () => 'admin'),
    ],
    ['a flow read on its own', (ctx: StreamContext) => readOneOrNull(ctx, 'flow', `${PUBLIC_CLOUD.flow.baseUrl}/x`, async () => 't')],
    ['the tenant settings stream', (ctx: StreamContext) => tenantSettingsStream.read(ctx, ROOT_SLICE, null).next()],
  ])('%s waiting on a spent budget', async (_name, call) => {
    const { error, ms } = await stoppedDuring(call, budgeted());
    expect(error).toEqual(new Error('run stopped'));
    expect(ms).toBeLessThan(1500);
  });

  describe('a Retry-After of an API without a shared budget', () => {
    let server: Server;
    let base: string;
    beforeAll(async () => {
      server = createServer((_req, res) => {
        res.statusCode = 429;
        res.setHeader('Retry-After', '100');
        res.end('{}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('is cut short by the stop (real timers: the old pipeline slept the 100 s out)', async () => {
      const http = new HttpClient({ links: new LinkPolicy({ bases: { arm: [base] } }), logger: silentLogger() });
      const { error, ms } = await stoppedDuring((ctx) => ctx.http.send({ api: 'arm', url: `${base}/subscriptions`, tenantId: ctx.tenantId }), http);
      expect(error).toEqual(new Error('run stopped'));
      expect(ms).toBeLessThan(1500);
      await http.close();
    });
  });

  it('a view bound to a signal shares the pipeline: its requests count in the same stats', async () => {
    const http = budgeted();
    const view = http.bind({ signal: new AbortController().signal });
    view.statsFor('bap').requests += 3;
    expect(http.statsFor('bap').requests).toBe(3);
    expect(http.bind({ signal: undefined })).toBe(http);
  });

  it("an integration's context charges its application (client) ID, the key of the per-app budgets", async () => {
    const charges: unknown[] = [];
    const recording: ThrottleBudget = { acquire: async (charge) => void charges.push(charge), penalize: async () => true };
    const http = new HttpClient({ links: LinkPolicy.fromProfile(PUBLIC_CLOUD), logger: silentLogger(), budget: recording });
    const ctx = streamContext(deps(http), tokens);
    await ctx.http.acquire({ service: 'graphTeams', tenantId: 'tenant-1', cost: 20 });
    expect(charges).toEqual([{ service: 'graphTeams', tenantId: 'tenant-1', cost: 20, appId: 'app-1' }]);
  });
});
