import { describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';

describe('vigil serve health endpoints', () => {
  it('answers /healthz while the process runs, and /readyz 503 until the store answers', async () => {
    let up = false;
    const app = await buildServer({
      ready: async () => {
        if (!up) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return { ok: true, detail: { queued: 3 } };
      },
    });
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const down = await app.inject({ url: '/readyz' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 'not ready', error: expect.stringMatching(/ECONNREFUSED/) });
    up = true;
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', queued: 3 });
    await app.close();
  });
});
