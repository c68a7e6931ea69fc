import { createSecureContext, rootCertificates } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent, Dispatcher, request as undiciRequest } from 'undici';
import { upstreamCode } from '../../core/error-catalogue.ts';
import { VigilError } from '../../core/errors.ts';
import type { Logger } from '../log/index.ts';
import { graphBudgetOf, type BudgetCharge, type BudgetService, type ThrottleBudget } from './budget.ts';
import type { LinkPolicy } from './links.ts';

/**
 * One HTTP pipeline for every upstream call: TLS with an explicitly trusted extra CA (never verification turned
 * off), retries with `Retry-After` (fractional seconds allowed) or exponential backoff with full jitter, and a
 * reduced error that carries status and upstream error code but never headers, tokens or bodies we sent.
 *
 * Sources: Microsoft Graph throttling guidance (`concepts/throttling.md`, `throttling-limits.md`: honour
 * `Retry-After`, may be fractional, some 429s carry none); Dataverse service protection limits (`api-limits.md`:
 * 429 + `Retry-After`); AWS Architecture Blog "Exponential Backoff And Jitter" (full jitter); modelled on the Graph
 * SDK's RetryHandler (429/503/504).
 */

/** Statuses retried for every method we send (all our calls are reads or idempotent PUTs). */
const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** Upstream API families, used for the link policy, logs and metrics. */
export type ApiName = 'identity' | 'graph' | 'bap' | 'powerApps' | 'flow' | 'powerPlatform' | 'dataverse' | 'managementActivity' | 'powerBi' | 'arm';

/**
 * The throttled service a request of an API family draws on when it names none (Graph requests are charged by path
 * first, see {@link chargeOf}; `graph` here is for none): Graph's global limit, the Power
 * Platform admin budget, the Power BI admin budget. Sign-in (`identity`) and Azure Resource Manager have no budget
 * (ARM throttles per subscription and region, and Vigil sends it a handful of requests per run).
 */
const DEFAULT_SERVICE: Partial<Record<ApiName, BudgetService>> = {
  graph: 'graph',
  bap: 'powerPlatform',
  powerApps: 'powerPlatform',
  flow: 'powerPlatform',
  powerPlatform: 'powerPlatform',
  dataverse: 'dataverse',
  managementActivity: 'managementActivity',
  powerBi: 'powerBiAdmin',
};

/**
 * The budget charge of a request (none without a tenant or for an API without a budget). A Graph request that names no
 * service is charged to the service its path belongs to, in that service's units ({@link graphBudgetOf}).
 */
function chargeOf(req: HttpRequest): BudgetCharge | undefined {
  if (!req.tenantId) return undefined;
  const byPath = req.api === 'graph' && !req.service ? graphBudgetOf(req.url) : undefined;
  const service = req.service ?? byPath?.service ?? DEFAULT_SERVICE[req.api];
  if (!service) return undefined;
  return {
    service,
    tenantId: req.tenantId,
    cost: req.cost ?? byPath?.cost ?? 1,
    ...(req.appId ? { appId: req.appId } : {}),
    ...(service === 'dataverse' ? { environment: new URL(req.url).host } : {}),
  };
}

