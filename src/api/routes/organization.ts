import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { actorOf, addPortalUser, createApiKey, listApiKeys, listPortalUsers, revokeApiKey, updatePortalUser } from '../../access/index.ts';
import { getOrganization } from '../../store/repositories/access.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema, NoContent } from '../../contract/common.ts';
import {
  AddPortalUserBody,
  ApiKeyListSchema,
  ApiKeyParams,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  OrganizationDetailSchema,
  PortalUserListSchema,
  PortalUserParams,
  PortalUserSchema,
  RegionSchema,
  SinkListSchema,
  SinkTestSchema,
  UpdatePortalUserBody,
} from '../../contract/organization.ts';

/** `/api/v1/organization`: the caller's organization, its portal users and API keys (admin), and the region. */
export function organizationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/organization',
    { schema: { tags: ['organization'], summary: "The caller's organization", response: { 200: OrganizationDetailSchema, ...commonErrors } } },
    async (request) => {
      const org = (await getOrganization(ctx.db, principalOf(request).organizationId))!;
      return { id: org.id, name: org.name, createdAt: org.created_at };
    },
  );

  r.get(
    '/organization/users',
    {
      config: { access: 'admin' },
      schema: { tags: ['organization'], summary: 'Portal users of the organization', response: { 200: PortalUserListSchema, ...commonErrors } },
    },
    async (request) => ({
      items: await listPortalUsers(ctx.db, principalOf(request).organizationId),
    }),
  );

  r.post(
    '/organization/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: 'Add a portal user (password of 12 to 256 characters)',
        body: AddPortalUserBody,
        response: { 201: PortalUserSchema, 409: ErrorSchema, ...commonErrors },
      },
    },
    async (request, reply) => {
      const user = await addPortalUser(ctx.db, { organizationId: principalOf(request).organizationId, ...request.body });
      return reply.code(201).send(user);
    },
  );

  r.patch(
    '/organization/users/:userId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: "Change a portal user's role, or disable or enable the account (a disabled user's sessions end at once)",
        description: 'The organization always keeps one enabled admin: a change that would leave none answers 409 LAST_ADMIN.',
        params: PortalUserParams,
        body: UpdatePortalUserBody,
        response: { 200: PortalUserSchema, 409: ErrorSchema, ...commonErrors },
      },
    },
    async (request) => updatePortalUser(ctx.db, principalOf(request).organizationId, request.params.userId, request.body),
  );

  r.get(
    '/organization/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: 'API keys of the organization (never the keys themselves)',
        response: { 200: ApiKeyListSchema, ...commonErrors },
      },
    },
    async (request) => ({
      items: await listApiKeys(ctx.db, principalOf(request).organizationId),
    }),
  );

  r.post(
    '/organization/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: 'Create an API key: the key is in this answer once, and only its SHA-256 is stored',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeySchema, ...commonErrors },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const created = await createApiKey(ctx.db, {
        organizationId: p.organizationId,
        name: request.body.name,
        role: request.body.role,
        expiresAt: request.body.expiresAt ?? null,
        createdBy: actorOf(p),
      });
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  r.delete(
    '/organization/api-keys/:keyId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: 'Revoke an API key (it stops working at once)',
        params: ApiKeyParams,
        response: { 204: NoContent, ...commonErrors },
      },
    },
    async (request, reply) => {
      await revokeApiKey(ctx.db, principalOf(request).organizationId, request.params.keyId);
      return reply.code(204).send(null);
    },
  );

  r.get(
    '/organization/sinks',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: "The deployment's SIEM sinks (webhook, syslog) and where they send; empty when none is configured",
        response: { 200: SinkListSchema, ...commonErrors },
      },
    },
    async () => ({ items: ctx.sinks?.targets ?? [] }),
  );

  r.post(
    '/organization/sinks/test',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['organization'],
        summary: 'Send one test event (an informational OCSF Detection Finding) to each configured sink and report each outcome',
        response: { 200: SinkTestSchema, ...commonErrors },
      },
    },
    async () => ({ items: ctx.sinks ? await ctx.sinks.test() : [] }),
  );

  r.get(
    '/region',
    {
      schema: {
        tags: ['organization'],
        summary: "The deployment's region: the source addresses to safelist, the API and portal URLs",
        response: { 200: RegionSchema, ...commonErrors },
      },
    },
    async () => ({
      id: ctx.region.id,
      name: ctx.region.name,
      egressIps: [...ctx.region.egressIps],
      apiUrl: ctx.region.apiUrl,
      portalUrl: ctx.region.portalUrl,
    }),
  );
}
