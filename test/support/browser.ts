import { request, type Agent } from 'undici';
import { buildServer } from '../../src/api/server.ts';
import { handleConsentCallback, type ConsentDeps } from '../../src/onboarding/consent.ts';

/** One answer seen by the browser. */
export interface Hop {
  url: string;
  status: number;
  location: string | undefined;
  body: string;
}

/** Answers requests to one URL prefix in-process (e.g. Vigil's consent callback built with `buildServer`). */
export type Intercept = { prefix: string; handle: (pathAndQuery: string) => Promise<{ status: number; location: string | undefined; body: string }> };

/**
 * Follows redirects as the administrator's browser would, from a consent link through the emulator's admin consent and
 * authorize endpoints and Vigil's callback, up to `maxHops`. Requests under `intercept.prefix` are answered
 * in-process; every other URL is fetched (HTTPS to the emulator trusts its CA through `dispatcher`).
 */
export async function browse(url: string, options: { dispatcher: Agent; intercept?: Intercept; maxHops?: number }): Promise<{ hops: Hop[]; final: Hop }> {
  const hops: Hop[] = [];
  let next: string | undefined = url;
  for (let i = 0; next && i < (options.maxHops ?? 8); i++) {
    const current: string = next;
    let hop: Hop;
    if (options.intercept && current.startsWith(options.intercept.prefix)) {
      const u = new URL(current);
      hop = { url: current, ...(await options.intercept.handle(`${u.pathname}${u.search}`)) };
    } else {
      const res = await request(current, { dispatcher: options.dispatcher });
      hop = {
        url: current,
        status: res.statusCode,
        location: res.headers.location === undefined ? undefined : String(res.headers.location),
        body: await res.body.text(),
      };
    }
    hops.push(hop);
    next = hop.status >= 300 && hop.status < 400 && hop.location ? new URL(hop.location, current).toString() : undefined;
  }
  return { hops, final: hops[hops.length - 1]! };
}

/** An intercept serving Vigil's consent callback route (as `vigil serve` builds it) at `redirectUri`'s origin. */
export async function consentCallbackIntercept(deps: ConsentDeps, redirectUri: string): Promise<Intercept & { close(): Promise<void> }> {
  const app = await buildServer({ ready: async () => ({ ok: true, detail: {} }), consentCallback: (q) => handleConsentCallback(deps, q) });
  return {
    prefix: new URL(redirectUri).origin + '/',
    async handle(pathAndQuery) {
      const res = await app.inject({ url: pathAndQuery });
      const location = res.headers.location;
      return { status: res.statusCode, location: location === undefined ? undefined : String(location), body: res.body };
    },
    close: () => app.close(),
  };
}