/** A request through the pipeline. */
export interface HttpRequest {
  api: ApiName;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  url: string;
  headers?: Record<string, string>;
  /** JSON body (serialised here) or a pre-encoded string. */
  body?: unknown;
  /** Returns a bearer token; called per attempt so a refreshed token is used after a 401. */
  token?: (forceRefresh: boolean) => Promise<string>;
  /** Tenant whose throttling budget this request draws on (none: no budget). */
  tenantId?: string;
  /**
   * The application (client) ID the request is sent as: the key of the per-app-across-tenants limits. Default: the
   * one the client view was bound to ({@link HttpClient.bind}).
   */
  appId?: string;
  /**
   * The throttled service the request draws on (its limits, see `budget.ts`); default for Graph by path
   * (`graphBudgetOf`: directory → `graphIdentity` in resource units, Teams → `graphTeams`, else Graph's global limit),
   * otherwise per API family (`bap`/`powerApps`/`flow` → `powerPlatform`, `powerBi` → `powerBiAdmin`).
   */
  service?: BudgetService;
  /**
   * Units taken from the service's budgets per attempt: Graph identity resource units, else requests (a `$batch`
   * costs the sum of its inner requests). @default for Graph its path's cost (`graphBudgetOf`), else 1
   */
  cost?: number;
  /** Stops waiting (for a budget or before a retry) and sending: the request then throws the signal's reason. */
  signal?: AbortSignal;
  /**
   * Parses a body answered with a status below 400, instead of `JSON.parse` (a content blob kept as its text and
   * parsed record by record, see platform/json/array.ts). A SyntaxError it throws counts as a body cut short on the
   * way: retried like a network failure.
   */
  parseBody?: (text: string) => unknown;
  /**
   * Recognises throttling answered with another status (the Management Activity API answers `AF429` with HTTP 403):
   * such answers are retried like a 429.
   */
  throttledWhen?: (status: number, body: unknown) => boolean;
}

/**
 * The body of a response as UTF-8 text (a leading byte order mark dropped, invalid bytes as U+FFFD, as undici's
 * `body.text()`), decoded chunk by chunk as it arrives. undici's `text()` keeps every chunk, then copies them into one
 * buffer as large as the body (Buffer.concat, outside the V8 heap) before decoding it: at 50,000 users these
 * body-sized copies, freed only when the V8 garbage collector got to their Buffer, were a good part of the process's
 * native memory (issue 18). Here each chunk is decoded and let go; the decoded pieces are joined once.
 */
async function bodyText(body: AsyncIterable<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  const parts: string[] = [];
  for await (const chunk of body) parts.push(decoder.decode(chunk, { stream: true }));
  parts.push(decoder.decode());
  return parts.length === 2 ? parts[0]! + parts[1]! : parts.join('');
}

/** A response with its JSON body parsed (or `null` when empty). */
export interface HttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
  /** The body text as received (empty when there was none): for callers that keep the upstream bytes verbatim. */
  text: string;
}

/**
 * An upstream answered with an error status after retries. `code` is the upstream's own error code when the body
 * had one (`Authorization_RequestDenied`, `0x80072560`, `Forbidden`, …); `upstreamMessage` its message.
 */
export class UpstreamHttpError extends VigilError {
  readonly status: number;
  readonly api: ApiName;
  readonly upstreamCode: string | undefined;
  readonly upstreamMessage: string | undefined;
  /** The upstream's error body as received (Microsoft error bodies hold no secrets of ours); not serialised. */
  declare readonly body: unknown;
  constructor(api: ApiName, method: string, url: string, status: number, upstream: string | undefined, upstreamMessage: string | undefined, body?: unknown) {
    const kind = status === 401 ? 'authentication' : status === 403 ? 'authorization' : status === 404 ? 'not-found' : 'upstream';
    super(
      upstreamCode(upstream ?? `HTTP_${status}`),
      `${api} ${method} ${redactUrl(url)} answered ${status}${upstream ? ` ${upstream}` : ''}${upstreamMessage ? `: ${upstreamMessage}` : ''}`,
      {
        kind,
        detail: { status, api, ...(upstream ? { upstreamCode: upstream } : {}) },
      },
    );
    this.status = status;
    this.api = api;
    this.upstreamCode = upstream;
    this.upstreamMessage = upstreamMessage;
    Object.defineProperty(this, 'body', { value: body, enumerable: false });
  }
}

/** Strips the query string (may hold skip tokens or, in identity flows, codes) for logs and errors. */
function redactUrl(url: string): string {
  const i = url.indexOf('?');
  return i < 0 ? url : url.slice(0, i);
}

/** Counters the pipeline keeps per API; a collection run records them. */
export interface HttpStats {
  requests: number;
  retries: number;
  throttled: number;
  /** Total seconds spent waiting before retries. */
  waitedSeconds: number;
}

/**
 * Where the pipeline reports what it sees for metrics (implemented by `platform/metrics`' `Metrics`). Labels are
 * the API family and status only: never URLs, tenants or tokens.
 */
