/**
 * A bounded in-memory log of the requests the emulator answered, for tests and benchmarks to assert on call patterns
 * (how many pages, which retries, which faults). Secrets never enter it: the token endpoint's form body is not
 * logged, and credential-like query parameters are redacted.
 */
import type { FaultKind } from './faults.ts';
import type { ServiceName } from './common.ts';

/** One answered (or deliberately dropped) request. `status` is 0 for a `reset` fault (no response). */
export interface RequestLogEntry {
  /** Sequence number since start (monotonic, survives `reset`). */
  seq: number;
  /** ISO time the request arrived. */
  time: string;
  method: string;
  service: ServiceName;
  /** Path and query, credential-like query values replaced by `REDACTED`. */
  path: string;
  status: number;
  fault?: FaultKind;
  /** Present (true) when the enforced limits refused the request (`throttling.ts`). */
  throttled?: true;
  /** Wall time from arrival to the response being handed to the socket, milliseconds. */
  durationMs: number;
  /**
   * Management Activity requests only: the `PublisherIdentifier` query value the client sent (any case of the name),
   * null when absent. Other services never carry the field.
   */
  publisherIdentifier?: string | null;
}

const SECRET_PARAMS = /^(client_secret|client_assertion|password|access_token|refresh_token|code|assertion|sig|signature)$/i;

/** Path + query with credential-like query values redacted (`client_secret`, `password`, `access_token`, …). */
export function redactPath(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const path = url.slice(0, q);
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((kv) => {
      const eq = kv.indexOf('=');
      const key = eq < 0 ? kv : kv.slice(0, eq);
      let decoded = key;
      try {
        decoded = decodeURIComponent(key);
      } catch {
        // keep the raw key
      }
      return eq >= 0 && SECRET_PARAMS.test(decoded) ? `${key}=REDACTED` : kv;
    });
  return `${path}?${parts.join('&')}`;
}

/** Ring buffer of `RequestLogEntry`. */
export class RequestLog {
  readonly #limit: number;
  #entries: RequestLogEntry[] = [];
  #seq = 0;

  /** @param limit most entries kept (oldest dropped first), ≥ 1. */
  constructor(limit = 10_000) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  /** Appends an entry (its `seq` is assigned here). */
  add(entry: Omit<RequestLogEntry, 'seq'>): void {
    this.#entries.push({ seq: ++this.#seq, ...entry });
    if (this.#entries.length > this.#limit) this.#entries.splice(0, this.#entries.length - this.#limit);
  }

  /** Copies of the kept entries, oldest first, optionally filtered by service. */
  list(filter: { service?: ServiceName } = {}): RequestLogEntry[] {
    return this.#entries.filter((e) => filter.service === undefined || e.service === filter.service).map((e) => ({ ...e }));
  }

  /** Drops every entry. */
  reset(): void {
    this.#entries = [];
  }
}
