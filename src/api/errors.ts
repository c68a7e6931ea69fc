import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { httpStatusOf } from '../core/error-catalogue.ts';
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

/**
 * The API body of a VigilError. Errors name fields in domain terms, which are the API's JSON field names, so texts
 * are shown as thrown; the status comes from the error catalogue.
 */
function errorBody(e: VigilError): ApiErrorBody {
  const { code, message, field, remediation } = e.render();
  return { error: { code, message, ...(field ? { field } : {}), ...(remediation ? { remediation } : {}) } };
}

/** Fastify error handler: VigilError, request validation, rate limits and framework errors to {@link ApiErrorBody}. */
export function errorHandler(logger: Logger) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof VigilError) return reply.code(httpStatusOf(err.kind, err.code)).send(errorBody(err));
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
