import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { integrationOf } from '../../access/scope.ts';
import { consentLink } from '../../onboarding/consent.ts';
import { integrationDetail } from '../../onboarding/doctor.ts';
import { grantEnvironmentAccess } from '../../onboarding/environments.ts';
import { addCustomerAppIntegration, addManagedAppIntegration, getIntegration, integrationSummary, removeIntegration, rotateSecret, toView, verifyStoredIntegration } from '../../onboarding/integrations.ts';
import { registrationInstructions } from '../../onboarding/registration.ts';
import { listIntegrationRuns } from '../../reporting/index.ts';
import { listOrganizationIntegrations, type IntegrationRow } from '../../store/repositories/integrations.ts';
import { actorOf, principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema, IdParams, RunSchema, Timestamp } from '../schemas.ts';

const IntegrationSchema = z.object({
  id: z.string(),
  name: z.string(),
  mode: z.enum(['customer-app', 'managed-app']),
  tenantId: z.string(),
  clientId: z.string().describe('Application (client) ID'),
  servicePrincipalObjectId: z.string().nullable(),
  secretExpiresAt: Timestamp.nullable(),
  secretDaysLeft: z.number().nullable().describe('Whole days until the client secret expires (negative once expired)'),
  secretWarning: z.string().nullable(),
  createdAt: Timestamp,
  verifiedAt: Timestamp.nullable(),
  credentialState: z.string().describe('ok, expired or rejected; collection stops until ok'),
  credentialError: z.string().nullable(),
  lastRun: RunSchema.pick({ id: true, status: true, startedAt: true, finishedAt: true }).nullable(),
});

const EnvironmentAccessSchema = z.object({ id: z.string(), name: z.string().nullable(), dataverse: z.boolean(), agentsReadable: z.boolean().nullable(), reason: z.string().optional() });

const VerificationSchema = z.object({
  verified: z.boolean(),
  servicePrincipalObjectId: z.string().nullable(),
  permissionList: z.enum(['quick', 'step-by-step', 'partial']),
  grantedRoles: z.record(z.string(), z.array(z.string())),
  capabilities: z.array(z.object({ id: z.string(), title: z.string(), api: z.string(), status: z.enum(['granted', 'missing']), grantedBy: z.string().optional(), add: z.string().optional(), detail: z.string().optional() })),
  missingPermissions: z.array(z.object({ api: z.string(), permission: z.string(), capability: z.string() })),
  managementApp: z.object({ registered: z.boolean().nullable(), detail: z.string() }),
  powerBi: z
    .object({ access: z.enum(['granted', 'refused', 'unknown']), consentedPermissions: z.array(z.string()), tenantSetting: z.string(), detail: z.string(), fix: z.string().optional() })
    .optional()
    .describe('Power BI read-only admin API access, judged by what the API answered'),
  environments: z.array(EnvironmentAccessSchema),
  warnings: z.array(z.string()),
  checkedAt: Timestamp,
});

const DetailSchema = z.object({
  integration: IntegrationSchema,
  verification: VerificationSchema.nullable(),
  steps: z.array(z.object({ order: z.number(), title: z.string(), state: z.enum(['done', 'incomplete', 'missing', 'info']), observed: z.string(), fix: z.string().optional() })).describe('The ordered setup checklist of the seed, as last verified'),
  safelist: z.object({ region: z.string(), name: z.string(), egressIps: z.array(z.string()) }),
});

const CreateBody = z.discriminatedUnion('mode', [
  z.object({
    mode: z.literal('customer-app'),
    name: z.string().max(200).optional(),
    tenantId: z.string().max(100).describe('Directory (tenant) ID, a GUID'),
    clientId: z.string().max(100).describe('Application (client) ID of your app registration, a GUID'),
    clientSecret: z.string().max(1024).describe('The secret Value (not its Secret ID); write-only'),
    secretExpires: z.string().max(40).optional().describe('YYYY-MM-DD the secret expires; default 24 months from today'),
  }),
  z.object({
    mode: z.literal('managed-app'),
    name: z.string().max(200).optional(),
    tenant: z.string().max(253).describe('Tenant ID or primary domain (contoso.onmicrosoft.com)'),
    servicePrincipalObjectId: z.string().max(100).describe("Object ID of Vigil's enterprise application in your tenant"),
  }),
]);

