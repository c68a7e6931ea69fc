// The portal's only way to the server: same-origin fetch with the session cookie, the CSRF header on every change,
// and one error type carrying the API's {code, message, field, remediation}.
import type { ApiErrorBody } from './types.ts';

const API = '/api/v1';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly remediation: string | undefined;
  constructor(status: number, code: string, message: string, field?: string, remediation?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.remediation = remediation;
  }
}

let csrfFallback: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** Remembers the token a sign-in answered, in case the cookie cannot be read (it normally can). */
export function setCsrfToken(token: string | null): void {
  csrfFallback = token;
}

/** Called whenever the server answers 401 (session ended): the app shows the sign-in page. */
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

function csrfToken(): string | null {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === 'vigil_csrf') return decodeURIComponent(v.join('='));
  }
  return csrfFallback;
}

type Query = Record<string, string | number | null | undefined>;

/** Builds `/api/v1<path>?query`, leaving out empty values. */
export function apiUrl(path: string, query?: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return `${API}${path}${s ? `?${s}` : ''}`;
}

async function request<T>(method: string, path: string, body?: unknown, query?: Query, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') {
    const token = csrfToken();
    if (token) headers['x-csrf-token'] = token;
  }
  let res: Response;
  try {
    res = await fetch(apiUrl(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(
      0,
      'NETWORK',
      'The Vigil server could not be reached.',
      undefined,
      'Check your connection and that the server is running, then try again.',
    );
  }
  const text = await res.text();
  let json: unknown = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!res.ok) {
    const err = (json as ApiErrorBody | null)?.error;
    if (res.status === 401 && path !== '/auth/login' && onUnauthorized) onUnauthorized();
    let remediation = err?.remediation;
    if (res.status === 429 && !remediation) {
      const after = res.headers.get('retry-after');
      remediation = after ? `Try again in ${after} seconds.` : 'Try again in a moment.';
    }
    throw new ApiError(
      res.status,
      err?.code ?? `HTTP_${res.status}`,
      err?.message ?? `The server answered ${res.status} ${res.statusText}.`,
      err?.field,
      remediation,
    );
  }
  return json as T;
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>('GET', path, undefined, query, signal),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
};

/** Encodes one path segment (ids are opaque strings). */
export const seg = (s: string) => encodeURIComponent(s);
