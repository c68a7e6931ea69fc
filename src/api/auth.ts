import type {} from '@fastify/cookie';
import type {} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticateApiKey, authenticateSession, csrfMatches, type Principal, type Role } from '../access/index.ts';
import { requireRole } from '../access/scope.ts';
import { VigilError } from '../core/errors.ts';
import type { ApiContext } from './context.ts';

/**
 * Authentication of every `/api/v1` route: a portal session cookie (with the CSRF header on changes) or an API key
 * in `Authorization: Bearer`. Each route declares who may call it in `config.access`: `public` (sign-in only),
 * `viewer` (the default: any signed-in caller) or `admin`.
 *
 * Sources: OWASP Session Management Cheat Sheet (HttpOnly, Secure, SameSite cookies; idle and absolute timeouts);
 * OWASP CSRF Prevention Cheat Sheet ("signed double-submit cookie" and custom request header); RFC 6750 (Bearer).
 */

/** Name of the session cookie (HttpOnly). */
export const SESSION_COOKIE = 'vigil_session';
/** Name of the CSRF cookie (readable by the portal's script, echoed in {@link CSRF_HEADER}). */
const CSRF_COOKIE = 'vigil_csrf';
/** Header carrying the CSRF token on cookie-authenticated changes. */
const CSRF_HEADER = 'x-csrf-token';

/** Who may call a route. */
type RouteAccess = 'public' | Role;

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on every non-public `/api/v1` route. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Who may call the route. @default 'viewer' */
    access?: RouteAccess;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The caller of a request whose route is not public. Throws when the hook did not set one (a wiring bug). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new VigilError('NO_PRINCIPAL', 'Route reached without authentication.');
  return request.principal;
}

/** True when cookies must carry `Secure` for this request. */
function secureCookie(ctx: Pick<ApiContext, 'secureCookies'>, request: FastifyRequest): boolean {
  return ctx.secureCookies === 'auto' ? request.protocol === 'https' : ctx.secureCookies;
}

/** Sets the session and CSRF cookies after sign-in. */
export function setSessionCookies(
  ctx: Pick<ApiContext, 'secureCookies' | 'access'>,
  request: FastifyRequest,
  reply: FastifyReply,
  tokens: { sessionToken: string; csrfToken: string },
): void {
  const common = { path: '/', sameSite: 'strict' as const, secure: secureCookie(ctx, request), maxAge: ctx.access.absoluteTimeoutSeconds };
  reply.setCookie(SESSION_COOKIE, tokens.sessionToken, { ...common, httpOnly: true });
  reply.setCookie(CSRF_COOKIE, tokens.csrfToken, { ...common, httpOnly: false });
}

/** Clears both cookies (sign-out, or an expired session). */
export function clearSessionCookies(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
  reply.clearCookie(CSRF_COOKIE, { path: '/' });
}

const unauthenticated = () => new VigilError('AUTHENTICATION_REQUIRED', 'Sign in, or send an API key.');

/**
 * Registers the authentication hook on an instance holding the `/api/v1` routes (@fastify/cookie registered first).
 * The hook runs before validation, so an anonymous caller learns nothing from validation errors either.
 */
export function registerAuthentication(app: FastifyInstance, ctx: ApiContext): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config.access ?? 'viewer';
    if (access === 'public') return;
    const header = request.headers.authorization;
    let principal: Principal | null = null;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      principal = match ? await authenticateApiKey(ctx.db, match[1]!) : null;
      if (!principal) throw unauthenticated();
    } else {
      const token = request.cookies[SESSION_COOKIE];
      principal = token ? await authenticateSession(ctx.db, token, ctx.access) : null;
      if (!principal) {
        if (token) clearSessionCookies(reply);
        throw unauthenticated();
      }
      if (!SAFE_METHODS.has(request.method)) {
        const sent = request.headers[CSRF_HEADER];
        if (!csrfMatches(principal, typeof sent === 'string' ? sent : undefined)) {
          throw new VigilError('CSRF_FAILED', 'The request lacks the CSRF token of this session.', {
            remediation: `Send the value of the ${CSRF_COOKIE} cookie in the ${CSRF_HEADER} header (the portal does this; reload it if it was open before a sign-in).`,
          });
        }
      }
    }
    request.principal = principal;
    if (access === 'admin') requireRole(principal, 'admin');
  });
}
