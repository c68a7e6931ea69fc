import { z } from 'zod';
import { SEVERITIES } from '../core/types.ts';

/**
 * zod schemas shared by the routes. Each validates requests and is the source of the OpenAPI 3.1 document
 * (fastify-type-provider-zod's `jsonSchemaTransform`); response schemas also act as allowlists: a field not listed is
 * not sent, so a secret added to a row by mistake cannot leak through the API.
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
  .describe('Error');

/** Error responses every authenticated route can give. */
export const commonErrors = { 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema } as const;

/** Page size and position of list routes. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('Items per page (1–500)'),
  cursor: z.string().max(2000).optional().describe('nextCursor of the previous page'),
});

/** A list page. */
export function page<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last') });
}

/** Path parameter `id`. */
export const IdParams = z.object({ id: z.string().min(1).max(200) });

/** ISO 8601 UTC timestamp. */
export const Timestamp = z.string().describe('ISO 8601 UTC');

/** A severity. */
export const SeveritySchema = z.enum(SEVERITIES);

/** An open JSON object (upstream attributes, details). */
export const Json = z.record(z.string(), z.unknown());

/** A collection run. */
export const RunSchema = z.object({
  id: z.string(),
  integrationId: z.string(),
  status: z.string().describe('running, succeeded, partial, failed or interrupted'),
  startedAt: Timestamp,
  finishedAt: Timestamp.nullable(),
  durationMs: z.number().nullable(),
  counts: Json.nullable(),
  errors: z.array(z.unknown()).nullable(),
});

/** A finding. */
export const FindingSchema = z.object({
  id: z.string(),
  integrationId: z.string(),
  checkId: z.string(),
  title: z.string().nullable(),
  severity: SeveritySchema,
  resourceType: z.string(),
  resourceId: z.string(),
  resourceName: z.string().nullable(),
  status: z.string().describe('open or resolved'),
  detail: Json.nullable(),
  firstSeenAt: Timestamp,
  lastSeenAt: Timestamp,
  resolvedAt: Timestamp.nullable(),
  suppression: z.object({ reason: z.string(), author: z.string(), expiresAt: Timestamp.nullable(), createdAt: Timestamp }).nullable(),
});

/** An audit event (normalised columns). */
export const EventSchema = z.object({
  id: z.string(),
  integrationId: z.string(),
  contentType: z.string(),
  recordType: z.number().nullable(),
  creationTime: Timestamp,
  operation: z.string().nullable(),
  workload: z.string().nullable(),
  userId: z.string().nullable(),
  clientIp: z.string().nullable(),
  objectId: z.string().nullable(),
});

/** An alert. */
export const AlertSchema = z.object({
  id: z.string(),
  integrationId: z.string(),
  ruleId: z.string(),
  severity: z.string(),
  status: z.string(),
  title: z.string(),
  detail: Json.nullable(),
  windowStart: Timestamp.nullable(),
  windowEnd: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