export interface HttpMetrics {
  /** Every upstream answer, retried attempts included (`status` as received on the wire), or `network_error`. */
  upstreamResponse(api: ApiName, status: number | 'network_error'): void;
  /** Every wait before a retry, in seconds (Retry-After or backoff). */
  throttleWait(api: ApiName, seconds: number): void;
}

/**
 * Socket errors meaning the host cannot be reached at all, with what each means (Node's common system errors,
 * https://nodejs.org/api/errors.html#common-system-errors; undici's connect timeout). Unlike a reset connection or a
 * 5xx these do not come and go within a backoff: a name that does not resolve or a port nobody listens on stays so
 * for minutes. They are retried once (a DNS or routing blip), not `maxAttempts` times with growing waits, so an
 * interactive command names the host in about a second instead of after half a minute. Throttling (429/503) is not
 * affected.
 */
const UNREACHABLE: Record<string, string> = {
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (DNS unavailable)',
  ECONNREFUSED: 'nothing accepts connections at that address',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
};
/** Attempts at an unreachable host, first included. */
const UNREACHABLE_ATTEMPTS = 2;

/** Options of {@link HttpClient}. */
export interface HttpClientOptions {
  /**
   * Where requests may go, per API (built from the cloud profile with `LinkPolicy.fromProfile`). Every request is
   * checked before its token is asked for: a URL off the API's hosts is never sent anything.
   */
  links: LinkPolicy;
  /** Extra CA certificate (PEM) to trust in addition to the system roots, e.g. the emulator's. */
  caPem?: string | null;
  /** Attempts per request, first included. @default 6 */
  maxAttempts?: number;
  /** Longest single wait in seconds. @default 120 */
  maxWaitSeconds?: number;
  /** Base delay for backoff without `Retry-After`, in seconds. @default 1 */
  baseDelaySeconds?: number;
  logger: Logger;
  /** Shared throttling budgets per (tenant, API); none by default. */
  budget?: ThrottleBudget;
  /**
   * The setting to check when a host cannot be reached at all (name not resolved, connection refused): given the host,
   * returns the remediation, e.g. which cloud profile or endpoints file named it. Default: check network access.
   */
  unreachableHint?: (host: string) => string;
  /** Injected for tests of timing logic; defaults to real timers (ended early by the signal, when given). */
  sleepMs?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Receives every upstream answer and every wait (Prometheus metrics); none by default. */
  metrics?: HttpMetrics;
}

/** Parses `Retry-After` as seconds (integer or fractional) or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return n;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

function headerRecord(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function upstreamError(body: unknown): { code?: string; message?: string } {
  if (body && typeof body === 'object' && 'error' in body) {
    const err = (body as { error: unknown }).error;
    if (err && typeof err === 'object') {
      const e = err as { code?: unknown; message?: unknown };
      return { code: typeof e.code === 'string' ? e.code : undefined, message: typeof e.message === 'string' ? e.message : undefined };
    }
    if (typeof err === 'string') {
      const d = (body as { error_description?: unknown }).error_description;
      return { code: err, message: typeof d === 'string' ? d : undefined };
    }
  }
  return {};
}

/** The HTTP pipeline. One instance per process (it pools connections). */
export class HttpClient {
  readonly stats = new Map<ApiName, HttpStats>();
  /** The link policy every request is checked against; sources check the links they store with it too. */
  readonly links: LinkPolicy;
  /** Options of the connection pool, created with undici on the first request (start-up of commands that send none stays light). */
  private readonly agentOptions: Agent.Options;
  /** The extra CA to trust beside the system roots (the pool's TLS context is built from it once, on first use). */
  private readonly caPem: string | null | undefined;
  /** Holds the pool: shared with the views of {@link bind}, so they send through the same connections. */
  private readonly shared: { pool?: Promise<{ agent: Agent; request: typeof undiciRequest }> } = {};
  /** The signal of a view made by {@link bind}, added to every request, acquire and wait of the view. */
  private boundSignal: AbortSignal | undefined;
  /** The application ID of a view made by {@link bind}, charged with every request and acquire of the view. */
  private boundAppId: string | undefined;
  private readonly maxAttempts: number;
  private readonly unreachableHint: ((host: string) => string) | undefined;
  private readonly maxWaitSeconds: number;
  private readonly baseDelaySeconds: number;
  private readonly logger: Logger;
  private readonly sleepMs: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly budget: ThrottleBudget | undefined;
  private readonly metrics: HttpMetrics | undefined;

