import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RunStatus } from '../../core/types.ts';
import type { ApiName, HttpMetrics } from '../http/client.ts';

/**
 * Prometheus metrics of one Vigil process, in the text exposition format (`GET /metrics`).
 *
 * Each instance owns its own prom-client `Registry` (never the global one), so tests and several runtimes in one
 * process do not collide. Default Node.js process metrics are collected on it with the prefix `vigil_`
 * (`vigil_process_cpu_seconds_total`, `vigil_nodejs_eventloop_lag_seconds`, …).
 *
 * Series (units in the name, counters end in `_total`, durations in seconds):
 * - `vigil_upstream_requests_total{api,status}` counter: every upstream answer, retried attempts included; `api` is
 *   the API family (`graph`, `bap`, `managementActivity`, …), `status` the HTTP status code as a string (the status
 *   on the wire: a Management Activity `AF429` throttle answered with 403 counts as `"403"`), or `"network_error"`
 *   when no answer arrived (reset connection, truncated body).
 * - `vigil_upstream_throttle_waits_total{api}` counter: waits before a retry (a 429/503 `Retry-After`, or backoff
 *   after 408/5xx/network errors).
 * - `vigil_upstream_throttle_wait_seconds_total{api}` counter: seconds of those waits (the time asked for, also when
 *   it is charged to the tenant's shared throttling budget instead of slept here).
 * - `vigil_collection_runs_total{status}` counter: collection runs ended, by the status the sync engine writes
 *   (`succeeded`, `partial`, `failed`), plus `stopped` for a run released unfinished (aborted, or credentials
 *   refused) that resumes from its checkpoints later.
 * - `vigil_collection_run_duration_seconds` histogram: wall time of those runs in this process.
 * - `vigil_collection_runs_running` gauge: collection runs in progress in this process.
 * - `vigil_audit_events_ingested_total{content_type}` counter: audit events stored for the first time (duplicates
 *   not counted), per Management Activity content type (`Audit.General`, …) or `PowerBI.ActivityEvents`.
 * - `vigil_http_requests_total{method,route,status}` counter: requests to Vigil's own API; `route` is the route
 *   pattern (`/api/v1/integrations/:id`), never the raw URL, and `unmatched` when no route matched.
 *
 * - `vigil_protection_decision_seconds{outcome}` histogram: whole handling of Copilot Studio's
 *   `analyze-tool-execution` calls answered, by outcome: `allow`, `block` (answered blockAction true), `monitor` (block
 *   mode would have blocked; allowed), `timeout` (the internal deadline ran out and the policy's default answered).
 * - `vigil_protection_auth_failures_total{reason}` counter: calls to the protection endpoints refused for their token,
 *   by reason (`missing`, `malformed`, `keys`, `signature`, `issuer`, `tenant`, `audience`, `app`, `expired`).
 *
 * Labels never carry tenant ids, integration names, e-mail addresses, URLs or secrets: they are privacy-sensitive
 * and unbounded (every label value is a separate time series).
 *
 * Sources: prom-client README (own `Registry`, `collectDefaultMetrics({ register, prefix })`, `registry.metrics()`,
 * `registry.contentType`); Prometheus "Metric and label naming" (https://prometheus.io/docs/practices/naming/: base
 * units, `_total` suffix, `_seconds`, no high-cardinality labels) and "Instrumentation" (initialise known label
 * values to 0 so they exist before the first event).
 */

/** How a collection run ended: the statuses the sync engine writes, or `stopped` (released, resumable). */
export type CollectionRunOutcome = Exclude<RunStatus, 'running'> | 'stopped';

const RUN_OUTCOMES: readonly CollectionRunOutcome[] = ['succeeded', 'partial', 'failed', 'stopped'];

/** HTTP methods kept as label values; anything else is counted as `OTHER` (a client picks the method). */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** What the sync engine records about collection runs. */
export interface CollectionMetrics {
  /** A run started (or resumed) in this process. */
  runStarted(): void;
  /** A run started with {@link runStarted} ended after `seconds`. */
  runFinished(status: CollectionRunOutcome, seconds: number): void;
}

/** What audit ingestion records. */
export interface IngestionMetrics {
  /** `n` audit events of a content type were stored for the first time. */
  eventsIngested(contentType: string, n: number): void;
}

/** How an answered protection call ended (see `vigil_protection_decision_seconds`). */
export type ProtectionOutcome = 'allow' | 'block' | 'monitor' | 'timeout';

const PROTECTION_OUTCOMES: readonly ProtectionOutcome[] = ['allow', 'block', 'monitor', 'timeout'];
const PROTECTION_AUTH_REASONS = ['missing', 'malformed', 'keys', 'signature', 'issuer', 'tenant', 'audience', 'app', 'expired'] as const;

/** What runtime protection records. */
export interface ProtectionMetrics {
  /** One answered `analyze-tool-execution` call that took `seconds` in all. */
  protectionDecision(outcome: ProtectionOutcome, seconds: number): void;
  /** One call refused for its token; `reason` is the rejection's reason word. */
  protectionAuthFailure(reason: string): void;
}

/** Options of {@link Metrics}. */
export interface MetricsOptions {
  /** Collect the default Node.js process metrics (`vigil_process_*`, `vigil_nodejs_*`). @default true */
  defaultMetrics?: boolean;
}

