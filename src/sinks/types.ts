import type { OcsfDetectionFinding } from '../exports/ocsf.ts';

/** Names of the SIEM sinks. */
export type SinkName = 'webhook' | 'syslog';

/** Event types sent to the sinks. */
export type SinkEventType = 'finding.opened' | 'finding.reopened' | 'finding.resolved' | 'alert.raised' | 'test';

/** One event on its way to a sink (an outbox row). */
export interface SinkEvent {
  /** The outbox id: stable across retries (webhook `X-Vigil-Delivery`). */
  id: string;
  type: SinkEventType;
  /** Finding or alert id. */
  subjectId: string;
  severity: string;
  integrationId: string;
  payload: OcsfDetectionFinding;
}

/** A transport to one sink. `send` resolves once the sink accepted the event and throws otherwise. */
export interface SinkSender {
  name: SinkName;
  /** Where it sends, safe to show (no secret). */
  describe(): string;
  send(event: SinkEvent): Promise<void>;
  /** Sends several events at once (one connection); resolves to the ids accepted. @default one `send` each. */
  sendBatch?(events: SinkEvent[]): Promise<string[]>;
  close?(): Promise<void>;
}
