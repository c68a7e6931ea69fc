import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeIntegrations } from '../../access/scope.ts';
import { FINDING_EXPORT_FORMATS, FINDING_EXPORT_MEDIA, renderFindings } from '../../exports/findings.ts';
import { VIGIL_VERSION } from '../../sinks/index.ts';
import { listFindings } from '../../store/repositories/findings.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors } from '../schemas.ts';

/** `/api/v1/exports/findings`: the organization's findings as JSON, CSV, SARIF 2.1.0 or OCSF Detection Findings. */
export function exportRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/exports/findings', {
    schema: {
      tags: ['exports'],
      summary: 'Download findings for other tools (as an attachment)',
      querystring: z.object({
        format: z.enum(FINDING_EXPORT_FORMATS).describe('json, csv (RFC 4180), sarif (SARIF 2.1.0), ocsf (OCSF 1.9.0 Detection Finding array), ocsf-ndjson'),
        integrationId: z.string().max(200).optional(),
        status: z.enum(['open', 'resolved', 'suppressed', 'all']).default('all'),
      }),
      response: { 200: z.string().describe('The file'), ...commonErrors },
    },
  }, async (request, reply) => {
    const p = principalOf(request);
    const ids = await scopeIntegrations(ctx.db, p, request.query.integrationId);
    const status = request.query.status === 'all' ? undefined : request.query.status;
    const rows = (await Promise.all(ids.map((integrationId) => listFindings(ctx.db, { integrationId, status })))).flat();
    const tenants = new Map((await ctx.db.selectFrom('integrations').select(['id', 'tenant_id']).where('organization_id', '=', p.organizationId).execute()).map((i) => [i.id, i.tenant_id]));
    const media = FINDING_EXPORT_MEDIA[request.query.format];
    const text = renderFindings(rows, request.query.format, { checks: [...ctx.checks.values()], tenants, version: VIGIL_VERSION });
    return reply
      .type(media.contentType)
      .header('content-disposition', `attachment; filename="vigil-findings-${new Date().toISOString().slice(0, 10)}.${media.extension}"`)
      .header('cache-control', 'no-store')
      .serializer((s: string) => s)
      .send(text);
  });
}
