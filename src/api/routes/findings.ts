import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { dashboard, findingDetail, listFindingsPage, suppressOwnedFinding, unsuppressOwnedFinding } from '../../reporting/index.ts';
import { SEVERITIES } from '../../core/types.ts';
import { actorOf, principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema, FindingSchema, IdParams, Json, page, PageQuery, RunSchema, SeveritySchema, Timestamp } from '../schemas.ts';

const FindingDetailSchema = FindingSchema.extend({
  check: z.object({ title: z.string(), risk: z.string(), remediation: z.string(), references: z.array(z.string()) }).nullable(),
  history: z.array(z.object({ event: z.string(), at: Timestamp, detail: Json.nullable() })),
});

/** `/api/v1/findings` (filter, suppress, history) and `/api/v1/dashboard`. */
export function findingRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/findings', {
    schema: {
      tags: ['findings'],
      summary: 'Findings, most severe first',
      querystring: PageQuery.extend({
        integrationId: z.string().max(200).optional(),
        severity: SeveritySchema.optional(),
        status: z.enum(['open', 'resolved', 'suppressed', 'all']).default('open').describe('open: open and not suppressed'),
        checkId: z.string().max(200).optional(),
        resourceId: z.string().max(400).optional(),
      }),
      response: { 200: page(FindingSchema), ...commonErrors },
    },
  }, async (request) => listFindingsPage(ctx.db, principalOf(request), ctx.checks, request.query));

  r.get('/findings/:id', { schema: { tags: ['findings'], summary: 'One finding with its check and its history', params: IdParams, response: { 200: FindingDetailSchema, ...commonErrors } } }, async (request) =>
    findingDetail(ctx.db, principalOf(request), ctx.checks, request.params.id),
  );

  r.post('/findings/:id/suppression', {
    config: { access: 'admin' },
    schema: {
      tags: ['findings'],
      summary: 'Suppress a finding (accepted risk) with a reason, until a date or until lifted; recorded in its history',
      params: IdParams,
      body: z.object({ reason: z.string().max(2000), expiresAt: z.string().max(40).nullable().optional().describe('ISO 8601 date in the future; none: until lifted') }),
      response: { 200: FindingDetailSchema, ...commonErrors },
    },
  }, async (request) => {
    const p = principalOf(request);
    await suppressOwnedFinding(ctx.db, p, request.params.id, { reason: request.body.reason, expiresAt: request.body.expiresAt, author: actorOf(p) });
    return findingDetail(ctx.db, p, ctx.checks, request.params.id);
  });

  r.delete('/findings/:id/suppression', {
    config: { access: 'admin' },
    schema: { tags: ['findings'], summary: 'Lift the suppression of a finding', params: IdParams, response: { 200: FindingDetailSchema, 409: ErrorSchema, ...commonErrors } },
  }, async (request) => {
    const p = principalOf(request);
    await unsuppressOwnedFinding(ctx.db, p, request.params.id, actorOf(p));
    return findingDetail(ctx.db, p, ctx.checks, request.params.id);
  });

  r.get('/dashboard', {
    schema: {
      tags: ['findings'],
      summary: 'Open findings by severity per day (30 days, UTC), riskiest agents, coverage, last collection per integration',
      response: {
        200: z.object({
          severityOverTime: z.array(z.object({ date: z.string(), ...Object.fromEntries(SEVERITIES.map((s) => [s, z.number()])) })),
          riskiestAgents: z.array(z.object({ integrationId: z.string(), agentId: z.string(), environmentId: z.string(), name: z.string().nullable(), score: z.number(), openFindings: z.number(), reach: z.string(), reasons: z.array(z.string()) })),
          /** What was not evaluated and why: per integration, check and reason (the gap: stream, slice, code), the count and the first resources by name. */
          coverage: z.array(
            z.object({
              integrationId: z.string(),
              integrationName: z.string(),
              checkId: z.string(),
              title: z.string(),
              notEvaluated: z.number().int().describe('Resources (or scopes) of this check not evaluated for this reason'),
              reason: z.string().nullable(),
              resources: z.array(z.object({ resourceType: z.string(), resourceId: z.string(), resourceName: z.string().nullable() })).describe('The first resources of the group by name (at most 10)'),
            }),
          ),
          lastCollections: z.array(z.object({ integrationId: z.string(), name: z.string(), run: RunSchema.nullable() })),
        }),
        ...commonErrors,
      },
    },
  }, async (request) => dashboard(ctx.db, principalOf(request), ctx.checks));
}
