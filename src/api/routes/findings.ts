import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { dashboard, findingDetail, listFindingsPage, suppressFinding, unsuppressFinding } from '../../reporting/index.ts';
import { commonErrors, ErrorSchema, IdParams } from '../../contract/common.ts';
import { CheckListSchema, DashboardSchema, FindingDetailSchema, FindingPageSchema, FindingsQuery, SuppressionBody } from '../../contract/findings.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';

/** `/api/v1/findings` (filter, suppress, history), `/api/v1/dashboard` and `/api/v1/checks` (the catalogue). */
export function findingRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/findings',
    {
      schema: {
        tags: ['findings'],
        summary: 'Findings, most severe first',
        querystring: FindingsQuery,
        response: { 200: FindingPageSchema, ...commonErrors },
      },
    },
    async (request) => listFindingsPage(ctx.db, principalOf(request), ctx.checks, request.query),
  );

  r.get(
    '/findings/:id',
    {
      schema: {
        tags: ['findings'],
        summary: 'One finding with its check and its history',
        params: IdParams,
        response: { 200: FindingDetailSchema, ...commonErrors },
      },
    },
    async (request) => findingDetail(ctx.db, principalOf(request), ctx.checks, request.params.id),
  );

  r.post(
    '/findings/:id/suppression',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['findings'],
        summary: 'Suppress a finding (accepted risk) with a reason, until a date or until lifted; recorded in its history',
        params: IdParams,
        body: SuppressionBody,
        response: { 200: FindingDetailSchema, ...commonErrors },
      },
    },
    async (request) => suppressFinding(ctx.db, principalOf(request), ctx.checks, request.params.id, request.body),
  );

  r.delete(
    '/findings/:id/suppression',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['findings'],
        summary: 'Lift the suppression of a finding',
        params: IdParams,
        response: { 200: FindingDetailSchema, 409: ErrorSchema, ...commonErrors },
      },
    },
    async (request) => unsuppressFinding(ctx.db, principalOf(request), ctx.checks, request.params.id),
  );

  r.get(
    '/dashboard',
    {
      schema: {
        tags: ['findings'],
        summary: 'Open findings by severity per day (30 days, UTC), riskiest agents, coverage, last collection per integration',
        response: { 200: DashboardSchema, ...commonErrors },
      },
    },
    async (request) => dashboard(ctx.db, principalOf(request), ctx.checks),
  );

  r.get(
    '/checks',
    {
      schema: {
        tags: ['findings'],
        summary: 'The check catalogue: every check with its area, severity, risk, remediation, frameworks and peers, by id',
        response: { 200: CheckListSchema, ...commonErrors },
      },
    },
    async () => ({
      items: [...ctx.checks.values()]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((c) => ({
          id: c.id,
          title: c.title,
          area: c.area,
          severity: c.severity,
          resourceType: c.resourceType,
          risk: c.risk,
          remediation: c.remediation,
          references: c.references,
          frameworks: c.frameworks,
          peers: c.peers,
        })),
    }),
  );
}
