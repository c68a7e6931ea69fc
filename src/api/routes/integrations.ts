import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { integrationOf } from '../../access/scope.ts';
import { consentLink } from '../../onboarding/consent.ts';
import { integrationDetail, showIntegration } from '../../onboarding/doctor.ts';
import { environmentAccess, grantEnvironmentAccess } from '../../onboarding/environments.ts';
import {
  addCustomerAppIntegration,
  addManagedAppIntegration,
  listIntegrationSummaries,
  removeIntegration,
  rotateSecret,
  toView,
  verifyStoredIntegration,
} from '../../onboarding/integrations.ts';
import { getIntegration } from '../../integration/index.ts';
import { registrationInstructions } from '../../onboarding/registration.ts';
import { listIntegrationRuns } from '../../reporting/index.ts';
import type { IntegrationRow } from '../../store/repositories/integrations.ts';
import { actorOf } from '../../access/index.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema, IdParams, NoContent } from '../../contract/common.ts';
import {
  ConsentLinkBody,
  ConsentLinkSchema,
  CreateIntegrationBody,
  EnvironmentListSchema,
  GrantListSchema,
  IntegrationDetailSchema,
  IntegrationListSchema,
  RegistrationSchema,
  RotateSecretBody,
} from '../../contract/integrations.ts';
import { RunListSchema, RunsQuery } from '../../contract/runs.ts';

/** `/api/v1/integrations`: list, create in either mode, consent link, verify, rotate, registration, environments, remove. */
export function integrationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  const detail = (row: IntegrationRow) => integrationDetail(ctx.db, row, ctx.region);

  r.get(
    '/integrations',
    { schema: { tags: ['integrations'], summary: "The organization's integrations", response: { 200: IntegrationListSchema, ...commonErrors } } },
    async (request) => ({ items: await listIntegrationSummaries(ctx.db, principalOf(request)) }),
  );

  r.post(
    '/integrations',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['integrations'],
        summary: 'Create an integration: a customer-created app (Mode A) or the operator-managed app after admin consent (Mode B)',
        description:
          'The credentials and setup are verified against the tenant before anything is stored; the client secret is stored encrypted and never returned.',
        body: CreateIntegrationBody,
        response: { 201: IntegrationDetailSchema, 409: ErrorSchema, 422: ErrorSchema, 502: ErrorSchema, 503: ErrorSchema, ...commonErrors },
      },
    },
    async (request, reply) => {
      const organizationId = principalOf(request).organizationId;
      const b = request.body;
      const created =
        b.mode === 'customer-app'
          ? await addCustomerAppIntegration(ctx, {
              organizationId,
              name: b.name,
              tenantId: b.tenantId,
              clientId: b.clientId,
              clientSecret: b.clientSecret,
              secretExpires: b.secretExpires,
            })
          : await addManagedAppIntegration(ctx, { organizationId, name: b.name, tenant: b.tenant, spObjectId: b.servicePrincipalObjectId });
      return reply.code(201).send(await detail(await getIntegration(ctx.db, created.integration.id)));
    },
  );

  r.post(
    '/integrations/consent-link',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['integrations'],
        summary:
          "Mode B, step 1: the admin consent link of the operator-managed application for a tenant (single use; its sign-in binds the tenant to the caller's organization)",
        body: ConsentLinkBody,
        response: { 200: ConsentLinkSchema, 503: ErrorSchema, ...commonErrors },
      },
    },
    async (request) => {
      const p = principalOf(request);
      return consentLink(ctx, request.body.tenant.trim(), undefined, { organizationId: p.organizationId, initiatedBy: actorOf(p) });
    },
  );

  r.get(
    '/integrations/:id',
    {
      schema: {
        tags: ['integrations'],
        summary: 'One integration with its setup checklist',
        params: IdParams,
        response: { 200: IntegrationDetailSchema, ...commonErrors },
      },
    },
    async (request) => showIntegration(ctx.db, principalOf(request), request.params.id, ctx.region),
  );

  r.post(
    '/integrations/:id/verify',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['integrations'],
        summary: 'Verify the setup now: tokens, permissions, registration, environment access',
        params: IdParams,
        response: { 200: IntegrationDetailSchema, 422: ErrorSchema, 502: ErrorSchema, ...commonErrors },
      },
    },
    async (request) => {
      const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
      await verifyStoredIntegration(ctx, row.id);
      return detail(await getIntegration(ctx.db, row.id));
    },
  );

  r.put(
    '/integrations/:id/secret',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['integrations'],
        summary: 'Rotate the client secret (Mode A): the new secret must work before it replaces the old one',
        params: IdParams,
        body: RotateSecretBody,
        response: { 200: IntegrationDetailSchema, 422: ErrorSchema, ...commonErrors },
      },
    },
    async (request) => {
      const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
      await rotateSecret(ctx, row.id, request.body);
      return detail(await getIntegration(ctx.db, row.id));
    },
  );

  r.get(
    '/integrations/:id/registration',
    {
      schema: {
        tags: ['integrations'],
        summary: 'Registration as a Power Platform admin management application: status and both ways to register',
        params: IdParams,
        response: { 200: RegistrationSchema, ...commonErrors },
      },
    },
    async (request) => {
      const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
      const report = toView(row).verification;
      const how = registrationInstructions(ctx.cloud, row.client_id);
      return {
        registered: report?.managementApp.registered ?? null,
        detail: report?.managementApp.detail ?? 'Not verified yet.',
        applicationId: how.applicationId,
        powershell: how.powershell,
        api: how.api,
      };
    },
  );

  r.get(
    '/integrations/:id/environments',
    {
      schema: {
        tags: ['integrations'],
        summary: 'System Administrator access per environment, as last verified',
        params: IdParams,
        response: { 200: EnvironmentListSchema, ...commonErrors },
      },
    },
    async (request) => ({ items: await environmentAccess(ctx.db, principalOf(request), request.params.id) }),
  );

  r.post(
    '/integrations/:id/environments/grant',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['integrations'],
        summary: 'Give the service principal the System Administrator role in every environment where it lacks it (BAP addAppUser)',
        params: IdParams,
        response: { 200: GrantListSchema, 422: ErrorSchema, 502: ErrorSchema, ...commonErrors },
      },
    },
    async (request) => {
      const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
      return { items: await grantEnvironmentAccess(ctx, row.id) };
    },
  );

  r.delete(
    '/integrations/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['integrations'],
        summary: 'Remove the integration and everything collected for it',
        params: IdParams,
        response: { 204: NoContent, ...commonErrors },
      },
    },
    async (request, reply) => {
      const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
      await removeIntegration(ctx.db, row.id);
      return reply.code(204).send(null);
    },
  );

  // Runs of one integration live here too: they are addressed through it.
  r.get(
    '/integrations/:id/runs',
    {
      schema: {
        tags: ['runs'],
        summary: 'Recent collection runs, newest first',
        params: IdParams,
        querystring: RunsQuery,
        response: { 200: RunListSchema, ...commonErrors },
      },
    },
    async (request) => {
      return { items: await listIntegrationRuns(ctx.db, principalOf(request), request.params.id, request.query.limit) };
    },
  );
}
