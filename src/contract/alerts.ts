import { z } from 'zod';
import { ALERT_STATUSES } from '../store/repositories/audit.ts';
import { ALERT_SORTS, EVENT_COUNT_CAP } from '../store/repositories/queries.ts';
import { SEVERITIES } from '../core/types.ts';
import { Json, page, PageQuery, Timestamp } from './common.ts';
import { FindingSchema } from './findings.ts';

/** Contract of `/api/v1/alerts` (timeline, status) and `/api/v1/events` (normalised audit events). */

/** An alert. */
export const AlertSchema = z
  .object({
    id: z.string(),
    integrationId: z.string(),
    ruleId: z.string(),
    severity: z.string(),
    status: z.string(),
    title: z.string(),
    detail: Json.nullable(),
    windowStart: Timestamp.nullable(),
    windowEnd: Timestamp.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    eventIds: z.array(z.string()).describe('Ids of the audit records behind the alert (the events list filters them by id)'),
    environmentId: z.string().nullable().describe("The Power Platform environment the alert's detail names, if any"),
    environmentName: z.string().nullable().describe('Its display name from the inventory (null when not collected)'),
    agentId: z.string().nullable().describe("The Copilot Studio agent (bot id) the alert's detail names, if any"),
    agentName: z.string().nullable().describe('Its name from the detail or the inventory'),
  })
  .meta({ id: 'Alert' });
/** An alert as the API shows it. */
export type Alert = z.infer<typeof AlertSchema>;

/** Filters and order of the alerts list. */
export const AlertsQuery = PageQuery.extend({
  integrationId: z.string().max(200).optional(),
  status: z.enum(ALERT_STATUSES).optional(),
  ruleId: z.string().max(200).optional(),
  severity: z.enum(SEVERITIES).optional(),
  environmentId: z.string().max(200).optional().describe('Alerts whose detail names this environment'),
  q: z.string().max(200).optional().describe('Case-insensitive text in the title, rule id or detail'),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('ISO 8601 with an offset: only alerts created at or after this instant (inclusive); at most until'),
  until: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 with an offset: only alerts created before this instant (exclusive)'),
  sort: z.enum(ALERT_SORTS).default('createdAt').describe('Order: severity by weight (critical highest), status by lifecycle (new first)'),
  order: z.enum(['asc', 'desc']).default('desc'),
});

/** Body of a status change of several alerts at once. */
export const AlertsBulkStatusBody = z.object({
  ids: z.array(z.string().min(1).max(200)).min(1).max(500).describe("Alert ids, all of the caller's organization"),
  status: z.enum(ALERT_STATUSES),
});

/** The answer of a bulk status change: the alerts as they now stand. */
export const AlertsBulkStatusAnswer = z.object({ items: z.array(AlertSchema), changed: z.number().int().describe('How many changed status') });

/** One status change of an alert. */
const AlertHistoryEntrySchema = z.object({
  at: Timestamp,
  from: z.string(),
  to: z.string(),
  actor: z.string().nullable().describe('Who changed it (e-mail address or api-key:<name>); null when no caller did'),
});

/** A page of alerts. */
export const AlertPageSchema = page(AlertSchema).extend({ total: z.number().int().describe('Alerts the filters select, over all pages') });

/** Body of an alert's status change. */
export const AlertStatusBody = z.object({ status: z.enum(ALERT_STATUSES) });

/** An audit event (normalised columns; the raw record stays in the store). */
export const EventSchema = z
  .object({
    id: z.string(),
    integrationId: z.string(),
    contentType: z.string(),
    recordType: z.number().nullable(),
    creationTime: Timestamp,
    operation: z.string().nullable(),
    workload: z.string().nullable(),
    userId: z.string().nullable(),
    clientIp: z.string().nullable(),
    objectId: z.string().nullable(),
    objectName: z
      .string()
      .nullable()
      .describe("The acted-on object's name from the inventory (an agent, environment, flow, app…); null when Vigil holds no such object"),
  })
  .meta({ id: 'Event' });
/** An audit event as the API shows it. */
export type Event = z.infer<typeof EventSchema>;

/** Filters of the events list. */
export const EventsQuery = PageQuery.extend({
  integrationId: z.string().max(200).optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('ISO 8601: only events at or after (inclusive); at most until'),
  until: z.iso.datetime({ offset: true }).optional().describe('ISO 8601: only events before (exclusive)'),
  operation: z.string().max(200).optional(),
  userId: z.string().max(400).optional(),
  objectId: z.string().max(400).optional().describe('The object the event acted on (an agent, flow, app…)'),
});

/** A page of audit events. */
export const EventPageSchema = page(EventSchema).extend({
  total: z
    .number()
    .int()
    .describe(`Events the filters select over all pages, counted up to ${EVENT_COUNT_CAP.toLocaleString('en-US')}`),
  totalIsLowerBound: z.boolean().describe(`true when more than \`total\` events match (counting stops at ${EVENT_COUNT_CAP.toLocaleString('en-US')})`),
});

/** An audit event with its raw record as the upstream API sent it. */
export const EventDetailSchema = EventSchema.extend({ raw: Json.describe('The record as the Office 365 Management Activity API (or Power BI) sent it') }).meta({
  id: 'EventDetail',
});
/** An audit event with its raw record. */
export type EventDetail = z.infer<typeof EventDetailSchema>;

/** An alert with the events behind it, its history and the open finding on the same agent or resource. */
export const AlertDetailSchema = AlertSchema.extend({
  events: z.array(EventSchema).describe('The audit events behind the alert, newest first (at most 200)'),
  history: z.array(AlertHistoryEntrySchema).describe('Status changes, oldest first'),
  relatedFinding: FindingSchema.nullable().describe('The most severe open finding on the agent or resource the alert names, if any'),
}).meta({ id: 'AlertDetail' });
/** An alert with its events, history and related finding. */
export type AlertDetail = z.infer<typeof AlertDetailSchema>;
