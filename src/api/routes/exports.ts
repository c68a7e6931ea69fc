import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { scopeIntegrations } from '../../access/scope.ts';
import { exportFindings, FINDING_EXPORT_MEDIA } from '../../exports/findings.ts';
import { VIGIL_VERSION } from '../../sinks/index.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors } from '../../contract/common.ts';
import { FindingExportFile, FindingExportQuery } from '../../contract/exports.ts';

/** `/api/v1/exports/findings`: the organization's findings as JSON, CSV, SARIF 2.1.0 or OCSF Detection Findings. */
export function exportRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/exports/findings',
    {
      schema: {
        tags: ['exports'],
        summary: 'Download findings for other tools (as an attachment)',
        querystring: FindingExportQuery,
        response: { 200: FindingExportFile, ...commonErrors },
      },
    },
    async (request, reply) => {
      const integrationIds = await scopeIntegrations(ctx.db, principalOf(request), request.query.integrationId);
      const status = request.query.status === 'all' ? undefined : request.query.status;
      const { text } = await exportFindings(ctx.db, {
        integrationIds,
        status,
        severity: request.query.severity,
        checkId: request.query.checkId,
        resourceId: request.query.resourceId,
        format: request.query.format,
        checks: [...ctx.checks.values()],
        version: VIGIL_VERSION,
      });
      const media = FINDING_EXPORT_MEDIA[request.query.format];
      return reply
        .type(media.contentType)
        .header('content-disposition', `attachment; filename="vigil-findings-${new Date().toISOString().slice(0, 10)}.${media.extension}"`)
        .header('cache-control', 'no-store')
        .serializer((s: string) => s)
        .send(text);
    },
  );
}
