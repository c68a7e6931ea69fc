import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConsoleMessage, Page } from 'playwright-core';
import { expect } from 'vitest';
import { until } from '../support/process.ts';
import type { PortalWorld } from './harness.ts';

/** Signs in through the sign-in page as the world's administrator, or as `as`. */
export async function signIn(w: PortalWorld, page: Page = w.page, as: { email: string; password: string } = w): Promise<void> {
  await page.goto(w.baseUrl);
  await page.getByLabel('Email').fill(as.email);
  await page.getByLabel('Password').fill(as.password);
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
 * Creates Contoso's customer-app integration through the API and runs one collection to its end: the collection, its
 * evaluation (the dashboard's posture has results), then the audit cycle the job runs after it (ingest the feed, run
 * the detections), so the alerts the detections raise are stored when this returns. Returns the integration's id.
 *
 * No API says when a job's audit cycle is over (GET /integrations/{id}/runs ends with the collection), so this reads
 * the server's log (`<dataDir>/logs/vigil.log`, JSON lines written synchronously): every ended run of the integration
 * has its "audit cycle finished" line, whose `alertsRaised` alerts GET /alerts then lists.
 * @throws Error when the audit cycle failed, or nothing ended within 120 s.
 */
export async function collectedIntegration(w: PortalWorld, name = 'Contoso'): Promise<string> {
  const { integration: created } = await apiCall<{ integration: { id: string } }>(w, 'POST', '/integrations', contosoIntegration(w, name));
  const id = created.id;
  // System Administrator where missing, so more checks can read Dataverse (a refusal leaves them not evaluated).
  await apiCall(w, 'POST', `/integrations/${id}/environments/grant`, undefined, [200, 400, 403, 409, 422, 502]);
  await apiCall(w, 'POST', `/integrations/${id}/runs`);
  const raised = await until(
    'the collection, its evaluation and its audit cycle to finish',
    async () => {
      const runs = (await apiCall<{ items: RunStatus[] }>(w, 'GET', `/integrations/${id}/runs`)).items;
      if (!runs.length || runs.some((r) => r.status === 'running' || r.status === 'queued')) return false;
      const cycles = auditCycles(w, id);
      const failed = cycles.find((c) => c.msg !== 'audit cycle finished');
      if (failed) throw new Error(`The audit cycle of ${id} did not finish: ${JSON.stringify(failed)}\n${w.output().slice(-2000)}`);
      // Each job that collected without failing runs one audit cycle after it.
      const ended = runs.filter((r) => r.status !== 'failed').length;
      return cycles.length >= ended && cycles.length > 0 ? { alerts: cycles.reduce((n, c) => n + (c.alertsRaised ?? 0), 0) } : false;
    },
    120_000,
  );
  await until(
    `GET /alerts to list the ${raised.alerts} alerts the detections raised`,
    async () => (await apiCall<{ items: unknown[] }>(w, 'GET', `/alerts?integrationId=${id}&limit=500`)).items.length >= Math.min(raised.alerts, 500),
    10_000,
  );
  return id;
}

/** A signed-in page of the portal: a short name (for messages) and its path. */
export interface PortalPage {
  name: string;
  path: string;
}

/**
 * Every signed-in page of the portal, after {@link collectedIntegration} collected `integrationId`: the lists, one
 * finding, one agent, each alert (the first page of GET /alerts), one environment, the settings tabs, and the
 * not-found page. Reads the ids through the API with the page's session.
 */
export async function portalPages(w: PortalWorld, integrationId: string): Promise<PortalPage[]> {
  const findings = (await apiCall<{ items: { id: string }[] }>(w, 'GET', '/findings?status=all&limit=1')).items;
  const agents = (await apiCall<{ items: { integrationId: string; agentId: string; environmentId: string }[] }>(w, 'GET', '/agents?limit=1')).items;
  const alerts = (await apiCall<{ items: { id: string }[] }>(w, 'GET', '/alerts?limit=1')).items;
  return [
    { name: 'dashboard', path: '/' },
    { name: 'integrations', path: '/integrations' },
    { name: 'integration', path: `/integrations/${integrationId}` },
    { name: 'inventory', path: '/inventory' },
    { name: 'findings', path: '/findings' },
    { name: 'finding', path: `/findings/${findings[0]!.id}` },
    { name: 'agent', path: `/integrations/${agents[0]!.integrationId}/agents/${encodeURIComponent(agents[0]!.agentId)}` },
    { name: 'alerts', path: '/alerts' },
    ...alerts.map((a) => ({ name: 'alert', path: `/alerts/${a.id}` })),
    { name: 'events', path: '/events' },
    { name: 'agents', path: '/agents' },
    { name: 'environment', path: `/environments/${agents[0]!.integrationId}/${encodeURIComponent(agents[0]!.environmentId)}` },
    { name: 'protection', path: '/protection' },
    { name: 'checks', path: '/checks' },
    { name: 'compliance', path: '/compliance' },
    { name: 'compliance-scubagear', path: '/compliance?framework=scubagear' },
    { name: 'settings-users', path: '/settings/users' },
    { name: 'settings-api-keys', path: '/settings/api-keys' },
    { name: 'settings-sinks', path: '/settings/sinks' },
    { name: 'not-found', path: '/no/such/page' },
  ];
}

/** The audit-cycle lines of the job handler (src/sync/worker.ts) about `integrationId` in the server's log, oldest first. */
function auditCycles(w: PortalWorld, integrationId: string): { msg: string; alertsRaised?: number }[] {
  let log: string;
  try {
    log = readFileSync(join(w.dataDir, 'logs', 'vigil.log'), 'utf8');
  } catch {
    return [];
  }
  return log
    .split('\n')
    .filter((l) => l.includes(integrationId) && l.includes('"audit cycle '))
    .map((l) => JSON.parse(l) as { msg: string; integrationId?: string; alertsRaised?: number })
    .filter((l) => l.integrationId === integrationId);
}

/** The body of POST /integrations for Contoso's customer-app integration (the emulated connector app's secret). */
function contosoIntegration(w: PortalWorld, name: string) {
  const app = w.contoso.apps.find((a) => a.appId === w.contoso.connectorAppId)!;
  return { mode: 'customer-app', name, tenantId: w.contoso.id, clientId: app.appId, clientSecret: app.secrets[0]!.value };
}

/**
 * A session signed in through POST /api/v1/auth/login, for `fetch` outside the browser: the browser itself stays
 * signed out (a test then signs in through the sign-in page).
 */
export interface ApiSession {
  /** The `Cookie` header: the cookies the sign-in set (`name=value; …`). */
  cookie: string;
  /** Headers of a change: the cookie, the CSRF token (`x-csrf-token`) and a JSON content type. */
  headers: Record<string, string>;
  /** GET `/api/v1<path>` with the session; the JSON body (the status is not checked). */
  get<T>(path: string): Promise<T>;
}

/** Signs the world's administrator in through the API (expects 200). */
export async function apiSession(w: PortalWorld): Promise<ApiSession> {
  const login = await fetch(`${w.baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: w.email, password: w.password }),
  });
  expect(login.status).toBe(200);
  const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return {
    cookie,
    headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    get: async <T>(path: string) => (await (await fetch(`${w.baseUrl}/api/v1${path}`, { headers: { cookie } })).json()) as T,
  };
}

/** Creates Contoso's customer-app integration through `api` (expects 201) without collecting it; returns its id. */
export async function createdIntegration(w: PortalWorld, api: ApiSession, name = 'Contoso'): Promise<string> {
  const created = await fetch(`${w.baseUrl}/api/v1/integrations`, { method: 'POST', headers: api.headers, body: JSON.stringify(contosoIntegration(w, name)) });
  expect(created.status, await created.clone().text()).toBe(201);
  return ((await created.json()) as { integration: { id: string } }).integration.id;
}

/** A run of the list GET /integrations/{id}/runs, as far as the tests read it. */
export interface RunStatus {
  status: string;
}

/** Whether one of the runs has ended (neither queued nor running): the default of {@link runCollection}. */
const oneRunEnded = (runs: RunStatus[]) => runs.some((r) => r.status !== 'running' && r.status !== 'queued');

/**
 * Starts a collection of the integration through `api` (expects 202) and waits up to 90 s until `finished` holds of
 * its runs (by default: one has ended). No grant of System Administrator first (unlike {@link collectedIntegration}).
 */
export async function runCollection(
  w: PortalWorld,
  api: ApiSession,
  integrationId: string,
  opts: { finished?: (runs: RunStatus[]) => boolean; waitingFor?: string } = {},
): Promise<void> {
  expect((await fetch(`${w.baseUrl}/api/v1/integrations/${integrationId}/runs`, { method: 'POST', headers: api.headers, body: '{}' })).status).toBe(202);
  const finished = opts.finished ?? oneRunEnded;
  await until(
    opts.waitingFor ?? 'the collection to finish',
    async () => finished((await api.get<{ items: RunStatus[] }>(`/integrations/${integrationId}/runs`)).items),
    90_000,
  );
}

/**
 * Records into `problems` what `page` must not report: each console error (`console: <text> (<url>)`) while
 * `counting()` holds (by default always) and `expected` does not claim it, each uncaught error (`page error: …`), and
 * with `csp`, each Content-Security-Policy violation (`CSP: <directive> <blocked URI>`, from the page's
 * `securitypolicyviolation` events, whether or not Chromium also logs them).
 */
export async function recordProblems(
  page: Page,
  problems: string[],
  opts: { counting?: () => boolean; expected?: (m: ConsoleMessage) => boolean; csp?: boolean } = {},
): Promise<void> {
  const counting = opts.counting ?? (() => true);
  page.on('console', (m) => {
    if (!counting() || m.type() !== 'error' || opts.expected?.(m)) return;
    problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  if (!opts.csp) return;
  await page.exposeFunction('reportCspViolation', (v: string) => problems.push(`CSP: ${v}`));
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => window.reportCspViolation(e.violatedDirective + ' ' + e.blockedURI));",
  });
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