  constructor(options: HttpClientOptions) {
    this.links = options.links;
    this.budget = options.budget;
    this.metrics = options.metrics;
    this.caPem = options.caPem;
    this.agentOptions = {
      headersTimeout: 60_000,
      bodyTimeout: 120_000,
      keepAliveTimeout: 10_000,
    };
    this.maxAttempts = options.maxAttempts ?? 6;
    this.unreachableHint = options.unreachableHint;
    this.maxWaitSeconds = options.maxWaitSeconds ?? 120;
    this.baseDelaySeconds = options.baseDelaySeconds ?? 1;
    this.logger = options.logger;
    this.sleepMs = options.sleepMs ?? ((ms, signal) => sleep(ms, undefined, { signal }).then(() => undefined));
  }

  /**
   * A view of this client (same connections, budgets, stats and metrics) bound to what one integration's requests
   * share — what a stream context gives its sources (`StreamContext.http`), so no send path can leave them out:
   * - `signal`: every request, budget acquire and throttled wait of the view also ends when it is aborted (a stopped
   *   run never sleeps through a long `Retry-After` or a spent budget, whether or not the request names the signal);
   * - `appId`: the application (client) ID the requests are sent as, charged to the per-app limits (a request's own
   *   `appId` wins).
   * Returns this client when neither is given.
   */
  bind(scope: { signal?: AbortSignal | undefined; appId?: string | undefined }): HttpClient {
    if (!scope.signal && !scope.appId) return this;
    const view = Object.create(this) as HttpClient;
    view.boundSignal = this.signalOf(scope.signal);
    view.boundAppId = scope.appId ?? this.boundAppId;
    return view;
  }

  /** A charge with the view's application ID when it names none. */
  private withApp(charge: BudgetCharge): BudgetCharge {
    return charge.appId || !this.boundAppId ? charge : { ...charge, appId: this.boundAppId };
  }

  /** A request's own signal combined with the view's (either aborts). */
  private signalOf(signal: AbortSignal | undefined): AbortSignal | undefined {
    const bound = this.boundSignal;
    if (!bound || !signal || signal === bound) return signal ?? bound;
    return AbortSignal.any([signal, bound]);
  }

  /** Counters for one API (created on first use). */
  statsFor(api: ApiName): HttpStats {
    let s = this.stats.get(api);
    if (!s) this.stats.set(api, (s = { requests: 0, retries: 0, throttled: 0, waitedSeconds: 0 }));
    return s;
  }

