import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { VigilError } from '../core/errors.ts';
import type { Logger } from '../platform/log/index.ts';

/**
 * One error body for every API failure: `{ error: { code, message, field?, remediation? } }`, with the HTTP status
 * that fits the error's kind. Messages come from VigilError (never a secret); unknown errors answer a generic 500 and
 * are logged without request bodies.
 */

/** The body of an API error. */
export interface ApiErrorBody {
  error: { code: string; message: string; field?: string; remediation?: string; detail?: Record<string, unknown> };
}

/** CLI flags named by shared validation, and the API field that carries the same value. */
const FIELD_NAMES: Record<string, string> = {
  '--tenant-id': 'tenantId',
  '--client-id': 'clientId',
  '--client-secret': 'clientSecret',
  '--secret-expires': 'secretExpires',
  '--sp-object-id': 'servicePrincipalObjectId',
  '--tenant': 'tenant',
  '--name': 'name',
};

/** The API's name of a field a use case named after its CLI flag. */
function apiField(field: string | undefined): string | undefined {
  if (!field) return undefined;
  return FIELD_NAMES[field] ?? field.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** HTTP status of a VigilError. Upstream refusals of a customer's credentials are the request's fault (422), not ours. */
function statusOf(e: VigilError): number {
  switch (e.kind) {
    case 'invalid-input':
      return 400;
    case 'not-found':
      return 404;
    case 'conflict':
      return 409;
    case 'authentication':
      return e.code === 'SIGN_IN_FAILED' || e.code === 'AUTHENTICATION_REQUIRED' ? 401 : 422;
    case 'authorization':
      return e.code === 'FORBIDDEN_ROLE' || e.code === 'CSRF_FAILED' ? 403 : 422;
    case 'upstream':
      return 502;
    case 'configuration':
      return 503;
    default:
      return 500;
  }
}

/** The API body of a VigilError, with CLI flag names turned into API field names. */
function errorBody(e: VigilError): ApiErrorBody {
  const field = apiField(e.field);
  let message = e.message;
  let remediation = e.remediation;
  if (e.field && field && field !== e.field) {
    message = message.split(e.field).join(field);
    remediation = remediation?.split(e.field).join(field);
  }
  return { error: { code: e.code, message, ...(field ? { field } : {}), ...(remediation ? { remediation } : {}) } };
}

/** Fastify error handler: VigilError, request validation, rate limits and framework errors to {@link ApiErrorBody}. */
export function errorHandler(logger: Logger) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof VigilError) return reply.code(statusOf(err)).send(errorBody(err));
    if (hasZodFastifySchemaValidationErrors(err)) {
      const issue = err.validation[0];
      const path =
        issue?.instancePath.replace(/^\//, '').replace(/\//g, '.') ||
        (issue?.params as { missingProperty?: string } | undefined)?.missingProperty ||
        err.validationContext ||
        'body';
      const where = err.validationContext && err.validationContext !== 'body' ? ` (${err.validationContext})` : '';
      return reply.code(400).send({
        error: {
          code: 'INVALID_INPUT',
          message: `${path}${where}: ${issue?.message ?? 'invalid value'}.`,
          field: path,
          remediation: 'Correct the field as the OpenAPI document at /api/docs describes it.',
        },
      });
    }
    if (isResponseSerializationError(err)) {
      logger.error(
        { route: request.routeOptions.url, issues: err.cause.issues.slice(0, 3).map((i) => ({ path: i.path, code: i.code })) },
        'API response did not match its schema',
      );
      return reply.code(500).send({ error: { code: 'INTERNAL', message: 'The server failed to answer; the error is logged.' } });
    }
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      logger.error({ route: request.routeOptions.url, method: request.method, err: { message: err.message, code: err.code } }, 'API request failed');
      return reply.code(500).send({ error: { code: 'INTERNAL', message: 'The server failed to answer; the error is logged.' } });
    }
    return reply.code(status).send({ error: { code: err.code ?? `HTTP_${status}`, message: err.message } });
  };
}
