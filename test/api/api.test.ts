import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groundTruth } from '../../emulator/index.ts';
import { Agent } from 'undici';
import { apiWorld, connector, signInAs, type ApiWorld, type Session } from './harness.ts';
import { browse, consentCallbackIntercept } from '../support/browser.ts';

describe('REST API: onboarding, collection and reading through /api/v1', () => {
  let w: ApiWorld;
  let admin: Session;
  let viewer: Session;
  let integrationId: string;
  beforeAll(async () => {
    w = await apiWorld();
    admin = await signInAs(w.app, 'admin@contoso.test', w.password);
    viewer = await signInAs(w.app, 'viewer@contoso.test', w.password);
  });
  afterAll(async () => w?.close());

  const call = (s: Session, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, csrf = true) =>
    w.app.inject({
      method,
      url,
      headers: { cookie: s.cookie, ...(csrf ? { 'x-csrf-token': s.csrf } : {}) },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  it('creates a customer-app integration, verified before it is stored, and never returns the secret', async () => {
    const c = connector(w.tenants.contoso);
    const bad = await call(admin, 'POST', '/api/v1/integrations', {
      mode: 'customer-app',
      name: 'contoso',
      tenantId: 'not-a-guid',
      clientId: c.clientId,
      clientSecret: c.clientSecret,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ field: 'tenantId', remediation: expect.stringMatching(/Tenant ID/) });
    expect(bad.body).not.toContain('--tenant-id');
    const wrong = await call(admin, 'POST', '/api/v1/integrations', {
      mode: 'customer-app',
      name: 'contoso',
      ...c,
      clientSecret: 'Wrong~secret~value~0123456789abcdefghij',
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().error).toMatchObject({ code: 'AADSTS7000215', field: 'clientSecret' }); // the form's field, not a CLI flag
    const guid = await call(admin, 'POST', '/api/v1/integrations', {
      mode: 'customer-app',
      name: 'contoso',
      ...c,
      clientSecret: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
    });
    expect([guid.statusCode, guid.json().error.field, guid.json().error.message]).toEqual([400, 'clientSecret', expect.stringMatching(/Secret ID/)]);
    const res = await call(admin, 'POST', '/api/v1/integrations', { mode: 'customer-app', name: 'contoso', ...c });
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain(c.clientSecret);
    const body = res.json();
    integrationId = body.integration.id;
    expect(body.integration).toMatchObject({ mode: 'customer-app', tenantId: c.tenantId, credentialState: 'ok' });
    expect(body.steps.length).toBeGreaterThan(3);
    expect(body.steps.map((s: { state: string }) => s.state)).toContain('done');
    expect(body.safelist.egressIps).toContain('18.200.62.37');
    const list = await call(viewer, 'GET', '/api/v1/integrations');
    expect(list.json().items.map((i: { id: string }) => i.id)).toEqual([integrationId]);
    expect(list.body).not.toContain(c.clientSecret);
  });

  it('another organization cannot take a tenant through POST /integrations (managed-app): one 422 TENANT_NOT_PROVEN for a bound tenant and an unproven one; the consent link of its own binds for it', async () => {
    const fabrikamAdmin = await signInAs(w.app, 'admin@fabrikam.test', w.password);
    const bound = w.tenants.contoso; // bound to Contoso by its Mode A integration above
    const unproven = w.tenants.fabrikam; // nobody proved it yet
    const spOf = (t: typeof bound) => t.apps.find((a) => a.appId === w.managed.appId)?.servicePrincipalObjectId ?? '00000000-0000-4000-8000-00000000000a';
    const errors = [];
    for (const t of [bound, unproven]) {
      const res = await call(fabrikamAdmin, 'POST', '/api/v1/integrations', {
        mode: 'managed-app',
        name: 'take',
        tenant: t.id,
        servicePrincipalObjectId: spOf(t),
      });
      expect(res.statusCode, res.body).toBe(422);
      errors.push(JSON.stringify(res.json().error).replaceAll(t.id, '<tenant>'));
    }
    // The fix names the portal's button and the API route, never the operator's CLI command or one of its flags.
    expect(JSON.parse(errors[0]!)).toMatchObject({
      code: 'TENANT_NOT_PROVEN',
      remediation: expect.stringContaining(
        'get a consent link for the tenant <tenant> ("Get consent link" in the portal, or POST /api/v1/integrations/consent-link)',
      ),
    });
    expect(errors[0]).not.toMatch(/--[a-z]|`vigil /);
    expect(errors[1]).toBe(errors[0]);
    // Fabrikam's own consent link, followed by its tenant's administrator, binds the tenant to Fabrikam, not to Contoso.
    const link = await call(fabrikamAdmin, 'POST', '/api/v1/integrations/consent-link', { tenant: unproven.id });
    expect(link.statusCode).toBe(200);
    expect(link.json().instructions.join(' ')).toMatch(/organization "Fabrikam"/);
    const intercept = await consentCallbackIntercept(w.rt, 'http://127.0.0.1:8080/consent/callback');
    try {
      const { final } = await browse(link.json().url, { dispatcher: new Agent({ connect: { ca: w.emulator.caPem } }), intercept });
      expect(final.body).toMatch(/Consent granted/);
      // The next steps on the page are the customer administrator's: PowerShell and the portal, no vigil command line.
      expect(final.body).toMatch(/New-PowerAppManagementApp -ApplicationId/);
      expect(final.body).not.toMatch(/vigil (register-management-app|integrations add)/);
    } finally {
      await intercept.close();
    }
    const created = await call(fabrikamAdmin, 'POST', '/api/v1/integrations', {
      mode: 'managed-app',
      name: 'fabrikam-b',
      tenant: unproven.id,
      servicePrincipalObjectId: spOf(unproven),
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(
      (
        await call(admin, 'POST', '/api/v1/integrations', {
          mode: 'managed-app',
          name: 'take-back',
          tenant: unproven.id,
          servicePrincipalObjectId: spOf(unproven),
        })
      ).statusCode,
    ).toBe(422);
    expect((await call(admin, 'GET', '/api/v1/integrations')).body).not.toContain('fabrikam-b');
  });

  it('refuses a change without the CSRF header, and a viewer changing anything', async () => {
    const noCsrf = await call(admin, 'POST', `/api/v1/integrations/${integrationId}/verify`, undefined, false);
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json().error.code).toBe('CSRF_FAILED');
    const asViewer = await call(viewer, 'POST', `/api/v1/integrations/${integrationId}/verify`);
    expect(asViewer.statusCode).toBe(403);
    expect(asViewer.json().error.code).toBe('FORBIDDEN_ROLE');
  });

  it('starts a collection, streams its progress, and serves inventory, agent page, findings and dashboard', async () => {
    const start = await call(admin, 'POST', `/api/v1/integrations/${integrationId}/runs`);
    expect(start.statusCode).toBe(202);
    expect(start.json().queued).toBe(true);
    const live = await w.app.inject({ method: 'GET', url: `/api/v1/integrations/${integrationId}/runs/live`, headers: { cookie: viewer.cookie } });
    expect(live.headers['content-type']).toMatch(/text\/event-stream/);
    expect(live.body).toMatch(/event: finished\ndata: \{"id":"run_/);
    const runs = (await call(viewer, 'GET', `/api/v1/integrations/${integrationId}/runs`)).json().items;
    expect(runs[0]).toMatchObject({ integrationId, status: expect.stringMatching(/succeeded|partial/) });
    const run = (await call(viewer, 'GET', `/api/v1/runs/${runs[0].id}`)).json();
    expect(run.progress.done).toBeGreaterThan(0);
    // The live stream ended once the checks were evaluated; the run says so too (scripts poll it instead).
    expect(live.body).toMatch(/"evaluated":true/);
    expect(run.evaluated).toBe(true);

    const agents = (await call(viewer, 'GET', '/api/v1/inventory/agents?limit=1')).json();
    expect(agents.items).toHaveLength(1);
    expect(agents.nextCursor).toEqual(expect.any(String));
    const next = (await call(viewer, 'GET', `/api/v1/inventory/agents?limit=1&cursor=${agents.nextCursor}`)).json();
    expect(next.items.map((a: { id: string }) => a.id)).not.toContain(agents.items[0].id);
    const all = (await call(viewer, 'GET', '/api/v1/inventory/agents?limit=500')).json().items;
    expect(all).toHaveLength(groundTruth(w.tenants.contoso).agents);
    const named = all[0].name as string;
    const search = (await call(viewer, 'GET', `/api/v1/inventory/agents?q=${encodeURIComponent(named.slice(1, 5).toUpperCase())}`)).json().items;
    expect(search.map((a: { name: string }) => a.name)).toContain(named);
    for (const kind of ['apps', 'flows', 'connectors', 'connections', 'environments', 'users', 'groups', 'powerbi-workspaces', 'foundry-projects']) {
      const res = await call(viewer, 'GET', `/api/v1/inventory/${kind}`);
      expect(res.statusCode, kind).toBe(200);
      expect(res.json().items.length, kind).toBeGreaterThan(0);
      expect(res.json().total, kind).toBeGreaterThanOrEqual(res.json().items.length);
      // Every kind summarises some of its fields from what its source sent.
      expect(
        res.json().items.some((i: { summary: unknown[] }) => i.summary.length > 0),
        kind,
      ).toBe(true);
    }
    const unknownKind = await call(viewer, 'GET', '/api/v1/inventory/spaceships');
    expect(unknownKind.statusCode).toBe(400);
    expect(unknownKind.json().error.field).toBe('kind');

    const agent = (await call(viewer, 'GET', `/api/v1/integrations/${integrationId}/agents/${all[0].id}`)).json();
    expect(agent.agent).toMatchObject({ id: all[0].id, name: named });
    expect(agent.environment.id).toBe(all[0].environmentId);

    const findings = (await call(viewer, 'GET', '/api/v1/findings?status=all&limit=500')).json().items;
    expect(findings.length).toBeGreaterThan(0);
    const order = ['critical', 'high', 'medium', 'low', 'info'];
    const ranks = findings.map((f: { severity: string }) => order.indexOf(f.severity));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    const dash = (await call(viewer, 'GET', '/api/v1/dashboard')).json();
    expect(dash.severityOverTime).toHaveLength(30);
    const today = dash.severityOverTime.at(-1);
    const open = (await call(viewer, 'GET', '/api/v1/findings?status=open&limit=500')).json().items;
    expect(order.reduce((n, s) => n + today[s], 0)).toBe(open.length);
    expect(dash.lastCollections[0]).toMatchObject({ integrationId, run: { status: expect.any(String) } });
    expect(dash.riskiestAgents.length).toBeGreaterThan(0);
    // The posture: today's results as a score, the same on today's point of the trend; the areas add up to it.
    const p = dash.posture;
    expect(p.passed + p.failed).toBeGreaterThan(0);
    expect(p.score).toBe(Math.round((1000 * p.passed) / (p.passed + p.failed)) / 10);
    expect(dash.posture.trend).toHaveLength(30);
    expect(dash.posture.trend.at(-1)).toMatchObject({ score: p.score, counts: { passed: p.passed, failed: p.failed, notEvaluated: p.notEvaluated } });
    const sum = (k: 'passed' | 'failed' | 'notEvaluated') => dash.areas.reduce((n: number, a: Record<string, number>) => n + a[k]!, 0);
    expect([sum('passed'), sum('failed'), sum('notEvaluated')]).toEqual([p.passed, p.failed, p.notEvaluated]);
    expect(dash.frameworks.length).toBeGreaterThan(0);
  });

  it('suppresses a finding with the author recorded, and lifts it', async () => {
    const f = (await call(viewer, 'GET', '/api/v1/findings?status=open&limit=1')).json().items[0];
    const empty = await call(admin, 'POST', `/api/v1/findings/${f.id}/suppression`, { reason: '  ' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.field).toBe('reason');
    const res = await call(admin, 'POST', `/api/v1/findings/${f.id}/suppression`, { reason: 'test environment, no data', expiresAt: '2099-01-01' });
    expect(res.statusCode).toBe(200);
    expect(res.json().suppression).toMatchObject({ reason: 'test environment, no data', author: 'admin@contoso.test', expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(res.json().history.map((h: { event: string }) => h.event)).toEqual(['opened', 'suppressed']);
    const open = (await call(viewer, 'GET', '/api/v1/findings?status=open&limit=500')).json().items;
    expect(open.map((x: { id: string }) => x.id)).not.toContain(f.id);
    const suppressed = (await call(viewer, 'GET', '/api/v1/findings?status=suppressed')).json().items;
    expect(suppressed.map((x: { id: string }) => x.id)).toEqual([f.id]);
    const lifted = await call(admin, 'DELETE', `/api/v1/findings/${f.id}/suppression`);
    expect(lifted.json().suppression).toBeNull();
  });

  it('exports findings as SARIF and CSV attachments', async () => {
    const sarif = await call(viewer, 'GET', '/api/v1/exports/findings?format=sarif');
    expect(sarif.statusCode).toBe(200);
    expect(sarif.headers['content-disposition']).toMatch(/attachment; filename="vigil-findings-.*\.sarif"/);
    expect(sarif.json().version).toBe('2.1.0');
    const csv = await call(viewer, 'GET', '/api/v1/exports/findings?format=csv');
    expect(csv.body.split('\n')[0]).toMatch(/^id,integrationId,checkId,severity/);
  });

  it("exports only the findings list's current filter: severity, check and resource", async () => {
    const all = (await call(viewer, 'GET', '/api/v1/findings?status=all&limit=500')).json().items as {
      id: string;
      severity: string;
      checkId: string;
      resourceId: string;
    }[];
    const f = all[0]!;
    const ids = async (query: string) =>
      ((await call(viewer, 'GET', `/api/v1/exports/findings?format=json&status=all&${query}`)).json() as { id: string }[]).map((x) => x.id).sort();
    expect(await ids(`severity=${f.severity}`)).toEqual(
      all
        .filter((x) => x.severity === f.severity)
        .map((x) => x.id)
        .sort(),
    );
    expect(await ids(`checkId=${encodeURIComponent(f.checkId)}&resourceId=${encodeURIComponent(f.resourceId)}`)).toEqual(
      all
        .filter((x) => x.checkId === f.checkId && x.resourceId === f.resourceId)
        .map((x) => x.id)
        .sort(),
    );
    expect(await ids('checkId=no_such_check')).toEqual([]);
  });

  it('lists the check catalogue with areas, frameworks and peers', async () => {
    const checks = (await call(viewer, 'GET', '/api/v1/checks')).json().items as { id: string; area: string; frameworks: object; peers: string[] }[];
    expect(checks.length).toBeGreaterThan(10);
    expect(checks.map((c) => c.id)).toEqual([...checks.map((c) => c.id)].sort());
    expect(checks.find((c) => c.id === 'guest_owns_agent')).toMatchObject({
      area: expect.any(String),
      frameworks: expect.any(Object),
      peers: expect.any(Array),
    });
  });

  it('publishes an OpenAPI 3.1 document built from the route schemas', async () => {
    const doc = (await w.app.inject({ url: '/api/docs/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/integrations', '/api/v1/findings/{id}/suppression', '/api/v1/inventory/{kind}']));
    expect(
      doc.paths['/api/v1/integrations'].post.requestBody.content['application/json'].schema.oneOf ??
        doc.paths['/api/v1/integrations'].post.requestBody.content['application/json'].schema.anyOf,
    ).toHaveLength(2);
    const ui = await w.app.inject({ url: '/api/docs' });
    expect([200, 302]).toContain(ui.statusCode);
  });

  it('counts its own requests and upstream calls in /metrics', async () => {
    const text = (await w.app.inject({ url: '/metrics' })).body;
    expect(text).toMatch(/vigil_http_requests_total\{method="GET",route="\/api\/v1\/findings",status="200"\} [1-9]/);
    expect(text).toMatch(/vigil_upstream_requests_total\{api="graph",status="200"\} [1-9]/);
    expect(text).toMatch(/vigil_collection_runs_total\{status="(succeeded|partial)"\} 1/);
  });

  it('signs out: the session stops working', async () => {
    const s = await signInAs(w.app, 'viewer@contoso.test', w.password);
    expect((await call(s, 'GET', '/api/v1/auth/session')).statusCode).toBe(200);
    expect((await call(s, 'POST', '/api/v1/auth/logout')).statusCode).toBe(204);
    expect((await call(s, 'GET', '/api/v1/auth/session')).statusCode).toBe(401);
  });
});
