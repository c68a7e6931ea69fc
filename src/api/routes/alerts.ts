import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { alertDetail, eventDetail, listAlertsPage, listEventsPage, setAlertsStatus, setAlertStatus } from '../../reporting/index.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import {
  AlertDetailSchema,
  AlertPageSchema,
  AlertSchema,
  AlertsBulkStatusAnswer,
  AlertsBulkStatusBody,
  AlertsQuery,
  AlertStatusBody,
  EventDetailSchema,
  EventPageSchema,
  EventsQuery,
} from '../../contract/alerts.ts';
import { commonErrors, IdParams } from '../../contract/common.ts';

/** `/api/v1/alerts` (list, detail, status one by one or in bulk) and `/api/v1/events` (normalised audit events). */
export function alertRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/alerts',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Alerts raised by detections, filtered and sorted (newest first by default)',
        querystring: AlertsQuery,
        response: { 200: AlertPageSchema, ...commonErrors },
      },
    },
    async (request) => listAlertsPage(ctx.db, principalOf(request), request.query),
  );

  r.get(
    '/alerts/:id',
    {
      schema: {
        tags: ['alerts'],
        summary: 'One alert with the events behind it, its history and the related open finding',
        params: IdParams,
        response: { 200: AlertDetailSchema, ...commonErrors },
      },
    },
    async (request) => alertDetail(ctx.db, principalOf(request), ctx.checks, request.params.id),
  );

  r.put(
    '/alerts/:id/status',
    {
      config: { access: 'admin' },
      schema: { tags: ['alerts'], summary: "Set an alert's status", params: IdParams, body: AlertStatusBody, response: { 200: AlertSchema, ...commonErrors } },
    },
    async (request) => setAlertStatus(ctx.db, principalOf(request), request.params.id, request.body.status),
  );

  r.post(
    '/alerts/status',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['alerts'],
        summary: 'Set the status of several alerts at once (all or nothing; each change recorded in its history)',
        body: AlertsBulkStatusBody,
        response: { 200: AlertsBulkStatusAnswer, ...commonErrors },
      },
    },
    async (request) => setAlertsStatus(ctx.db, principalOf(request), request.body.ids, request.body.status),
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

  r.get(
    '/events/:id',
    {
      schema: {
        tags: ['alerts'],
        summary: 'One audit event with its raw record',
        params: IdParams,
        response: { 200: EventDetailSchema, ...commonErrors },
      },
    },
    async (request) => eventDetail(ctx.db, principalOf(request), request.params.id),
  );
}
