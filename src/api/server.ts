import Fastify, { type FastifyInstance } from 'fastify';

/**
 * The HTTP server of `vigil serve`: health and readiness for now (the API and portal come later). The app factory
 * is apart from `listen` so tests use `inject()` (fastify `docs/Guides/Testing.md`).
 */
export interface ServerDeps {
  /** True when the store and the queue answer. */
  ready(): Promise<{ ok: boolean; detail: Record<string, unknown> }>;
}

/** Builds the Fastify app (not listening). */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = await deps.ready().catch((e: unknown) => ({ ok: false, detail: { error: (e as Error).message } }));
    return reply.code(r.ok ? 200 : 503).send({ status: r.ok ? 'ready' : 'not ready', ...r.detail });
  });
  return app;
}
