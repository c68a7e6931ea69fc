import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyHelmet from '@fastify/helmet';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { VigilError } from '../core/errors.ts';
import type { ConsentOutcome } from '../onboarding/consent.ts';
import type { Logger } from '../platform/log/index.ts';
import { registerAuthentication, SESSION_COOKIE } from './auth.ts';
import type { ApiContext } from './context.ts';
import { errorHandler } from './errors.ts';
import { protectionRoutes, type ProtectionHandler } from './protection.ts';
import { alertRoutes } from './routes/alerts.ts';
import { authRoutes } from './routes/auth.ts';
import { complianceRoutes } from './routes/compliance.ts';
import { estateRoutes } from './routes/estate.ts';
import { exportRoutes } from './routes/exports.ts';
import { findingRoutes } from './routes/findings.ts';
import { integrationRoutes } from './routes/integrations.ts';
import { inventoryRoutes } from './routes/inventory.ts';
import { organizationRoutes } from './routes/organization.ts';
import { protectionApiRoutes } from './routes/protection.ts';
import { runRoutes } from './routes/runs.ts';

/**
 * The HTTP server of `vigil serve`: the REST API under `/api/v1` with its OpenAPI 3.1 document at `/api/docs`, the
 * portal's static assets at `/`, the admin consent callback, Copilot Studio's threat-detection webhook at
 * `/protection/{endpointId}/…` (src/api/protection.ts), `/healthz`, `/readyz` and `/metrics`. The app factory is
 * apart from `listen` so tests use `inject()` (fastify `docs/Guides/Testing.md`) as well as real HTTP.
 */
