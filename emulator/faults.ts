/**
 * Deterministic fault injection (the public models are the Graph SDK's `ChaosHandler` and Dev Proxy's random-error
 * plugins; reference limits-and-practices "Fault testing"). A seeded PRNG decides, per eligible response, whether it
 * fails and how: throttling with integer, fractional or no `Retry-After`, 503, a reset connection, or a body cut in half.
 */
import { createRng, type Rng } from './prng.ts';
import type { ServiceName } from './common.ts';

/**
 * Fault kinds:
 * - `429`: HTTP 429 with an integer `Retry-After` (seconds, ≤ maxRetryAfterSeconds);
 * - `429-fractional`: HTTP 429 with a fractional `Retry-After` such as `0.35` (Graph sends these);
 * - `429-no-retry-after`: HTTP 429 without `Retry-After` (some Graph identity-protection resources);
 * - `503`: HTTP 503 with an integer `Retry-After`;
 * - `reset`: the socket is destroyed without any response;
 * - `truncate`: the real response's headers (full `Content-Length`) and half its body, then the socket is destroyed;
 * - `af429`: the Management Activity API's throttling as observed: HTTP 403 with
 *   `{"error":{"code":"AF429","message":"Too many requests. Method={m}, PublisherId={p}"}}` and no `Retry-After`
 *   (troubleshooting guide). On other services it behaves as `429-no-retry-after`.
 */
export type FaultKind = '429' | '429-fractional' | '429-no-retry-after' | '503' | 'reset' | 'truncate' | 'af429';

/** Every fault kind. */
export const FAULT_KINDS: readonly FaultKind[] = ['429', '429-fractional', '429-no-retry-after', '503', 'reset', 'truncate', 'af429'];

/** Fault injection settings. */
export interface FaultConfig {
  /** Share of eligible responses that fail, 0..1. */
  rate: number;
  /** Kinds drawn uniformly for each fault. @default ['429', '503'] */
  kinds?: FaultKind[];
  /** PRNG seed; the same seed and request sequence give the same faults. @default 1 */
  seed?: number | string;
  /** Services whose responses may fail (`managementActivity` and `powerBi` included). @default ['graph', 'bap', 'dataverse'] */
  services?: ServiceName[];
  /** Only paths containing this substring are eligible (e.g. `/members`). @default all paths */
  match?: string;
  /** Largest `Retry-After`, seconds (> 0). Integer kinds send `max(1, floor(max))` when max ≥ 1, else 0. @default 1 */
  maxRetryAfterSeconds?: number;
}

/** Counters of injected faults. */
export interface FaultCounters {
  total: number;
  /**
   * Faults per kind. The six original kinds are always present (0 when none); `af429` appears once one was injected,
   * so `Object.values(byKind)` of a run without it is unchanged.
   */
  byKind: Record<Exclude<FaultKind, 'af429'>, number> & { af429?: number };
  byService: Partial<Record<ServiceName, number>>;
}

/** A decided fault: its kind and, for throttling kinds, the `Retry-After` header value (absent = no header). */
export interface FaultDecision {
  kind: FaultKind;
  retryAfter?: string;
}

function zeroCounters(): FaultCounters {
  return { total: 0, byKind: { '429': 0, '429-fractional': 0, '429-no-retry-after': 0, '503': 0, reset: 0, truncate: 0 }, byService: {} };
}

/** Holds the active fault configuration and decides per request. */
export class FaultInjector {
  #config: (Required<Omit<FaultConfig, 'match'>> & { match: string | undefined }) | null = null;
  #rng: Rng | null = null;
  #counters: FaultCounters = zeroCounters();

  /** @param config initial configuration (none = no faults). */
  constructor(config?: FaultConfig) {
    if (config) this.set(config);
  }