/** `/api/v1/integrations`: list, create in either mode, consent link, verify, rotate, registration, environments, remove. */
export function integrationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  const detail = (row: IntegrationRow) => integrationDetail(ctx.db, row, ctx.region);

  r.get('/integrations', { schema: { tags: ['integrations'], summary: "The organization's integrations", response: { 200: z.object({ items: z.array(IntegrationSchema) }), ...commonErrors } } }, async (request) => {
    const rows = await listOrganizationIntegrations(ctx.db, principalOf(request).organizationId);
    return { items: await Promise.all(rows.map((row) => integrationSummary(ctx.db, row))) };
  });

  r.post('/integrations', {
    config: { access: 'admin' },
    schema: {
      tags: ['integrations'],
      summary: 'Create an integration: a customer-created app (Mode A) or the operator-managed app after admin consent (Mode B)',
      description: 'The credentials and setup are verified against the tenant before anything is stored; the client secret is stored encrypted and never returned.',
      body: CreateBody,
      response: { 201: DetailSchema, 409: ErrorSchema, 422: ErrorSchema, 502: ErrorSchema, 503: ErrorSchema, ...commonErrors },
    },
  }, async (request, reply) => {
    const organizationId = principalOf(request).organizationId;
    const b = request.body;
    const created =
      b.mode === 'customer-app'
        ? await addCustomerAppIntegration(ctx, { organizationId, name: b.name, tenantId: b.tenantId, clientId: b.clientId, clientSecret: b.clientSecret, secretExpires: b.secretExpires })
        : await addManagedAppIntegration(ctx, { organizationId, name: b.name, tenant: b.tenant, spObjectId: b.servicePrincipalObjectId });
    return reply.code(201).send(await detail(await getIntegration(ctx.db, created.integration.id)));
  });

  r.post('/integrations/consent-link', {
    config: { access: 'admin' },
    schema: {
      tags: ['integrations'],
      summary: "Mode B, step 1: the admin consent link of the operator-managed application for a tenant (single use; its sign-in binds the tenant to the caller's organization)",
      body: z.object({ tenant: z.string().min(1).max(253).describe('Tenant ID or primary domain') }),
      response: { 200: z.object({ url: z.string(), tenantId: z.string(), clientId: z.string(), redirectUri: z.string(), expiresAt: Timestamp, instructions: z.array(z.string()) }), 503: ErrorSchema, ...commonErrors },
    },
  }, async (request) => {
    const p = principalOf(request);
    return consentLink(ctx, request.body.tenant.trim(), undefined, { organizationId: p.organizationId, initiatedBy: actorOf(p) });
  });

  r.get('/integrations/:id', { schema: { tags: ['integrations'], summary: 'One integration with its setup checklist', params: IdParams, response: { 200: DetailSchema, ...commonErrors } } }, async (request) =>
    detail(await integrationOf(ctx.db, principalOf(request), request.params.id)),
  );

  r.post('/integrations/:id/verify', {
    config: { access: 'admin' },
    schema: { tags: ['integrations'], summary: 'Verify the setup now: tokens, permissions, registration, environment access', params: IdParams, response: { 200: DetailSchema, 422: ErrorSchema, 502: ErrorSchema, ...commonErrors } },
  }, async (request) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    await verifyStoredIntegration(ctx, row.id);
    return detail(await getIntegration(ctx.db, row.id));
  });

  r.put('/integrations/:id/secret', {
    config: { access: 'admin' },
    schema: {
      tags: ['integrations'],
      summary: 'Rotate the client secret (Mode A): the new secret must work before it replaces the old one',
      params: IdParams,
      body: z.object({ clientSecret: z.string().max(1024), secretExpires: z.string().max(40).optional() }),
      response: { 200: DetailSchema, 422: ErrorSchema, ...commonErrors },
    },
  }, async (request) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    await rotateSecret(ctx, row.id, request.body);
    return detail(await getIntegration(ctx.db, row.id));
  });

  r.get('/integrations/:id/registration', {
    schema: {
      tags: ['integrations'],
      summary: 'Registration as a Power Platform admin management application: status and both ways to register',
      params: IdParams,
      response: { 200: z.object({ registered: z.boolean().nullable(), detail: z.string(), applicationId: z.string(), powershell: z.array(z.string()), api: z.object({ method: z.literal('PUT'), url: z.string(), note: z.string() }) }), ...commonErrors },
    },
  }, async (request) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    const report = toView(row).verification;
    const how = registrationInstructions(ctx.cloud, row.client_id);
    return { registered: report?.managementApp.registered ?? null, detail: report?.managementApp.detail ?? 'Not verified yet.', applicationId: how.applicationId, powershell: how.powershell, api: how.api };
  });

  r.get('/integrations/:id/environments', {
    schema: { tags: ['integrations'], summary: 'System Administrator access per environment, as last verified', params: IdParams, response: { 200: z.object({ items: z.array(EnvironmentAccessSchema) }), ...commonErrors } },
  }, async (request) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    return { items: toView(row).verification?.environments ?? [] };
  });

  r.post('/integrations/:id/environments/grant', {
    config: { access: 'admin' },
    schema: {
      tags: ['integrations'],
      summary: "Give the service principal the System Administrator role in every environment where it lacks it (BAP addAppUser)",
      params: IdParams,
      response: { 200: z.object({ items: z.array(z.object({ environmentId: z.string(), name: z.string().nullable(), result: z.enum(['granted', 'already-granted', 'failed', 'no-dataverse']), via: z.enum(['addAppUser', 'dataverse']).optional(), reason: z.string().optional(), fix: z.string().optional() })) }), 422: ErrorSchema, 502: ErrorSchema, ...commonErrors },
    },
  }, async (request) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    return { items: await grantEnvironmentAccess(ctx, row.id) };
  });

  r.delete('/integrations/:id', {
    config: { access: 'admin' },
    schema: { tags: ['integrations'], summary: 'Remove the integration and everything collected for it', params: IdParams, response: { 204: z.null(), ...commonErrors } },
  }, async (request, reply) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    await removeIntegration(ctx.db, row.id);
    return reply.code(204).send(null);
  });

  // Runs of one integration live here too: they are addressed through it.
  r.get('/integrations/:id/runs', {
    schema: { tags: ['runs'], summary: 'Recent collection runs, newest first', params: IdParams, querystring: z.object({ limit: z.coerce.number().int().min(1).max(200).default(20) }), response: { 200: z.object({ items: z.array(RunSchema) }), ...commonErrors } },
  }, async (request) => {
    return { items: await listIntegrationRuns(ctx.db, principalOf(request), request.params.id, request.query.limit) };
  });
}
