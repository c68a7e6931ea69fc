/**
 * Helpers shared by the emulator's services: request context, bearer extraction, paging cursors, `$select` parsing.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { SignInState } from './signin.ts';
import type { TenantStore } from './tenant.ts';
import type { TokenService } from './tokens.ts';

/** The upstream services the emulator serves, as used in logs and fault selection. */
export type ServiceName = 'identity' | 'graph' | 'bap' | 'powerApps' | 'flow' | 'powerPlatform' | 'dataverse' | 'managementActivity' | 'powerBi' | 'arm';

/** Services plus the emulator's own control API (never faulted, never logged). */
export type RouteService = ServiceName | 'control';

/** Path prefixes of the services that are not at the root (identity is at the root). */
const SERVICE_PREFIXES: Readonly<Record<Exclude<ServiceName, 'identity'>, string>> = {
  graph: '/graph',
  bap: '/bap',
  powerApps: '/powerapps',
  flow: '/flow',
  powerPlatform: '/powerplatform',
  dataverse: '/dataverse',
  managementActivity: '/manage',
  powerBi: '/powerbi',
  arm: '/arm',
};

/**
 * Which service a request path belongs to (`/_emulator/…` → control; no known prefix → identity).
 * @param url path with optional query.
 */
export function serviceOf(url: string): RouteService {
  if (url === '/_emulator' || url.startsWith('/_emulator/')) return 'control';
  for (const [service, prefix] of Object.entries(SERVICE_PREFIXES)) {
    if (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) return service as ServiceName;
  }
  return 'identity';
}

/** What every service module needs from the running emulator. */
export interface EmulatorContext {
  store: TenantStore;
  tokens: TokenService;
  /** Consent behaviours, device codes, refresh tokens (interactive sign-in state). */
  signIn: SignInState;
  /** `https://127.0.0.1:PORT` — known once listening. */
  baseUrl(): string;
}

/** A fresh request/trace id (GUID). */
export function newId(): string {
  return randomUUID();
}

/** `YYYY-MM-DD HH:MM:SSZ`, the timestamp format inside AADSTS error descriptions. */
export function aadTimestamp(date = new Date()): string {
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** `YYYY-MM-DDTHH:MM:SS`, Graph's `innerError.date` format (UTC, no zone designator). */
export function graphDate(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, '');
}

/** The token of an `Authorization: Bearer …` header (scheme case-insensitive), or null. */
export function bearerToken(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? (m[1] ?? null) : null;
}

/** One query parameter as a string (first value if repeated), or undefined. */
export function queryParam(req: FastifyRequest, name: string): string | undefined {
  const q = req.query as Record<string, string | string[] | undefined> | undefined;
  const v = q?.[name];
  if (Array.isArray(v)) return v[0];
  return v;
}

/** Parses `$select=a,b, c` into trimmed, non-empty names; undefined when the option is absent or empty. */
export function parseSelect(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return names.length > 0 ? names : undefined;
}

/** Position in a collection where the next page starts: `index` of the next element, `last` key of the previous one. */
export interface PageCursor {
  /** Collection key the cursor belongs to (e.g. `users`, `members:{groupId}`). */
  c: string;
  index: number;
  last: string;
}

/** Encodes a cursor as an opaque base64url token. */
export function encodeCursor(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, ...cursor }), 'utf8').toString('base64url');
}

/** Decodes a token from `encodeCursor`; null when it is malformed. */
export function decodeCursor(token: string): PageCursor | null {
  try {
    const o = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (o.v !== 1 || typeof o.c !== 'string' || typeof o.index !== 'number' || typeof o.last !== 'string') return null;
    if (!Number.isInteger(o.index) || o.index < 0) return null;
    return { c: o.c, index: o.index, last: o.last };
  } catch {
    return null;
  }
}

/**
 * Where to resume a keyset page: `index` if the element before it still has key `last`, else just after the element
 * with key `last` wherever it moved, else `index` (the element was deleted; later elements may shift by one).
 * @param find position lookup for a key (-1 when absent).
 */
export function resumeIndex<T>(items: readonly T[], key: (item: T) => string, index: number, last: string, find: (id: string) => number): number {
  const before = items[index - 1];
  if (before !== undefined && key(before) === last) return index;
  const at = find(last);
  if (at >= 0) return at + 1;
  return Math.min(index, items.length);
}

/** Builds a query string keeping `$` and `,` readable as Microsoft's nextLinks do; values are percent-encoded. */
export function buildQuery(params: [string, string | undefined][]): string {
  const parts = params
    .filter((p): p is [string, string] => p[1] !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/%2C/gi, ',').replace(/%24/g, '$')}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** Projects an object to the selected properties (in selection order); properties the object lacks are skipped. */
export function project(obj: Record<string, unknown>, select: readonly string[] | undefined, always: readonly string[] = []): Record<string, unknown> {
  if (!select) return obj;
  const out: Record<string, unknown> = {};
  for (const k of always) if (k in obj) out[k] = obj[k];
  for (const k of select) if (k in obj) out[k] = obj[k];
  return out;
}
