import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/log/index.ts';
import { alertToOcsf, findingToOcsf, type CheckInfo, type DetectionInfo, type OcsfActivity, type OcsfProduct } from '../exports/ocsf.ts';
import type { Executor } from '../store/db.ts';
import { findingStepsAt } from '../store/repositories/findings.ts';
import { countPendingOutbox, insertOutboxRows, markOutboxDelivered, markOutboxFailed, pendingOutboxRows } from '../store/repositories/outbox.ts';
import type { AlertsTable, SinkOutboxTable } from '../store/schema.ts';
import type { SinkEvent, SinkEventType, SinkName, SinkSender } from './types.ts';

/**
 * The sink outbox (table `sink_outbox`, migration 0009). Events are written in the same transaction as the change
 * they report, one row per configured sink, and delivered after commit by {@link deliverOutbox}; a row a sink did not
 * accept stays pending and is sent again at the next delivery (the next evaluation or detection cycle, or
 * `vigil sinks deliver`). Delivery is at least once: receivers drop repeats by the delivery id.
 */

/** A new outbox id. */
function outboxId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

/** What the enqueue functions need beyond the data. */
export interface EnqueueContext {
  /** Sinks configured now: one row each. Nothing is written when empty. */
  sinks: SinkName[];
  product: OcsfProduct;
  tenantId?: string | undefined;
}

const FINDING_EVENTS: Record<string, { type: SinkEventType; activity: OcsfActivity }> = {
  opened: { type: 'finding.opened', activity: 'create' },
  reopened: { type: 'finding.reopened', activity: 'update' },
  resolved: { type: 'finding.resolved', activity: 'close' },
};

async function insertRows(
  db: Executor,
  rows: Omit<SinkOutboxTable, 'id' | 'sink' | 'attempts' | 'last_attempt_at' | 'last_error' | 'delivered_at'>[],
  sinks: SinkName[],
): Promise<number> {
  const all: SinkOutboxTable[] = rows.flatMap((r) =>
    sinks.map((sink) => ({ ...r, id: outboxId(), sink, attempts: 0, last_attempt_at: null, last_error: null, delivered_at: null })),
  );
  await insertOutboxRows(db, all);
  return all.length;
}

/**
 * Queues the finding lifecycle steps an evaluation recorded at `at` (history `opened`, `reopened`, `resolved` of the
 * integration's findings) as OCSF Detection Findings. Call inside the evaluation's transaction.
 * @returns rows written.
 */
export async function enqueueFindingEvents(
  db: Executor,
  integrationId: string,
  at: string,
  checks: Map<string, CheckInfo>,
  ctx: EnqueueContext,
): Promise<number> {
  if (ctx.sinks.length === 0) return 0;
  const steps = await findingStepsAt(db, integrationId, at, ['opened', 'reopened', 'resolved']);
  if (steps.length === 0) return 0;
  const rows = steps.map(({ step, ...f }) => {
    const e = FINDING_EVENTS[step]!;
    const payload = findingToOcsf(f, checks.get(f.check_id), { product: ctx.product, tenantId: ctx.tenantId, activity: e.activity, at });
    return { integration_id: integrationId, event_type: e.type, subject_id: f.id, severity: f.severity, payload: JSON.stringify(payload), created_at: at };
  });
  return insertRows(db, rows, ctx.sinks);
}

/**
 * Queues raised alerts, in order, with their detections' metadata: one row per alert and configured sink, written in
 * multi-row inserts. Call inside the transaction that stored them.
 * @returns rows written.
 */
export async function enqueueAlerts(
  db: Executor,
  alerts: { alert: AlertsTable; detection: DetectionInfo | undefined }[],
  ctx: EnqueueContext,
): Promise<number> {
  if (ctx.sinks.length === 0 || alerts.length === 0) return 0;
  const rows = alerts.map(({ alert, detection }) => ({
    integration_id: alert.integration_id,
    event_type: 'alert.raised',
    subject_id: alert.id,
    severity: alert.severity,
    payload: JSON.stringify(alertToOcsf(alert, detection, { product: ctx.product, tenantId: ctx.tenantId, activity: 'create' })),
    created_at: alert.created_at,
  }));
  return insertRows(db, rows, ctx.sinks);
}

/** Outcome of {@link deliverOutbox} for one sink. */
export interface SinkDeliveryOutcome {
  sink: SinkName;
  delivered: number;
  /** Still pending after this delivery (retried next time). */
  pending: number;
  /** The last error seen, if any (never holds a secret). */
  error: string | null;
}

/** Row → event. */
function toEvent(r: SinkOutboxTable): SinkEvent {
  return {
    id: r.id,
    type: r.event_type as SinkEventType,
    subjectId: r.subject_id,
    severity: r.severity,
    integrationId: r.integration_id,
    payload: JSON.parse(r.payload) as SinkEvent['payload'],
  };
}

/**
 * Sends every pending event of each sink, oldest first, in batches of `batch`, marking what the sink accepted. A sink
 * that fails keeps its remaining events pending (order kept: the rest of that sink's batch waits for the next delivery).
 * Never throws for a sink failure: the outcome says what is left.
 */
export async function deliverOutbox(
  db: Executor,
  senders: SinkSender[],
  logger: Logger,
  options: { batch?: number; now?: () => string } = {},
): Promise<SinkDeliveryOutcome[]> {
  const batch = options.batch ?? 100;
  const now = options.now ?? (() => new Date().toISOString());
  const out: SinkDeliveryOutcome[] = [];
  for (const sender of senders) {
    const outcome: SinkDeliveryOutcome = { sink: sender.name, delivered: 0, pending: 0, error: null };
    for (;;) {
      const rows = await pendingOutboxRows(db, sender.name, batch);
      if (rows.length === 0) break;
      const accepted = new Set<string>();
      let failure: string | null = null;
      if (sender.sendBatch) {
        try {
          for (const id of await sender.sendBatch(rows.map(toEvent))) accepted.add(id);
        } catch (e) {
          failure = (e as Error).message;
        }
      } else {
        for (const r of rows) {
          try {
            await sender.send(toEvent(r));
            accepted.add(r.id);
          } catch (e) {
            failure = (e as Error).message;
            break;
          }
        }
      }
      const at = now();
      if (accepted.size) {
        await markOutboxDelivered(db, [...accepted], at);
        outcome.delivered += accepted.size;
      }
      if (failure !== null) {
        const failed = rows.find((r) => !accepted.has(r.id));
        if (failed) await markOutboxFailed(db, failed.id, failure, at);
        outcome.error = failure;
        logger.warn({ sink: sender.name, target: sender.describe(), error: failure }, 'sink delivery failed; events stay in the outbox for the next delivery');
        break;
      }
    }
    outcome.pending = await countPendingOutbox(db, sender.name);
    if (outcome.delivered) logger.info({ sink: sender.name, delivered: outcome.delivered, pending: outcome.pending }, 'sink delivery');
    out.push(outcome);
  }
  return out;
}
