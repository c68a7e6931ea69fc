import type { ApiContext } from './context.ts';
import { buildServer } from './server.ts';

/**
 * What the server and the routes read from their context while they are built (not while they answer): the sign-in
 * rate limit, and the logger (none: no request is answered).
 */
const REGISTRATION_CONTEXT: Partial<ApiContext> = { loginAttemptsPerMinute: 10, logger: undefined };

/**
 * The OpenAPI 3.1 document of `/api/v1`, exactly as `vigil serve` publishes it at `/api/docs/openapi.json`, built
 * in-process without a store, queue or network: the app is built with a context that only answers what route
 * registration reads, made ready (`app.ready()`), and asked for its document (`app.swagger()`, @fastify/swagger).
 * The document depends on the contract's schemas and the routes only, never on configuration or data.
 * @throws Error when route registration reads another part of the context (a route that reads its dependencies at
 *   registration would make the document depend on them; read them in the handler instead).
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const api = new Proxy(REGISTRATION_CONTEXT, {
    get(target, key) {
      if (typeof key !== 'string' || key in target || key === 'then') return (target as Record<string | symbol, unknown>)[key];
      throw new Error(
        `openApiDocument: route registration read the API context's "${key}"; read it in the handler instead, or add it to REGISTRATION_CONTEXT if it shapes the routes.`,
      );
    },
  }) as ApiContext;
  const app = await buildServer({ ready: async () => ({ ok: false, detail: {} }), api });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
