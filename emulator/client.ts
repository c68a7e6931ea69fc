/**
 * A minimal HTTPS client for tests and benchmarks that talk to a running emulator (undici, trusting only the
 * emulator's CA). Product code has its own HTTP stack; this exists so emulator tests need no helpers of their own.
 */
import { Agent, request } from 'undici';
import type { RunningEmulator } from './index.ts';

/** A parsed response: status, lower-case headers, the raw text and the JSON body (undefined when not JSON). */
export interface EmulatorResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience: bodies are asserted field by field
  json: any;
}

/** Options of one request. */
export interface EmulatorRequestOptions {
  /** Bearer token for `Authorization`. */
  token?: string;
  headers?: Record<string, string>;
  /** JSON-serialised when an object; sent as is when a string. */
  body?: unknown;
}

/** Client bound to one emulator. */
export interface EmulatorClient {
  /** The undici dispatcher trusting the emulator CA (pass it to your own `request`/`fetch`). */
  dispatcher: Agent;
  /** A request to a path (`/graph/v1.0/users`) or an absolute URL (an `@odata.nextLink`). */
  request(method: string, pathOrUrl: string, options?: EmulatorRequestOptions): Promise<EmulatorResponse>;
  /** GET shorthand. */
  get(pathOrUrl: string, options?: EmulatorRequestOptions): Promise<EmulatorResponse>;
  /**
   * Client-credentials token request (form-encoded `client_secret`) to `/{tenant}/oauth2/v2.0/token`.
   * Returns the raw response: `json.access_token` on 200, the AADSTS body otherwise.
   */
  token(params: { tenant: string; clientId: string; clientSecret?: string; scope?: string; grantType?: string; basic?: boolean }): Promise<EmulatorResponse>;
  /**
   * An app-only access token for `resource` (e.g. `https://graph.microsoft.com`, a Dataverse org URL) with the tenant's
   * first application and its first secret.
   * @throws Error with the status and body when the emulator refuses it.
   */
  appToken(tenant: { id: string; apps: { appId: string; secrets: { value: string }[] }[] }, resource: string): Promise<string>;
  /**
   * GETs `first` and follows the next-page link (`@odata.nextLink` by default; `nextLink` for Power Platform and ARM)
   * to the end: every item of every page's `value`, and the pages' bodies.
   * @throws Error on a page that does not answer 200.
   */
  pages(
    first: string,
    options: { token: string; link?: '@odata.nextLink' | 'nextLink' },
  ): Promise<{ items: Record<string, unknown>[]; pages: Record<string, unknown>[] }>;
  /** Closes the dispatcher's connections. */
  close(): Promise<void>;
}

/** Creates a client for `emulator` (HTTPS, the emulator CA as the only trusted root, keep-alive). */
export function emulatorClient(emulator: Pick<RunningEmulator, 'url' | 'caPem'>): EmulatorClient {
  const dispatcher = new Agent({ connect: { ca: emulator.caPem }, keepAliveTimeout: 1_000 });
  const doRequest = async (method: string, pathOrUrl: string, options: EmulatorRequestOptions = {}): Promise<EmulatorResponse> => {
    const url = pathOrUrl.startsWith('https://') ? pathOrUrl : `${emulator.url}${pathOrUrl}`;
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (typeof options.body === 'string') body = options.body;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(url, { method: method as 'GET', headers, body, dispatcher });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers as Record<string, string | string[] | undefined>, text, json };
  };
  return {
    dispatcher,
    request: doRequest,
    get: (pathOrUrl, options) => doRequest('GET', pathOrUrl, options),
    token: (p) => {
      const form = new URLSearchParams({ grant_type: p.grantType ?? 'client_credentials', scope: p.scope ?? 'https://graph.microsoft.com/.default' });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (p.basic) {
        headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(p.clientId)}:${encodeURIComponent(p.clientSecret ?? '')}`).toString('base64')}`;
      } else {
        form.set('client_id', p.clientId);
        if (p.clientSecret !== undefined) form.set('client_secret', p.clientSecret);
      }
      return doRequest('POST', `/${p.tenant}/oauth2/v2.0/token`, { headers, body: form.toString() });
    },
    async appToken(tenant, resource) {
      const app = tenant.apps[0]!;
      const res = await this.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value, scope: `${resource}/.default` });
      if (res.status !== 200) throw new Error(`token for ${resource} refused: ${res.status} ${res.text}`);
      return res.json.access_token as string;
    },
    async pages(first, options) {
      const items: Record<string, unknown>[] = [];
      const pages: Record<string, unknown>[] = [];
      for (let url: string | undefined = first; url;) {
        const res = await doRequest('GET', url, { token: options.token });
        if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.text.slice(0, 500)}`);
        pages.push(res.json);
        items.push(...(res.json.value as Record<string, unknown>[]));
        url = res.json[options.link ?? '@odata.nextLink'] as string | undefined;
      }
      return { items, pages };
    },
    close: () => dispatcher.close(),
  };
}
