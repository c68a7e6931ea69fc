import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  dashboard,
  findingDetail,
  liftFindingSuppressions,
  listFindingsPage,
  suppressFinding,
  suppressFindings,
  unsuppressFinding,
} from '../../reporting/index.ts';
import { commonErrors, ErrorSchema, IdParams } from '../../contract/common.ts';
import {
  CheckListSchema,
  DashboardSchema,
  FindingDetailSchema,
  FindingPageSchema,
  FindingsBulkAnswer,
  FindingsBulkLiftBody,
  FindingsBulkSuppressionBody,
  FindingsQuery,
  SuppressionBody,
} from '../../contract/findings.ts';
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
        summary: 'Findings, filtered, searched and sorted (most severe first by default), with their total',
        querystring: FindingsQuery,
        response: { 200: FindingPageSchema, ...commonErrors },
      },
    },
    async (request) => listFindingsPage(ctx.db, principalOf(request), ctx.checks, { ...request.query, suppressed: queryBoolean(request.query.suppressed) }),
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

  r.post(
    '/findings/suppression',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['findings'],
        summary: 'Suppress several findings at once with one reason and expiry (all or nothing; each recorded in its history)',
        body: FindingsBulkSuppressionBody,
        response: { 200: FindingsBulkAnswer, ...commonErrors },
      },
    },
    async (request) => suppressFindings(ctx.db, principalOf(request), ctx.checks, request.body.ids, request.body),
  );

  r.post(
    '/findings/suppression/lift',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['findings'],
        summary: 'Lift the suppression of several findings at once (all or nothing; each recorded in its history)',
        body: FindingsBulkLiftBody,
        response: { 200: FindingsBulkAnswer, ...commonErrors },
      },
    },
    async (request) => liftFindingSuppressions(ctx.db, principalOf(request), ctx.checks, request.body.ids),
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

/** A query string's `true` / `false` as a boolean (absent stays absent). */
export function queryBoolean(v: 'true' | 'false' | undefined): boolean | undefined {
  return v === undefined ? undefined : v === 'true';
}