/** The metrics of one runtime: see the module documentation for the series. */
export class Metrics implements HttpMetrics, CollectionMetrics, IngestionMetrics, ProtectionMetrics {
  /** The registry behind these metrics (own, never prom-client's global one). */
  readonly registry = new Registry();
  private readonly upstreamRequests: Counter<'api' | 'status'>;
  private readonly throttleWaits: Counter<'api'>;
  private readonly throttleWaitSeconds: Counter<'api'>;
  private readonly runs: Counter<'status'>;
  private readonly runDuration: Histogram;
  private readonly runsRunning: Gauge;
  private readonly eventsIngestedTotal: Counter<'content_type'>;
  private readonly apiRequests: Counter<'method' | 'route' | 'status'>;
  private readonly protectionDecisions: Histogram<'outcome'>;
  private readonly protectionAuthFailures: Counter<'reason'>;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'vigil_' });
    this.upstreamRequests = new Counter({
      name: 'vigil_upstream_requests_total',
      help: 'Upstream HTTP answers (retried attempts included) by API family and HTTP status code, or network_error.',
      labelNames: ['api', 'status'] as const,
      registers,
    });
    this.throttleWaits = new Counter({
      name: 'vigil_upstream_throttle_waits_total',
      help: 'Waits before retrying an upstream request (429/503 Retry-After, or backoff) by API family.',
      labelNames: ['api'] as const,
      registers,
    });
    this.throttleWaitSeconds = new Counter({
      name: 'vigil_upstream_throttle_wait_seconds_total',
      help: 'Seconds waited before retrying upstream requests (429/503 Retry-After, or backoff) by API family.',
      labelNames: ['api'] as const,
      registers,
    });
    this.runs = new Counter({
      name: 'vigil_collection_runs_total',
      help: 'Collection runs ended, by status (succeeded, partial, failed; stopped = released unfinished, resumes later).',
      labelNames: ['status'] as const,
      registers,
    });
    for (const status of RUN_OUTCOMES) this.runs.inc({ status }, 0);
    this.runDuration = new Histogram({
      name: 'vigil_collection_run_duration_seconds',
      help: 'Wall time of collection runs in this process, in seconds.',
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400],
      registers,
    });
    this.runsRunning = new Gauge({
      name: 'vigil_collection_runs_running',
      help: 'Collection runs in progress in this process.',
      registers,
    });
    this.eventsIngestedTotal = new Counter({
      name: 'vigil_audit_events_ingested_total',
      help: 'Audit events stored for the first time (duplicates not counted), by content type.',
      labelNames: ['content_type'] as const,
      registers,
    });
    this.apiRequests = new Counter({
      name: 'vigil_http_requests_total',
      help: "Requests to Vigil's own HTTP API by method, route pattern and status code.",
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    });
    this.protectionDecisions = new Histogram({
      name: 'vigil_protection_decision_seconds',
      help: "Whole handling of Copilot Studio's analyze-tool-execution calls answered, in seconds, by outcome (allow, block, monitor = would have blocked, timeout).",
      labelNames: ['outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2],
      registers,
    });
    for (const outcome of PROTECTION_OUTCOMES) this.protectionDecisions.zero({ outcome });
    this.protectionAuthFailures = new Counter({
      name: 'vigil_protection_auth_failures_total',
      help: 'Calls to the runtime-protection endpoints refused for their bearer token, by reason.',
      labelNames: ['reason'] as const,
      registers,
    });
    for (const reason of PROTECTION_AUTH_REASONS) this.protectionAuthFailures.inc({ reason }, 0);
  }

  protectionDecision(outcome: ProtectionOutcome, seconds: number): void {
    this.protectionDecisions.observe({ outcome }, Math.max(0, seconds));
  }

  protectionAuthFailure(reason: string): void {
    this.protectionAuthFailures.inc({ reason: (PROTECTION_AUTH_REASONS as readonly string[]).includes(reason) ? reason : 'other' });
  }

  /** The `Content-Type` of {@link text} (Prometheus text exposition format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every series in the Prometheus text exposition format. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  /** One upstream answer (`status` = HTTP status code), or `network_error` when none arrived. */
  upstreamResponse(api: ApiName, status: number | 'network_error'): void {
    this.upstreamRequests.inc({ api, status: String(status) });
  }

  /** One wait of `seconds` before retrying an upstream request. */
  throttleWait(api: ApiName, seconds: number): void {
    this.throttleWaits.inc({ api });
    this.throttleWaitSeconds.inc({ api }, Math.max(0, seconds));
  }

  runStarted(): void {
    this.runsRunning.inc();
  }

  runFinished(status: CollectionRunOutcome, seconds: number): void {
    this.runsRunning.dec();
    this.runs.inc({ status });
    this.runDuration.observe(Math.max(0, seconds));
  }

  eventsIngested(contentType: string, n: number): void {
    this.eventsIngestedTotal.inc({ content_type: contentType }, Math.max(0, n));
  }

  /**
   * One request to Vigil's own API. `route` must be the route pattern (`/api/v1/integrations/:id`, as Fastify's
   * `request.routeOptions.url`), never the raw URL; undefined when no route matched (counted as `unmatched`).
   * Unknown methods are counted as `OTHER`.
   */
  apiRequest(method: string, route: string | undefined, status: number): void {
    const m = method.toUpperCase();
    this.apiRequests.inc({ method: HTTP_METHODS.has(m) ? m : 'OTHER', route: route || 'unmatched', status: String(status) });
  }
}
