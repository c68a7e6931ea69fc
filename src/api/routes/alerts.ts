import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { listAlertsPage, listEventsPage, setAlertStatus } from '../../reporting/index.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { AlertPageSchema, AlertSchema, AlertsQuery, AlertStatusBody, EventPageSchema, EventsQuery } from '../../contract/alerts.ts';
import { commonErrors, IdParams } from '../../contract/common.ts';

/** `/api/v1/alerts` (timeline, status) and `/api/v1/events` (normalised audit events). */
export function alertRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/alerts',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Alerts raised by detections, newest first',
        querystring: AlertsQuery,
        response: { 200: AlertPageSchema, ...commonErrors },
      },
    },
    async (request) => listAlertsPage(ctx.db, principalOf(request), request.query),
  );

  r.put(
    '/alerts/:id/status',
    {
      config: { access: 'admin' },
      schema: { tags: ['alerts'], summary: "Set an alert's status", params: IdParams, body: AlertStatusBody, response: { 200: AlertSchema, ...commonErrors } },
    },
    async (request) => setAlertStatus(ctx.db, principalOf(request), request.params.id, request.body.status),
  );

  r.get(
    '/events',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Audit events (Office 365 Management Activity records, normalised), newest first',
        querystring: EventsQuery,
        response: { 200: EventPageSchema, ...commonErrors },
      },
    },
    async (request) => listEventsPage(ctx.db, principalOf(request), request.query),
  );
}