export interface ServerDeps {
  /** True when the store and the queue answer. */
  ready(): Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** Handles the admin consent redirect (Mode B). */
  consentCallback?: (query: Record<string, string | undefined>) => Promise<ConsentOutcome>;
  /** The API's dependencies; without them only health, metrics and the consent callback are served. */
  api?: ApiContext;
  /** Prometheus exposition of the process (`/metrics`) and the recorder of API requests. */
  metrics?: { contentType: string; text(): Promise<string>; apiRequest(method: string, route: string | undefined, status: number): void };
  /** The built portal (`web/dist`); not served when absent or not built. */
  portalDir?: string;
  /** Trust `X-Forwarded-*` from these proxy addresses (comma-separated, CIDR allowed) or from any (true): client address and protocol behind TLS termination. */
  trustProxy?: boolean | string;
  logger?: Logger;
  /** Runtime protection's use case: serves `/protection/{endpointId}/…` (Copilot Studio's webhook) when given. */
  protection?: ProtectionHandler;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small self-contained HTML page for the consent outcome (no scripts, no external assets). */
function consentPage(o: ConsentOutcome): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Vigil: ${escapeHtml(o.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;line-height:1.5}h1{font-size:1.4rem}.s-granted h1{color:#116329}.s-denied h1,.s-declined h1,.s-error h1,.s-invalid-state h1{color:#a40e26}code{background:#f3f3f3;padding:0 .2rem}</style></head>
<body class="s-${o.status}"><h1>${escapeHtml(o.title)}</h1><p>${escapeHtml(o.message)}</p>${o.tenantId ? `<p>Tenant: <code>${escapeHtml(o.tenantId)}</code></p>` : ''}
<h2>What to do next</h2><ol>${o.next.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ol></body></html>`;
}

/**
 * The one `<style>` element Swagger UI's bundle (@fastify/swagger-ui 6.1.3) adds while it starts, allowed by its
 * SHA-256 (the hash Chromium names when it refuses it) rather than by `'unsafe-inline'`. A new bundle with another
 * style shows again as a CSP violation in test/portal/a11y.test.ts.
 */
const SWAGGER_UI_STYLE_HASH = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

/**
 * How `/api/docs` shows Swagger UI, so the page passes axe-core (WCAG 2.1 AA) like the portal's pages
 * (test/portal/a11y.test.ts, at 1280 and 400 px wide, with an operation open, tried out, and the authorization
 * dialog open):
 * - `layout: 'BaseLayout'`: Swagger UI without the standalone preset's top bar, whose logo image had no text and
 *   whose "Explore" box (load another document by URL) had no label — and no use here: the page documents this
 *   server's API only;
 * - `syntaxHighlight.theme: 'obsidian'`: its JSON colours reach 4.5:1 on its background (the default, agate, shows
 *   numbers at 3.5:1);
 * - src/api/docs-theme.css: darker colours where Swagger UI's text failed 4.5:1 contrast (method badges,
 *   Authorize, muted texts), and examples that wrap rather than scroll;
 * - src/api/docs-theme.js: the accessible names Swagger UI's markup lacks (parameter selects, request body, the
 *   dialog's close button) and no aria-label hiding a button's visible text, set after it renders.
 * `layout` and `syntaxHighlight` are Swagger UI's own options (github.com/swagger-api/swagger-ui,
 * docs/usage/configuration.md); `theme` is @fastify/swagger-ui's (its README). Both files sit beside this module (scripts/build-assets.mjs copies them into dist/) and are served from our origin
 * under `/api/docs/static/theme/`, which the page's CSP (`'self'`) allows.
 */
function swaggerUiOptions() {
  const theme = (file: string) => readFileSync(join(import.meta.dirname, file), 'utf8');
  return {
    routePrefix: '/api/docs',
    staticCSP: true,
    transformStaticCSP: (header: string) => header.replace("style-src 'self' https:", `style-src 'self' https: '${SWAGGER_UI_STYLE_HASH}'`),
    uiConfig: { docExpansion: 'list' as const, deepLinking: false, layout: 'BaseLayout', syntaxHighlight: { theme: 'obsidian' as const } },
    theme: {
      title: 'Vigil API',
      css: [{ filename: 'vigil.css', content: theme('docs-theme.css') }],
      js: [{ filename: 'vigil.js', content: theme('docs-theme.js') }],
    },
  };
}

/** Content Security Policy of the portal: its own scripts, styles and API only; never framed. */
const PORTAL_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** The `/api/v1` routes, behind authentication, with security headers and the sign-in rate limit. */
async function apiPlugin(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  await app.register(fastifyHelmet, { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } });
  await app.register(fastifyRateLimit, { global: false });
  app.addHook('onSend', async (_request, reply) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });
  registerAuthentication(app, ctx);
  for (const routes of [
    authRoutes,
    organizationRoutes,
    integrationRoutes,
    runRoutes,
    inventoryRoutes,
    estateRoutes,
    findingRoutes,
    alertRoutes,
    complianceRoutes,
    exportRoutes,
    protectionApiRoutes,
  ])
    routes(app, ctx);
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      error: {
        code: 'ROUTE_NOT_FOUND',
        message: `No route ${request.method} ${request.url.split('?')[0]}.`,
        remediation: 'See the OpenAPI document at /api/docs.',
      },
    }),
  );
}

/** The portal: built assets, and `index.html` for every other GET outside the API (client-side routes). */
async function portalPlugin(app: FastifyInstance, dir: string): Promise<void> {
  await app.register(fastifyHelmet, { contentSecurityPolicy: { directives: PORTAL_CSP } });
  const index = readFileSync(join(dir, 'index.html'));
  await app.register(fastifyStatic, { root: dir, wildcard: false, index: false, maxAge: '1h' });
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    if (request.url.startsWith('/api/'))
      return reply.code(404).send({ error: { code: 'ROUTE_NOT_FOUND', message: `No route GET ${request.url.split('?')[0]}.` } });
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
  });
}

/**
 * The path of the first string holding U+0000 (NUL) in a request's parsed input — a key or a value of the JSON body,
 * the query string or the path parameters — as a field name (`email`, `filters.owner`, `items[2]`), or undefined.
 * Iterative, so a deeply nested body cannot exhaust the stack.
 */
function nulField(input: unknown): string | undefined {
  const stack: [unknown, string][] = [[input, '']];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path || 'body';
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, `${path}[${i}]`]));
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const field = path ? `${path}.${k}` : k;
        if (k.includes('\u0000')) return field;
        stack.push([v, field]);
      }
    }
  }
  return undefined;
}

/**
 * The contract's schemas with a `.meta({ id })` become named components (`#/components/schemas/<id>`);
 * fastify-type-provider-zod adds an `<id>Input` twin of each for request bodies. This keeps only the components the
 * paths reference, directly or through other components, so the document (and the portal's types generated from it)
 * holds no unused twin.
 */
function withUsedComponentsOnly<T extends object>(document: T): T {
  const components = (document as { components?: { schemas?: Record<string, unknown> } }).components;
  const schemas = components?.schemas;
  if (!schemas) return document;
  const refs = (value: unknown) => [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => decodeURIComponent(m[1]!));
  const used = new Set<string>();
  const pending = refs({ ...document, components: { ...components, schemas: {} } });
  while (pending.length) {
    const name = pending.pop()!;
    if (used.has(name)) continue;
    used.add(name);
    pending.push(...refs(schemas[name]));
  }
  return { ...document, components: { ...components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))) } };
}

/** Builds the Fastify app (not listening). */
export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, trustProxy: deps.trustProxy ?? false, bodyLimit: 1_048_576 });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const logger = deps.logger ?? deps.api?.logger;
  if (logger) app.setErrorHandler(errorHandler(logger));
  await app.register(fastifyCookie);
  // No input may carry U+0000 (issue 14, point 6): PostgreSQL text cannot hold it, and no field of Vigil's needs it.
  // One hook for every route (API, consent callback), before validation: 400 naming the field, never a 500.
  // Runtime protection's webhook is the exception (route config `nulAllowed`): its payloads are attacks by design.
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config?.nulAllowed) return;
    const field = nulField(request.params) ?? nulField(request.query) ?? nulField(request.body);
    if (field) {
      throw new VigilError('NUL_IN_INPUT', `${field} contains a NUL character (U+0000), which no field accepts.`, {
        field,
        remediation: `Remove the NUL character from ${field}.`,
      });
    }
  });
  if (deps.metrics) {
    const metrics = deps.metrics;
    app.addHook('onResponse', async (request, reply) => metrics.apiRequest(request.method, request.routeOptions.url, reply.statusCode));
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
  }
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const r = await deps.ready().catch((e: unknown) => ({ ok: false, detail: { error: (e as Error).message } }));
    return reply.code(r.ok ? 200 : 503).send({ status: r.ok ? 'ready' : 'not ready', ...r.detail });
  });
  if (deps.consentCallback) {
    const handle = deps.consentCallback;
    app.get('/consent/callback', { schema: { hide: true } }, async (req, reply) => {
      const outcome = await handle(req.query as Record<string, string | undefined>);
      if (outcome.redirect)
        return reply.code(302).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('location', outcome.redirect).send();
      return reply
        .header('referrer-policy', 'no-referrer')
        .code(outcome.httpStatus)
        .header('cache-control', 'no-store')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .type('text/html; charset=utf-8')
        .send(consentPage(outcome));
    });
  }
  if (deps.protection) {
    const protection = deps.protection;
    await app.register(async (child) => protectionRoutes(child, protection), { prefix: '/protection' });
  }
  if (deps.api) {
    await app.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Vigil API',
          version: '1',
          description:
            "Security monitoring of the low-code and AI-agent estate of Microsoft 365 tenants. Every object belongs to the caller's organization; another organization's object answers 404. See docs/api.md.",
        },
        components: {
          securitySchemes: {
            apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (vgl_…) from `vigil api-keys create` or POST /api/v1/organization/api-keys' },
            session: {
              type: 'apiKey',
              in: 'cookie',
              name: SESSION_COOKIE,
              description: 'The portal session set by POST /api/v1/auth/login; changes also need the x-csrf-token header',
            },
          },
        },
        security: [{ apiKey: [] }, { session: [] }],
      },
      transform: jsonSchemaTransform,
      transformObject: (document) => withUsedComponentsOnly(jsonSchemaTransformObject(document)),
    });
    await app.register(fastifySwaggerUi, swaggerUiOptions());
    app.get('/api/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    const ctx = deps.api;
    await app.register(async (child) => apiPlugin(child, ctx), { prefix: '/api/v1' });
  }
  const portalDir = deps.portalDir;
  if (portalDir && existsSync(join(portalDir, 'index.html'))) await app.register(async (child) => portalPlugin(child, portalDir));
  return app;
}
