import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { WEBHOOK_ERROR_CODES, webhookError, type ProtectionService, type WebhookAnswer } from '../protection/service.ts';

/**
 * The two endpoints Copilot Studio calls as an external threat-detection provider (issue 19), outside `/api/v1`:
 * `POST /protection/{endpointId}/validate` and `POST /protection/{endpointId}/analyze-tool-execution`, so an endpoint's
 * base URL is `{apiUrl}/protection/{endpointId}`. The caller's Entra token is the authentication (no API key, no
 * cookie); bodies up to 4 MiB; U+0000 accepted (the global 400 hook is skipped here: payloads are attacks by design,
 * and the use case replaces U+0000 before storing); every answer, errors included, in the webhook's documented shapes,
 * with `cache-control: no-store`.
 *
 * Source: https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers (paths,
 * `?api-version=2025-05-01`, headers `Authorization` and `x-ms-correlation-id`, bodies and error shape).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route accepts U+0000 in its input (the global NUL hook skips it). @default false */
    nulAllowed?: boolean;
  }
}

/** Largest body accepted, bytes (4 MiB): chat history and previous tool outputs can be long. */
const PROTECTION_BODY_LIMIT = 4 * 1024 * 1024;

/** The first documented API version; newer ones (a published client sends 2025-09-01) are accepted too. */
const FIRST_API_VERSION = '2025-05-01';

/** What the routes call (the use case, or a test double). */
export type ProtectionHandler = Pick<ProtectionService, 'validate' | 'analyze'>;

function send(reply: FastifyReply, answer: WebhookAnswer) {
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}

/** The `x-ms-correlation-id` header as text (at most 128 characters of it), '' when absent. */
function correlationOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return (v ?? '').slice(0, 128);
}

/** A refusal of the `api-version` query, or undefined: absent, or a date at or after 2025-05-01 (optionally `-preview`). */
function apiVersionError(version: unknown, correlationId: string): WebhookAnswer | undefined {
  if (version === undefined) return undefined;
  const m = typeof version === 'string' ? /^(\d{4}-\d{2}-\d{2})(-preview)?$/.exec(version) : null;
  if (m && m[1]! >= FIRST_API_VERSION) return undefined;
  return webhookError(
    400,
    WEBHOOK_ERROR_CODES.badRequest,
    `Unsupported api-version; ${FIRST_API_VERSION} and later are supported.`,
    `correlationId=${correlationId}`,
  );
}

/** Registers the routes on `app` (meant for a child context with prefix `/protection`). */
export async function protectionRoutes(app: FastifyInstance, handler: ProtectionHandler): Promise<void> {
  // Bodies are read as text whatever their type: `validate` comes with an empty one, `analyze` is parsed by the use
  // case (so a malformed body is refused after the caller is authenticated, in the webhook's shape).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: PROTECTION_BODY_LIMIT }, (_request, body, done) => done(null, body));
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const correlationId = correlationOf(request.headers['x-ms-correlation-id']);
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    const code =
      status === 413
        ? WEBHOOK_ERROR_CODES.tooLarge
        : status === 415
          ? WEBHOOK_ERROR_CODES.unsupportedMediaType
          : status < 500
            ? WEBHOOK_ERROR_CODES.badRequest
            : WEBHOOK_ERROR_CODES.internal;
    const message =
      status === 413
        ? `The body is larger than ${PROTECTION_BODY_LIMIT} bytes.`
        : status < 500
          ? 'The request cannot be read.'
          : 'Vigil failed to handle the call.';
    if (status >= 500) request.log?.error?.({ err: { message: err.message } }, 'protection call failed');
    return send(reply, webhookError(status, code, message, `correlationId=${correlationId}`));
  });
  app.setNotFoundHandler((request, reply) =>
    send(
      reply,
      webhookError(
        404,
        WEBHOOK_ERROR_CODES.notFound,
        'No protection endpoint at this address.',
        `correlationId=${correlationOf(request.headers['x-ms-correlation-id'])}`,
      ),
    ),
  );
  const options = { bodyLimit: PROTECTION_BODY_LIMIT, config: { nulAllowed: true }, schema: { hide: true } };
  app.post<{ Params: { endpointId: string }; Querystring: Record<string, unknown> }>('/:endpointId/validate', options, async (request, reply) => {
    const correlationId = correlationOf(request.headers['x-ms-correlation-id']);
    if (correlationId) reply.header('x-ms-correlation-id', correlationId);
    const refused = apiVersionError(request.query['api-version'], correlationId);
    if (refused) return send(reply, refused);
    return send(reply, await handler.validate(request.params.endpointId, request.headers.authorization, correlationId));
  });
  app.post<{ Params: { endpointId: string }; Querystring: Record<string, unknown> }>('/:endpointId/analyze-tool-execution', options, async (request, reply) => {
    const startedAt = performance.now();
    const correlationId = correlationOf(request.headers['x-ms-correlation-id']);
    if (correlationId) reply.header('x-ms-correlation-id', correlationId);
    const refused = apiVersionError(request.query['api-version'], correlationId);
    if (refused) return send(reply, refused);
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && !type.endsWith('+json'))
      return send(reply, webhookError(415, WEBHOOK_ERROR_CODES.unsupportedMediaType, 'The body must be application/json.', `correlationId=${correlationId}`));
    const body = typeof request.body === 'string' ? request.body : '';
    return send(
      reply,
      await handler.analyze(request.params.endpointId, request.headers.authorization, correlationId, body, { clientIp: request.ip, startedAt }),
    );
  });
}
