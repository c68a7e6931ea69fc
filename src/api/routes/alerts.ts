import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listAlertsPage, listEventsPage, setOwnedAlertStatus } from '../../reporting/index.ts';
import { ALERT_STATUSES } from '../../store/repositories/audit.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { AlertSchema, commonErrors, EventSchema, IdParams, page, PageQuery } from '../schemas.ts';

/** `/api/v1/alerts` (timeline, status) and `/api/v1/events` (normalised audit events). */
export function alertRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/alerts', {
    schema: {
      tags: ['alerts'],
      summary: 'Alerts raised by detections, newest first',
      querystring: PageQuery.extend({ integrationId: z.string().max(200).optional(), status: z.enum(ALERT_STATUSES).optional(), ruleId: z.string().max(200).optional() }),
      response: { 200: page(AlertSchema), ...commonErrors },
    },
  }, async (request) => listAlertsPage(ctx.db, principalOf(request), request.query));

  r.put('/alerts/:id/status', {
    config: { access: 'admin' },
    schema: { tags: ['alerts'], summary: "Set an alert's status", params: IdParams, body: z.object({ status: z.enum(ALERT_STATUSES) }), response: { 200: AlertSchema, ...commonErrors } },
  }, async (request) => setOwnedAlertStatus(ctx.db, principalOf(request), request.params.id, request.body.status));

  r.get('/events', {
    schema: {
      tags: ['alerts'],
      summary: 'Audit events (Office 365 Management Activity records, normalised), newest first',
      querystring: PageQuery.extend({
        integrationId: z.string().max(200).optional(),
        since: z.iso.datetime({ offset: true }).optional().describe('ISO 8601: only events at or after'),
        operation: z.string().max(200).optional(),
        userId: z.string().max(400).optional(),
      }),
      response: { 200: page(EventSchema), ...commonErrors },
    },
  }, async (request) => listEventsPage(ctx.db, principalOf(request), { ...request.query, since: request.query.since ? new Date(request.query.since).toISOString() : undefined }));
}
