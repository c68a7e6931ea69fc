import { randomUUID } from 'node:crypto';
import type { VigilConfig } from '../config/index.ts';
import { OCSF_VERSION, vigilProduct, type OcsfDetectionFinding, type OcsfProduct } from '../exports/ocsf.ts';
import type { Logger } from '../platform/log/index.ts';
import type { Executor } from '../store/db.ts';
import { deliverOutbox, type SinkDeliveryOutcome } from './outbox.ts';
import { syslogSender } from './syslog.ts';
import type { SinkName, SinkSender } from './types.ts';
import { webhookSender } from './webhook.ts';

export { enqueueAlerts, enqueueFindingEvents } from './outbox.ts';

/** Vigil's version as the OCSF `metadata.product.version` (= package.json). */
export const VIGIL_VERSION = '0.1.0';

/**
 * The configured SIEM sinks of a process: which ones get outbox rows, and their delivery. Built once by the
 * composition root from the configuration; absent when no sink is configured.
 */
export interface Sinks {
  /** Configured sink names (outbox rows are written for these). */
  names: SinkName[];
  /** Each configured sink and where it sends (the webhook's origin and path, the syslog address; never a secret). */
  targets: { sink: SinkName; target: string }[];
  product: OcsfProduct;
  /** Sends every pending outbox event; never throws for a sink failure (see the outcomes). */
  deliver(db: Executor): Promise<SinkDeliveryOutcome[]>;
  /** Sends one synthetic event to each sink directly (not through the outbox) and reports each outcome. */
  test(): Promise<{ sink: SinkName; target: string; ok: boolean; error: string | null }[]>;
}

/** Options of {@link createSinks} (tests shorten the webhook backoff). */
export interface SinkOptions {
  webhook?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number; timeoutMs?: number };
}

/** The senders of the configured sinks. */
function createSenders(config: VigilConfig['sinks'], options: SinkOptions = {}): SinkSender[] {
  const senders: SinkSender[] = [];
  if (config.webhook) senders.push(webhookSender({ url: config.webhook.url, secret: config.webhook.secret, ...options.webhook }));
  if (config.syslog) senders.push(syslogSender(config.syslog));
  return senders;
}

/** The synthetic event `vigil sinks test` sends: a Detection Finding marked as a test, informational. */
function testEvent(product: OcsfProduct): OcsfDetectionFinding {
  const now = Date.now();
  return {
    class_uid: 2004,
    class_name: 'Detection Finding',
    category_uid: 2,
    category_name: 'Findings',
    activity_id: 1,
    activity_name: 'Create',
    type_uid: 200401,
    type_name: 'Detection Finding: Create',
    severity_id: 1,
    severity: 'Informational',
    status_id: 1,
    status: 'New',
    time: now,
    message: 'Vigil sink test: this event checks delivery and can be ignored.',
    finding_info: {
      uid: `test_${randomUUID().replaceAll('-', '')}`,
      title: 'Vigil sink test',
      types: ['Test'],
      created_time: now,
      analytic: { uid: 'sink_test', name: 'sink_test', type_id: 1, type: 'Rule' },
    },
    metadata: { version: OCSF_VERSION, product, profiles: ['cloud'] },
    cloud: { provider: 'Microsoft' },
  };
}

/** Builds the sinks from the configuration, or undefined when none is configured. */
export function createSinks(config: VigilConfig['sinks'], logger: Logger, options: SinkOptions = {}): Sinks | undefined {
  const senders = createSenders(config, options);
  if (senders.length === 0) return undefined;
  const product = vigilProduct(VIGIL_VERSION);
  return {
    names: senders.map((s) => s.name),
    targets: senders.map((s) => ({ sink: s.name, target: s.describe() })),
    product,
    deliver: (db) => deliverOutbox(db, senders, logger),
    async test() {
      const out = [];
      for (const s of senders) {
        const payload = testEvent(product);
        try {
          await s.send({
            id: `evt_${randomUUID().replaceAll('-', '')}`,
            type: 'test',
            subjectId: payload.finding_info.uid,
            severity: 'info',
            integrationId: '-',
            payload,
          });
          out.push({ sink: s.name, target: s.describe(), ok: true, error: null });
        } catch (e) {
          out.push({ sink: s.name, target: s.describe(), ok: false, error: (e as Error).message });
        }
      }
      return out;
    },
  };
}

/**
 * Delivers pending events after a commit, logging instead of throwing: a sink outage must not fail the evaluation or
 * the detection run that produced the events (they stay in the outbox).
 */
export async function deliverAfterCommit(sinks: Sinks | undefined, db: Executor, logger: Logger | undefined): Promise<void> {
  if (!sinks) return;
  try {
    await sinks.deliver(db);
  } catch (e) {
    logger?.error({ err: { message: (e as Error).message } }, 'sink delivery failed; events stay in the outbox');
  }
}