  /**
   * Sends a request, retrying 408/429/5xx and network failures (reset connections, truncated bodies) up to
   * `maxAttempts` (a host that cannot be reached at all, see {@link UNREACHABLE}, only once more), and a 401 once with
   * a refreshed token. A 429 (or an answer that `throttledWhen` recognises), or a 503 with `Retry-After`, is the
   * server pacing us: it is waited out as many times as it comes, without using up the attempts (throttling delays a
   * collection, it never fails it; `req.signal` stops the wait), and with a shared budget a 429 penalizes the
   * request's service for every worker (blocked for the `Retry-After`, pace halved) instead of this request alone.
   *
   * @returns the response with its JSON body when the status is below 400.
   * @throws the abort reason of `req.signal`; VigilError `upstream` / `FOREIGN_LINK` when `req.url` is not a host of `req.api` in the link policy
   *   (checked before anything is sent and before `req.token` is called);
   *   UpstreamHttpError for an error status after retries; VigilError `upstream` / `UPSTREAM_UNREACHABLE` naming
   *   the host and the setting to check when it cannot be reached; `upstream` / `NETWORK_ERROR` when the network
   *   failed otherwise on every attempt.
   */
  async send<T = unknown>(req: HttpRequest): Promise<HttpResponse<T>> {
    const method = req.method ?? 'GET';
    // The link policy, before the token is even asked for: a token never leaves the hosts of its API.
    this.links.check(req.api, req.url, 'the request URL');
    if (this.boundSignal || this.boundAppId) req = { ...req, signal: this.signalOf(req.signal), appId: req.appId ?? this.boundAppId };
    const stats = this.statsFor(req.api);
    const charge = chargeOf(req);
    let refreshed = false;
    // Throttling answers are the server pacing us, not failing: they are waited out without limit, so a long
    // throttled collection slows down instead of dropping data. Their own backoff grows with each in a row.
    let throttledInRow = 0;
    for (let attempt = 1; ; attempt++) {
      req.signal?.throwIfAborted();
      if (this.budget && charge) await this.budget.acquire(charge, req.signal);
      stats.requests++;
      const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
      if (req.token) headers.authorization = `Bearer ${await req.token(refreshed)}`;
      let payload: string | undefined;
      if (req.body !== undefined) {
        payload = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
        headers['content-type'] ??= 'application/json';
      }
      let status: number;
      let resHeaders: Record<string, string>;
      let text: string;
      try {
        const { agent, request } = await this.connectionPool();
        const res = await request(req.url, { method, headers, body: payload, dispatcher: agent, signal: req.signal });
        status = res.statusCode;
        resHeaders = headerRecord(res.headers);
        text = await bodyText(res.body);
      } catch (e) {
        req.signal?.throwIfAborted();
        this.metrics?.upstreamResponse(req.api, 'network_error');
        const reason = (e as { code?: string }).code ?? (e as Error).message;
        const unreachable = UNREACHABLE[reason];
        if (unreachable && attempt >= Math.min(this.maxAttempts, UNREACHABLE_ATTEMPTS)) {
          const host = new URL(req.url).host;
          throw new VigilError(
            'UPSTREAM_UNREACHABLE',
            `Cannot reach ${host} (${req.api}): ${unreachable} [${reason}, ${attempt} attempt${attempt > 1 ? 's' : ''}].`,
            {
              remediation: this.unreachableHint?.(host) ?? `Check that this machine can reach ${host} (DNS, firewall, proxy).`,
              detail: { host, api: req.api, reason },
              cause: e,
            },
          );
        }
        if (attempt >= this.maxAttempts) {
          throw new VigilError('NETWORK_ERROR', `${req.api} ${method} ${redactUrl(req.url)} failed after ${attempt} attempts: ${reason}`, {
            cause: e,
          });
        }
        await this.wait(req, attempt, undefined, `network error ${reason}`);
        continue;
      }
      this.metrics?.upstreamResponse(req.api, status);
      let body: unknown = null;
      if (text.length > 0) {
        try {
          body = status < 400 && req.parseBody ? req.parseBody(text) : JSON.parse(text);
        } catch (e) {
          // A 2xx body that does not parse was cut short on the way; retry like a network failure.
          if (status < 400 && attempt < this.maxAttempts) {
            await this.wait(req, attempt, undefined, 'unparsable body');
            continue;
          }
          if (status < 400) throw new VigilError('INVALID_BODY', `${req.api} ${method} ${redactUrl(req.url)} returned a body that is not JSON.`, { cause: e });
          body = text;
        }
      }
      if (status < 400) return { status, headers: resHeaders, body: body as T, text };
      if (req.throttledWhen?.(status, body)) status = 429;
      if (status === 401 && req.token && !refreshed) {
        refreshed = true;
        continue;
      }
      const retryAfter = parseRetryAfter(resHeaders['retry-after']);
      if (status === 429 || (status === 503 && retryAfter !== undefined)) {
        throttledInRow++;
        attempt--;
        if (status === 429) stats.throttled++;
        await this.wait(req, throttledInRow, retryAfter, `status ${status}`, status === 429 ? charge : undefined);
        continue;
      }
      if (RETRY_STATUSES.has(status) && attempt < this.maxAttempts) {
        await this.wait(req, attempt, retryAfter, `status ${status}`);
        continue;
      }
      const { code, message } = upstreamError(body);
      throw new UpstreamHttpError(req.api, method, req.url, status, code, message, body);
    }
  }

