import { z } from 'zod';
import { ALERT_STATUSES } from '../store/repositories/audit.ts';
import { Json, page, PageQuery, Timestamp } from './common.ts';

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
  })
  .meta({ id: 'Alert' });
/** An alert as the API shows it. */
export type Alert = z.infer<typeof AlertSchema>;

/** Filters of the alerts list. */
export const AlertsQuery = PageQuery.extend({
  integrationId: z.string().max(200).optional(),
  status: z.enum(ALERT_STATUSES).optional(),
  ruleId: z.string().max(200).optional(),
});

/** A page of alerts. */
export const AlertPageSchema = page(AlertSchema);

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
  })
  .meta({ id: 'Event' });
/** An audit event as the API shows it. */
export type Event = z.infer<typeof EventSchema>;

/** Filters of the events list. */
export const EventsQuery = PageQuery.extend({
  integrationId: z.string().max(200).optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('ISO 8601: only events at or after'),
  operation: z.string().max(200).optional(),
  userId: z.string().max(400).optional(),
});

/** A page of audit events. */
export const EventPageSchema = page(EventSchema);