  /**
   * Replaces the configuration and re-seeds the PRNG. Counters are kept (see `resetCounters`).
   * Throws RangeError for a rate outside 0..1, an unknown kind or a non-positive maxRetryAfterSeconds.
   */
  set(config: FaultConfig): void {
    if (!(config.rate >= 0 && config.rate <= 1)) throw new RangeError(`fault rate must be within 0..1, got ${String(config.rate)}`);
    const kinds = config.kinds ?? ['429', '503'];
    if (kinds.length === 0) throw new RangeError('fault kinds must not be empty');
    for (const k of kinds) if (!FAULT_KINDS.includes(k)) throw new RangeError(`unknown fault kind ${String(k)}`);
    const max = config.maxRetryAfterSeconds ?? 1;
    if (!(max > 0)) throw new RangeError(`maxRetryAfterSeconds must be > 0, got ${String(max)}`);
    this.#config = {
      rate: config.rate,
      kinds: [...kinds],
      seed: config.seed ?? 1,
      services: [...(config.services ?? ['graph', 'bap', 'dataverse'])],
      match: config.match,
      maxRetryAfterSeconds: max,
    };
    this.#rng = createRng(this.#config.seed);
  }

  /** Turns fault injection off (counters are kept). */
  clear(): void {
    this.#config = null;
    this.#rng = null;
  }

  /** The active configuration, or null. */
  get config(): FaultConfig | null {
    return this.#config ? { ...this.#config, kinds: [...this.#config.kinds], services: [...this.#config.services] } : null;
  }

  /** A copy of the counters. */
  counters(): FaultCounters {
    return { total: this.#counters.total, byKind: { ...this.#counters.byKind }, byService: { ...this.#counters.byService } };
  }

  /** Zeroes the counters. */
  resetCounters(): void {
    this.#counters = zeroCounters();
  }

  /**
   * Decides whether this response fails. Consumes PRNG draws only for eligible requests, so the fault sequence
   * depends only on the seed and the order of eligible requests. Counts the fault when one is returned.
   */
  decide(service: ServiceName, path: string): FaultDecision | null {
    const cfg = this.#config;
    const rng = this.#rng;
    if (!cfg || !rng || cfg.rate <= 0) return null;
    if (!cfg.services.includes(service)) return null;
    if (cfg.match !== undefined && !path.includes(cfg.match)) return null;
    if (rng.next() >= cfg.rate) return null;
    const kind = cfg.kinds[Math.floor(rng.next() * cfg.kinds.length)] as FaultKind;
    const intRetry = String(cfg.maxRetryAfterSeconds >= 1 ? Math.max(1, Math.floor(cfg.maxRetryAfterSeconds)) : 0);
    let retryAfter: string | undefined;
    if (kind === '429' || kind === '503') retryAfter = intRetry;
    if (kind === '429-fractional') {
      const hundredths = Math.max(1, Math.floor(rng.next() * Math.min(cfg.maxRetryAfterSeconds, 0.99) * 100));
      retryAfter = (hundredths / 100).toFixed(2);
    }
    this.#counters.total++;
    this.#counters.byKind[kind] = (this.#counters.byKind[kind] ?? 0) + 1;
    this.#counters.byService[service] = (this.#counters.byService[service] ?? 0) + 1;
    return retryAfter === undefined ? { kind } : { kind, retryAfter };
  }
}

/**
 * The throttling/unavailability body each service really sends (Graph: `TooManyRequests` / `serviceNotAvailable`
 * with innerError; Dataverse: `0x80072322` "Number of requests exceeded the limit of 6000 over time window of 300
 * seconds."; identity: AADSTS-shaped JSON; BAP and others: `{"error":{"code","message"}}`).
 */
export function faultBody(service: ServiceName, status: 429 | 503, requestId: string, now = new Date()): Record<string, unknown> {
  const date = now.toISOString().replace(/\.\d{3}Z$/, '');
  switch (service) {
    case 'graph':
      return status === 429
        ? {
            error: {
              code: 'TooManyRequests',
              message: 'Please retry again later.',
              innerError: { code: '429', date, message: 'Please retry after', 'request-id': requestId, status: '429' },
            },
          }
        : {
            error: {
              code: 'serviceNotAvailable',
              message: 'Service is temporarily unavailable. Please retry later.',
              innerError: { date, 'request-id': requestId, 'client-request-id': requestId },
            },
          };
    case 'dataverse':
      return status === 429
        ? { error: { code: '0x80072322', message: 'Number of requests exceeded the limit of 6000 over time window of 300 seconds.' } }
        : { error: { code: '0x80040216', message: 'Service Unavailable. Please retry the request.' } };
    case 'identity': {
      const ts = now
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d{3}Z$/, 'Z');
      const code = status === 429 ? 90055 : 90033;
      const text = status === 429 ? 'TenantThrottlingError - There are too many incoming requests.' : 'A transient error has occurred. Please try again.';
      return {
        error: 'temporarily_unavailable',
        error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${requestId}\r\nCorrelation ID: ${requestId}\r\nTimestamp: ${ts}`,
        error_codes: [code],
        timestamp: ts,
        trace_id: requestId,
        correlation_id: requestId,
      };
    }
    default:
      return status === 429
        ? { error: { code: 'TooManyRequests', message: 'Rate limit is exceeded. Try again later.' } }
        : { error: { code: 'ServiceUnavailable', message: 'The service is temporarily unavailable. Try again later.' } };
  }
}