  private async wait(req: HttpRequest, attempt: number, retryAfter: number | undefined, why: string, throttled?: BudgetCharge): Promise<void> {
    const seconds = this.backoffSeconds(attempt, retryAfter);
    this.logger.debug({ api: req.api, path: redactUrl(req.url), attempt, waitSeconds: seconds, why }, 'retrying upstream request');
    await this.waitOut(req.api, seconds, throttled, req.signal);
  }

  /** Retry-After is the server's word (capped at `maxWaitSeconds`); without it, full jitter over an exponentially growing ceiling. */
  private backoffSeconds(attempt: number, retryAfter: number | undefined): number {
    return Math.min(this.maxWaitSeconds, retryAfter ?? Math.random() * Math.min(this.maxWaitSeconds, this.baseDelaySeconds * 2 ** (attempt - 1)));
  }

  /**
   * Counts a retry's wait and waits it out: after a 429 on a budgeted service the shared budget is penalized instead
   * (this worker's next acquire waits the block out, and so does every other worker's); otherwise sleeps here.
   */
  private async waitOut(api: ApiName, seconds: number, throttled: BudgetCharge | undefined, signal: AbortSignal | undefined): Promise<void> {
    const stats = this.statsFor(api);
    stats.retries++;
    stats.waitedSeconds += seconds;
    this.metrics?.throttleWait(api, seconds);
    // The next acquire waits the block out; a service without a shared budget waits here.
    if (throttled && this.budget && (await this.budget.penalize(throttled, seconds))) return;
    // The sleep ends when the signal is aborted (a stopped run does not sleep out a 120 s Retry-After), with its reason.
    await this.sleepMs(seconds * 1000, signal).catch((e: unknown) => {
      signal?.throwIfAborted();
      throw e;
    });
    signal?.throwIfAborted();
  }

  /**
   * An inner request of a `$batch` was throttled (inner 429, or 503 with `Retry-After`): counts it and paces its
   * service like an outer 429 (`retryAfter` seconds, or a backoff growing with `inRow`, the throttled answers in a row
   * for that request); `count` is how many inner requests of the service were throttled in the batch. The caller then
   * acquires the inner requests' units again before resending them.
   */
  async innerThrottled(
    api: ApiName,
    charge: BudgetCharge,
    throttled: { retryAfter: number | undefined; inRow: number; count: number },
    signal?: AbortSignal,
  ): Promise<void> {
    this.statsFor(api).throttled += throttled.count;
    await this.waitOut(api, this.backoffSeconds(throttled.inRow, throttled.retryAfter), this.withApp(charge), this.signalOf(signal));
  }

  /** Takes a request's units from its service's shared budget (a `$batch` takes its inner requests' before sending). */
  async acquire(charge: BudgetCharge, signal?: AbortSignal): Promise<void> {
    if (this.budget) await this.budget.acquire(this.withApp(charge), this.signalOf(signal));
  }

  /**
   * The undici pool, loaded and created on first use. With an extra CA, one TLS context (system roots + that CA) is
   * built here and shared by every connection: passed as `ca`, Node's `tls.connect` built a new context from the 140-odd
   * roots for each connection (measured: 0.27 s of CPU in a 5,000-user collection against the emulator).
   */
  private connectionPool(): Promise<{ agent: Agent; request: typeof undiciRequest }> {
    this.shared.pool ??= import('undici').then((undici) => {
      const connect = this.caPem ? { secureContext: createSecureContext({ ca: [...rootCertificates, this.caPem] }) } : {};
      return { agent: new undici.Agent({ ...this.agentOptions, connect }), request: undici.request };
    });
    return this.shared.pool;
  }

  /** Closes pooled connections (none when nothing was sent). */
  async close(): Promise<void> {
    if (this.shared.pool) await (await this.shared.pool).agent.close();
  }
}
