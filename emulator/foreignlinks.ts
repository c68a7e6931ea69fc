/**
 * Foreign links: a fault that makes the emulator hand out links to another host, as a compromised network path, a
 * tampered answer or a hostile upstream would. Each rule names a service and a link — a JSON property anywhere in the
 * answer (nested `$batch` bodies included) or a response header — and the origin that replaces the emulator's own
 * (`https://127.0.0.1:PORT`) at the start of that link. Everything else about the link (path, skip token) is kept, so
 * a client that follows it sends the same request, with its token, to the other host.
 *
 * The links rewritten are the ones Microsoft's APIs hand out: `@odata.nextLink` and `@odata.deltaLink` (Graph,
 * Dataverse; `concepts/paging.md`, `delta-query-overview.md`), `nextLink` (ARM, BAP, Power Apps, Flow), the
 * `NextPageUri` header and `contentUri` (Office 365 Management Activity API reference), `continuationUri` (Power BI
 * "Admin - Get Activity Events", widely shared artifacts), the `Location` header (Power BI PostWorkspaceInfo 202) and
 * `linkedEnvironmentMetadata.instanceUrl` (BAP environments list).
 */
import type { ServiceName } from './common.ts';

/** One foreign-link rule. */
export interface ForeignLinkRule {
  /** The service whose answers carry the foreign link. */
  service: ServiceName;
  /**
   * The link: a JSON property name (`@odata.nextLink`, `@odata.deltaLink`, `nextLink`, `contentUri`,
   * `continuationUri`, `instanceUrl`) or a response header (`NextPageUri`, `Location`, case-insensitive).
   */
  field: string;
  /** The origin put in place of the emulator's, e.g. `https://127.0.0.2:8443` (no trailing slash). */
  origin: string;
  /** Only answers to paths containing this substring (e.g. `/$batch`, `/users/delta`). @default every path */
  match?: string;
}

/** Counters of rewritten links. */
export interface ForeignLinkCounters {
  /** Links rewritten so far, per `field`. */
  byField: Record<string, number>;
  total: number;
}

/** Holds the foreign-link rules and applies them to answers. */
export class ForeignLinks {
  #rules: ForeignLinkRule[] = [];
  #counters: ForeignLinkCounters = { byField: {}, total: 0 };

  /** Replaces the rules. Throws RangeError for a rule without a service, a field or an http(s) origin. */
  set(rules: ForeignLinkRule[]): void {
    for (const r of rules) {
      if (!r || typeof r.service !== 'string' || typeof r.field !== 'string' || r.field === '')
        throw new RangeError('a foreign-link rule needs a service and a field');
      if (typeof r.origin !== 'string' || !/^https?:\/\/[^/?#]+$/.test(r.origin))
        throw new RangeError(`origin must be scheme://host[:port] without a path, got ${String(r.origin)}`);
    }
    this.#rules = rules.map((r) => ({ ...r }));
  }

  /** Removes every rule (counters are kept). */
  clear(): void {
    this.#rules = [];
  }

  /** The active rules. */
  get rules(): ForeignLinkRule[] {
    return this.#rules.map((r) => ({ ...r }));
  }

  /** A copy of the counters. */
  counters(): ForeignLinkCounters {
    return { byField: { ...this.#counters.byField }, total: this.#counters.total };
  }

  /** The rules that apply to an answer of `service` to `path`. */
  matching(service: ServiceName, path: string): ForeignLinkRule[] {
    return this.#rules.filter((r) => r.service === service && (r.match === undefined || path.includes(r.match)));
  }

  /**
   * Rewrites an answer: headers in place (`getHeader`/`setHeader` of the reply) and the JSON payload, returned
   * (unchanged when nothing matched or the payload is not JSON text).
   * @param base the emulator's own origin, `https://127.0.0.1:PORT`.
   */
  apply(rules: ForeignLinkRule[], base: string, payload: unknown, headers: { get(name: string): unknown; set(name: string, value: string): void }): unknown {
    const swap = (value: string, rule: ForeignLinkRule): string | null => (value.startsWith(base) ? `${rule.origin}${value.slice(base.length)}` : null);
    for (const rule of rules) {
      const h = headers.get(rule.field.toLowerCase());
      if (typeof h === 'string') {
        const v = swap(h, rule);
        if (v !== null) {
          headers.set(rule.field.toLowerCase(), v);
          this.#count(rule.field);
        }
      }
    }
    if (typeof payload !== 'string' || payload === '') return payload;
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return payload;
    }
    let changed = false;
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const x of node) walk(x);
        return;
      }
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      for (const [k, v] of Object.entries(o)) {
        const rule = typeof v === 'string' ? rules.find((r) => r.field === k) : undefined;
        const swapped = rule ? swap(v as string, rule) : null;
        if (rule && swapped !== null) {
          o[k] = swapped;
          changed = true;
          this.#count(rule.field);
        } else walk(v);
      }
    };
    walk(json);
    return changed ? JSON.stringify(json) : payload;
  }

  #count(field: string): void {
    this.#counters.byField[field] = (this.#counters.byField[field] ?? 0) + 1;
    this.#counters.total++;
  }
}
