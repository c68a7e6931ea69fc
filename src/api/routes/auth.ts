import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { signIn, signOut } from '../../access/index.ts';
import { getOrganization, getPortalUser } from '../../store/repositories/access.ts';
import { clearSessionCookies, principalOf, SESSION_COOKIE, setSessionCookies } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema } from '../schemas.ts';

const UserSchema = z.object({ id: z.string(), email: z.string(), displayName: z.string().nullable(), role: z.enum(['admin', 'viewer']) });
const OrganizationSchema = z.object({ id: z.string(), name: z.string() });

/** `/api/v1/auth`: sign-in (rate-limited per client address), sign-out, and who the caller is. */
export function authRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post('/auth/login', {
    config: { access: 'public', rateLimit: { max: ctx.loginAttemptsPerMinute, timeWindow: 60_000 } },
    schema: {
      tags: ['auth'],
      summary: 'Sign in to the portal: sets the session cookie (HttpOnly) and the CSRF cookie',
      body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
      response: { 200: z.object({ user: UserSchema, organization: OrganizationSchema, csrfToken: z.string(), expiresAt: z.string() }), 400: ErrorSchema, 401: ErrorSchema, 429: ErrorSchema },
    },
  }, async (request, reply) => {
    const s = await signIn(ctx.db, request.body.email, request.body.password, ctx.access);
    setSessionCookies(ctx, request, reply, s);
    const org = await getOrganization(ctx.db, s.user.organizationId);
    return { user: { id: s.user.id, email: s.user.email, displayName: s.user.displayName, role: s.user.role }, organization: { id: org!.id, name: org!.name }, csrfToken: s.csrfToken, expiresAt: s.expiresAt };
  });

  r.post('/auth/logout', { schema: { tags: ['auth'], summary: 'Sign out: ends the session', response: { 204: z.null(), ...commonErrors } } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token) await signOut(ctx.db, token);
    clearSessionCookies(reply);
    return reply.code(204).send(null);
  });

  r.get('/auth/session', {
    schema: {
      tags: ['auth'],
      summary: 'The caller: a signed-in user or an API key, and its organization',
      response: { 200: z.object({ via: z.enum(['session', 'api-key']), user: UserSchema.nullable(), apiKey: z.object({ id: z.string(), name: z.string(), role: z.enum(['admin', 'viewer']) }).nullable(), organization: OrganizationSchema }), ...commonErrors },
    },
  }, async (request) => {
    const p = principalOf(request);
    const org = (await getOrganization(ctx.db, p.organizationId))!;
    if (p.kind === 'apiKey') return { via: 'api-key' as const, user: null, apiKey: { id: p.keyId, name: p.name, role: p.role }, organization: { id: org.id, name: org.name } };
    const user = (await getPortalUser(ctx.db, p.userId))!;
    return { via: 'session' as const, user: { id: user.id, email: user.email, displayName: user.display_name, role: p.role }, apiKey: null, organization: { id: org.id, name: org.name } };
  });
}
