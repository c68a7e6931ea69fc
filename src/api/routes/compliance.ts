import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ComplianceQuery, ComplianceViewSchema } from '../../contract/compliance.ts';
import { commonErrors } from '../../contract/common.ts';
import { complianceView } from '../../reporting/compliance.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';

/** `/api/v1/compliance`: frameworks and peer baselines, what covers each item, and the organization's status per item. */
export function complianceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/compliance',
    {
      schema: {
        tags: ['compliance'],
        summary:
          'Per framework (OWASP LLM 2025, MITRE ATLAS, MITRE ATT&CK) and peer baseline (ScubaGear, Maester, Sentinel): each item, the checks and detections covering it, its status from the latest results and open alerts, and what is not covered and why',
        querystring: ComplianceQuery,
        response: { 200: ComplianceViewSchema, ...commonErrors },
      },
    },
    async (request) => complianceView(ctx.db, principalOf(request), request.query),
  );
}
