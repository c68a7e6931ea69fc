import { createHmac } from 'node:crypto';
import type { SinkEvent, SinkSender } from './types.ts';

/**
 * The webhook sink: one HTTP POST per event, the body the event's OCSF JSON, signed with HMAC-SHA256.
 *
 * Headers: `X-Vigil-Signature: sha256=<hex>` over `<X-Vigil-Timestamp>.<raw body>` (the timestamp is signed so a
 * captured request cannot be replayed later), `X-Vigil-Timestamp` (Unix seconds), `X-Vigil-Delivery` (the outbox id:
 * the same on every retry of one event, so receivers drop duplicates), `X-Vigil-Event` (`finding.opened`…).
 * Retries: network errors, 408, 429 (waiting `Retry-After`, capped) and 5xx, with exponential backoff, at most
 * `maxAttempts` per delivery; any other 4xx fails at once (the receiver refuses the request: retrying will not help).
 * Verification recipe: docs/configuration.md "SIEM sinks".
 */

/** Options of {@link webhookSender}. */
export interface WebhookOptions {
  url: string;
  /** The HMAC key. Never logged, never part of an error. */
  secret: string;
  /** Attempts per delivery, first included. @default 5 */
  maxAttempts?: number;
  /** First backoff; doubles at each retry. @default 500 */
  baseDelayMs?: number;
  /** Longest single wait (backoff or Retry-After). @default 30000 */
  maxDelayMs?: number;
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

/** The signature header value of `body` sent at `timestamp` (Unix seconds): `sha256=` + hex HMAC-SHA256. */
function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Seconds to wait from a `Retry-After` header (delta-seconds or HTTP-date, RFC 9110 §10.2.3), or undefined. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sender posting events to the webhook; throws after the last failed attempt (the outbox keeps the event). */
export function webhookSender(options: WebhookOptions): SinkSender {
  const maxAttempts = options.maxAttempts ?? 5;
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  const now = options.now ?? Date.now;
  const target = new URL(options.url);
  // Only the origin and path are ever shown: a query string may carry a token of the receiver's.
  const shown = `${target.origin}${target.pathname}`;
  return {
    name: 'webhook',
    describe: () => `webhook ${shown}`,
    async send(event: SinkEvent): Promise<void> {
      const body = JSON.stringify(event.payload);
      let lastError = '';
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        const timestamp = String(Math.floor(now() / 1000));
        let wait = Math.min(cap, base * 2 ** (attempt - 1));
        try {
          const res = await fetch(options.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'Vigil-Webhook/1',
              'x-vigil-signature': signWebhook(options.secret, timestamp, body),
              'x-vigil-timestamp': timestamp,
              'x-vigil-delivery': event.id,
              'x-vigil-event': event.type,
            },
            body,
            redirect: 'manual',
            signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
          });
          await res.arrayBuffer().catch(() => undefined);
          if (res.status >= 200 && res.status < 300) return;
          lastError = `${shown} answered ${res.status}`;
          if (res.status !== 408 && res.status !== 429 && res.status < 500) throw new WebhookRefused(lastError);
          const after = retryAfterMs(res.headers.get('retry-after'), now());
          if (after !== undefined) wait = Math.min(cap, after);
        } catch (e) {
          if (e instanceof WebhookRefused) throw e;
          lastError = `${shown}: ${(e as Error).name === 'TimeoutError' ? 'timed out' : (((e as Error).cause as Error | undefined)?.message ?? (e as Error).message)}`;
        }
        if (attempt < maxAttempts) await sleep(wait);
      }
      throw new Error(`${lastError} (after ${maxAttempts} attempts)`);
    },
  };
}

/** A 4xx other than 408/429: not retried within the delivery. */
class WebhookRefused extends Error {}
