import { z } from 'zod';
import { SEVERITIES } from '../core/types.ts';

/**
 * The API contract's shared parts. The zod schemas under `contract/` are the single source of truth of `/api/v1`:
 * the routes validate requests and serialize responses with them, fastify-type-provider-zod's `jsonSchemaTransform`
 * turns them into the OpenAPI 3.1 document (`/api/docs/openapi.json`), the use cases return their inferred types, and
 * the portal's types are generated from that document (`web/src/api-types.ts`). Response schemas also act as
 * allowlists: a field not listed is not sent, so a secret added to a row by mistake cannot leak through the API.
 *
 * A schema given an `id` with `.meta({ id })` becomes a named component of the document
 * (`#/components/schemas/<id>`), which the portal imports by that name; keep ids stable.
 *
 * Layer: imports `core/` and the enumerations of the modules that own them, never a use case's functions; both
 * `api/` and the use cases import it.
 */

/** The error body of every failure. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().describe('Stable, safe to match in scripts (e.g. INVALID_INPUT, INTEGRATION_NOT_FOUND, AADSTS7000215)'),
      message: z.string(),
      field: z.string().optional().describe('The input field at fault'),
      remediation: z.string().optional().describe('What to do'),
    }),
  })
  .meta({ id: 'ApiError', description: 'Error' });

/** Error responses every authenticated route can give. */
export const commonErrors = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema } as const;

/** Page size and position of list routes. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('Items per page (1–500)'),
  cursor: z.string().max(2000).optional().describe('nextCursor of the previous page'),
});

/** A list page of `item`. */
export function page<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last') });
}

/** A page of a list: the items and the cursor of the next page (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Path parameter `id`. */
export const IdParams = z.object({ id: z.string().min(1).max(200) });

/** ISO 8601 UTC timestamp. */
export const Timestamp = z.string().describe('ISO 8601 UTC');

/** A severity, most severe first. */
export const SeveritySchema = z.enum(SEVERITIES).meta({ id: 'Severity' });

/** An open JSON object (upstream attributes, details). */
export const Json = z.record(z.string(), z.unknown());

/** The empty answer of a 204 (No Content). */
export const NoContent = z.null();
