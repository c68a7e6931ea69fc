/**
 * Entra ID error bodies shared by the identity routes (token endpoint, device-code endpoint, admin consent).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { aadTimestamp, newId, queryParam, type EmulatorContext } from './common.ts';

/**
 * An Entra token-endpoint error body (reference §1.6): `error`, `error_description` = `AADSTS{code}: {text}` +
 * `\r\nTrace ID: …\r\nCorrelation ID: …\r\nTimestamp: YYYY-MM-DD HH:MM:SSZ`, `error_codes`, `timestamp`, `trace_id`,
 * `correlation_id`, `error_uri`, then `extra` fields (e.g. `suberror`). The correlation id echoes the request's
 * `client-request-id` header (or query parameter) when present.
 */
export function aadError(
  ctx: EmulatorContext,
  req: FastifyRequest,
  code: number,
  error: string,
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const trace = newId();
  // Entra echoes the caller's client-request-id (MSAL sends it as a header or a query parameter) as correlation id.
  const header = req.headers['client-request-id'];
  const fromQuery = queryParam(req, 'client-request-id');
  const correlation = typeof header === 'string' && header.length > 0 ? header : fromQuery && fromQuery.length > 0 ? fromQuery : newId();
  const ts = aadTimestamp();
  return {
    error,
    error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${trace}\r\nCorrelation ID: ${correlation}\r\nTimestamp: ${ts}`,
    error_codes: [code],
    timestamp: ts,
    trace_id: trace,
    correlation_id: correlation,
    error_uri: `${ctx.baseUrl()}/error?code=${code}`,
    ...extra,
  };
}

/** Sends an `aadError` body with Entra's no-cache headers and an `x-ms-request-id`. */
export function sendAad(
  ctx: EmulatorContext,
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: number,
  error: string,
  text: string,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store, no-cache')
    .header('pragma', 'no-cache')
    .header('x-ms-request-id', newId())
    .type('application/json; charset=utf-8')
    .send(aadError(ctx, req, code, error, text, extra));
}

/** AADSTS90002 wording (Entra error reference, InvalidTenantName). */
export function tenantNotFound(name: string): string {
  return `Tenant '${name}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`;
}

/** Tenant path aliases that are not a tenant (https://learn.microsoft.com/entra/identity-platform/v2-protocols-oidc). */
export const TENANT_ALIASES: ReadonlySet<string> = new Set(['common', 'organizations', 'consumers']);
