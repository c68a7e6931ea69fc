import Fastify, { type FastifyInstance } from 'fastify';
import type { ConsentOutcome } from '../onboarding/consent.ts';

/**
 * The HTTP server of `vigil serve`: health and readiness for now (the API and portal come later). The app factory
 * is apart from `listen` so tests use `inject()` (fastify `docs/Guides/Testing.md`).
 */
export interface ServerDeps {
  /** True when the store and the queue answer. */
  ready(): Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** Handles the admin consent redirect (Mode B). */
  consentCallback?: (query: Record<string, string | undefined>) => ConsentOutcome;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small self-contained HTML page for the consent outcome (no scripts, no external assets). */
export function consentPage(o: ConsentOutcome): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Vigil: ${escapeHtml(o.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;line-height:1.5}h1{font-size:1.4rem}.s-granted h1{color:#116329}.s-denied h1,.s-declined h1,.s-error h1,.s-invalid-state h1{color:#a40e26}code{background:#f3f3f3;padding:0 .2rem}</style></head>
<body class="s-${o.status}"><h1>${escapeHtml(o.title)}</h1><p>${escapeHtml(o.message)}</p>${o.tenantId ? `<p>Tenant: <code>${escapeHtml(o.tenantId)}</code></p>` : ''}
<h2>What to do next</h2><ol>${o.next.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ol></body></html>`;
}

/** Builds the Fastify app (not listening). */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = await deps.ready().catch((e: unknown) => ({ ok: false, detail: { error: (e as Error).message } }));
    return reply.code(r.ok ? 200 : 503).send({ status: r.ok ? 'ready' : 'not ready', ...r.detail });
  });
  if (deps.consentCallback) {
    const handle = deps.consentCallback;
    app.get('/consent/callback', async (req, reply) => {
      const outcome = handle(req.query as Record<string, string | undefined>);
      return reply.code(outcome.httpStatus).header('cache-control', 'no-store').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").type('text/html; charset=utf-8').send(consentPage(outcome));
    });
  }
  return app;
}
