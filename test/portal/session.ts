import type { Page } from 'playwright-core';
import { until } from '../support/process.ts';
import type { PortalWorld } from './harness.ts';

/** Signs in through the sign-in page as the world's administrator. */
export async function signIn(w: PortalWorld, page: Page = w.page): Promise<void> {
  await page.goto(w.baseUrl);
  await page.getByLabel('Email').fill(w.email);
  await page.getByLabel('Password').fill(w.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** Calls the API with the page's session (and its CSRF token on a change); throws on a status other than `expect`. */
export async function apiCall<T>(
  w: PortalWorld,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  expect = [200, 201, 202, 204],
): Promise<T> {
  const csrf = (await w.context.cookies()).find((c) => c.name === 'vigil_csrf')?.value ?? '';
  const res = await w.page.request.fetch(`${w.baseUrl}/api/v1${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'x-csrf-token': csrf },
    ...(body === undefined ? {} : { data: body }),
  });
  if (!expect.includes(res.status())) throw new Error(`${method} ${path}: ${res.status()} ${await res.text()}\n${w.output().slice(-2000)}`);
  return (res.status() === 204 ? null : await res.json()) as T;
}

/**
 * Creates Contoso's customer-app integration through the API and runs one collection to its end, evaluation
 * included (the dashboard's posture has results). Returns the integration's id.
 */
export async function collectedIntegration(w: PortalWorld, name = 'Contoso'): Promise<string> {
  const app = w.contoso.apps.find((a) => a.appId === w.contoso.connectorAppId)!;
  const { integration: created } = await apiCall<{ integration: { id: string } }>(w, 'POST', '/integrations', {
    mode: 'customer-app',
    name,
    tenantId: w.contoso.id,
    clientId: app.appId,
    clientSecret: app.secrets[0]!.value,
  });
  // System Administrator where missing, so more checks can read Dataverse (a refusal leaves them not evaluated).
  await apiCall(w, 'POST', `/integrations/${created.id}/environments/grant`, undefined, [200, 400, 403, 409, 422, 502]);
  await apiCall(w, 'POST', `/integrations/${created.id}/runs`);
  await until(
    'the collection and its evaluation to finish',
    async () => {
      const dash = await apiCall<{ posture: { passed: number; failed: number } }>(w, 'GET', '/dashboard');
      return dash.posture.passed + dash.posture.failed > 0;
    },
    120_000,
  );
  return created.id;
}

/** What a page reported that it must not: console errors and Content-Security-Policy violations, since `watch`. */
export interface PageProblems {
  console: string[];
  csp: string[];
}

/**
 * Records console errors and CSP violations of `page` (the browser reports a violation as a console error and as a
 * `securitypolicyviolation` event, recorded by an init script into `window.__cspViolations`). `read()` returns and
 * clears them.
 */
export async function watchPage(page: Page): Promise<{ read: () => Promise<PageProblems> }> {
  const errors: string[] = [];
  page.on('console', (m) => {
    // The one expected failure: the portal asks for the session when it starts, and a signed-out browser gets 401
    // (Chromium logs every failed fetch). Any other failed request or script error counts.
    if (m.type() !== 'error' || (/status of 401/.test(m.text()) && m.location().url.endsWith('/api/v1/auth/session'))) return;
    errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  await page.addInitScript({
    content:
      "window.__cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));",
  });
  return {
    async read() {
      const csp = await page.evaluate<string[]>('window.__cspViolations ?? []').catch(() => [] as string[]);
      await page.evaluate('window.__cspViolations = []').catch(() => undefined);
      return { console: errors.splice(0), csp };
    },
  };
}
