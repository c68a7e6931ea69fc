import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { FINDING_EXPORT_MEDIA } from '../../exports/findings.ts';
import { exportFindingsOf } from '../../reporting/index.ts';
import { VIGIL_VERSION } from '../../sinks/index.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { queryBoolean } from './findings.ts';
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
      const { text } = await exportFindingsOf(ctx.db, principalOf(request), ctx.checks, {
        ...request.query,
        suppressed: queryBoolean(request.query.suppressed),
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
