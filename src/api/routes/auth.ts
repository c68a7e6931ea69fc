import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { signIn, signOut } from '../../access/index.ts';
import { getOrganization, getPortalUser } from '../../store/repositories/access.ts';
import { clearSessionCookies, principalOf, SESSION_COOKIE, setSessionCookies } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { LoginBody, LoginResultSchema, SessionSchema } from '../../contract/auth.ts';
import { commonErrors, ErrorSchema, NoContent } from '../../contract/common.ts';

/** `/api/v1/auth`: sign-in (rate-limited per client address), sign-out, and who the caller is. */
export function authRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/auth/login',
    {
      config: { access: 'public', rateLimit: { max: ctx.loginAttemptsPerMinute, timeWindow: 60_000 } },
      schema: {
        tags: ['auth'],
        summary: 'Sign in to the portal: sets the session cookie (HttpOnly) and the CSRF cookie',
        body: LoginBody,
        response: { 200: LoginResultSchema, 400: ErrorSchema, 401: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const s = await signIn(ctx.db, request.body.email, request.body.password, ctx.access);
      setSessionCookies(ctx, request, reply, s);
      const org = await getOrganization(ctx.db, s.user.organizationId);
      return {
        user: { id: s.user.id, email: s.user.email, displayName: s.user.displayName, role: s.user.role },
        organization: { id: org!.id, name: org!.name },
        csrfToken: s.csrfToken,
        expiresAt: s.expiresAt,
      };
    },
  );

  r.post(
    '/auth/logout',
    { schema: { tags: ['auth'], summary: 'Sign out: ends the session', response: { 204: NoContent, ...commonErrors } } },
    async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE];
      if (token) await signOut(ctx.db, token);
      clearSessionCookies(reply);
      return reply.code(204).send(null);
    },
  );

  r.get(
    '/auth/session',
    {
      schema: {
        tags: ['auth'],
        summary: 'The caller: a signed-in user or an API key, and its organization',
        response: { 200: SessionSchema, ...commonErrors },
      },
    },
    async (request) => {
      const p = principalOf(request);
      const org = (await getOrganization(ctx.db, p.organizationId))!;
      if (p.kind === 'apiKey')
        return { via: 'api-key' as const, user: null, apiKey: { id: p.keyId, name: p.name, role: p.role }, organization: { id: org.id, name: org.name } };
      const user = (await getPortalUser(ctx.db, p.userId))!;
      return {
        via: 'session' as const,
        user: { id: user.id, email: user.email, displayName: user.display_name, role: p.role },
        apiKey: null,
        organization: { id: org.id, name: org.name },
      };
    },
  );
}
