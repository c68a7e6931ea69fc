import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { insertContainmentAction } from '../../src/store/repositories/containment.ts';
import { ingestAudit } from '../../src/sync/audit.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { vigil } from '../support/process.ts';
import { seedConversation, type SeededConversation } from '../support/protection-steps.ts';
import { apiWorld, connector, type ApiWorld } from './harness.ts';

/**
 * One use case per operation (src/reporting): the CLI and the API call the same function with their caller (the
 * operator; the signed-in user or API key) and print the same view, so `vigil … --json` equals the API's JSON for the
 * same object. Each case reads the same objects through the API in-process and through the real CLI (a child process
 * on the same data directory), and compares them whole.
 */
describe('CLI --json equals the API for the same objects', () => {
  let w: ApiWorld;
  let env: Record<string, string>;
  let integrationId: string;
  let seeded: SeededConversation;
  const headers = () => ({ authorization: `Bearer ${w.keys.contosoAdmin}` });
  const api = async (method: 'GET' | 'PUT', url: string, payload?: unknown) => {
    const res = await w.app.inject({ method, url, headers: headers(), ...(payload === undefined ? {} : { payload: payload as object }) });
    return { status: res.statusCode, json: res.json() as Record<string, unknown> & { items: unknown[] } };
  };
  const cli = async (args: string[]) => {
    const r = await vigil([...args, '--json'], env);
    expect(r.code, `vigil ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout) as unknown;
  };

  beforeAll(async () => {
    w = await apiWorld();
    const res = await w.app.inject({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: headers(),
      payload: { mode: 'customer-app', name: 'contoso', ...connector(w.tenants.contoso) },
    });
    expect(res.statusCode, res.body).toBe(201);
    integrationId = res.json().integration.id as string;
    await collectAndEvaluate(w.rt, integrationId);
    await ingestAudit(w.rt, integrationId, { initialLookbackHours: 2, contentTypes: ['Audit.General'], powerBi: false });
    const eventIds = (await w.rt.db.selectFrom('audit_events').select('id').where('integration_id', '=', integrationId).limit(3).execute()).map((e) => e.id);
    for (const n of [1, 2])
      await raiseAlert(
        w.rt.db,
        { integrationId, ruleId: 'parity', severity: 'high', title: `alert ${n}`, dedupeKey: String(n), detail: { n }, eventIds },
        new Date(Date.UTC(2026, 10, 20, n)).toISOString(),
      );
    seeded = await seedConversation(w.rt.db, integrationId, { appId: '11111111-2222-4333-8444-555555555555', apiUrl: null });
    env = { VIGIL_DATA_DIR: w.rt.config.dataDir, VIGIL_ENDPOINTS_FILE: w.emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-'))) };
  }, 120_000);
  afterAll(async () => w?.close());

  it('findings: the list, one finding, and one suppressed by the operator', async () => {
    const listed = (await api('GET', '/api/v1/findings?status=all&limit=500')).json.items as { id: string }[];
    expect(listed.length).toBeGreaterThan(0);
    expect(await cli(['findings', '--status', 'all', '--organization', 'Contoso'])).toEqual(listed);
    // The operator narrowed to another organization sees none of Contoso's, as Fabrikam's key does through the API.
    const fabrikam = await w.app.inject({ url: '/api/v1/findings?status=all', headers: { authorization: `Bearer ${w.keys.fabrikamAdmin}` } });
    expect(await cli(['findings', '--status', 'all', '--organization', 'Fabrikam'])).toEqual(fabrikam.json().items);
    expect(fabrikam.json().items).toEqual([]);
    const foreign = await vigil(['findings', '--integration', 'contoso', '--organization', 'Fabrikam'], env);
    expect([foreign.code, foreign.stderr]).toEqual([4, expect.stringMatching(/not an integration of organization "Fabrikam"/)]);
    expect(await cli(['findings', '--severity', 'high'])).toEqual((await api('GET', '/api/v1/findings?severity=high&limit=500')).json.items);
    // The API's search, order and time filters, by the same names (q is --search).
    const firstSeen = [...new Set((listed as unknown as { firstSeenAt: string }[]).map((f) => f.firstSeenAt))].sort()[0]!;
    const query = `status=all&sort=check&order=asc&q=agent&since=${encodeURIComponent(firstSeen)}&until=2100-01-01T00:00:00Z`;
    const narrowed = (await api('GET', `/api/v1/findings?${query}&limit=500`)).json.items;
    expect(narrowed.length).toBeGreaterThan(0);
    const flags = ['--status', 'all', '--sort', 'check', '--order', 'asc', '--search', 'agent', '--since', firstSeen, '--until', '2100-01-01T00:00:00Z'];
    expect(await cli(['findings', ...flags])).toEqual(narrowed);
    const exported = await w.app.inject({ url: `/api/v1/exports/findings?format=json&${query}`, headers: headers() });
    const written = await vigil(['findings', 'export', '--format', 'json', ...flags], env);
    expect(written.code, written.stderr).toBe(0);
    expect(JSON.parse(written.stdout)).toEqual(JSON.parse(exported.body));
    expect(await cli(['findings', '--status', 'all', '--until', firstSeen])).toEqual([]);
    const reversed = await vigil(['findings', '--since', '2026-11-20T02:00:00Z', '--until', '2026-11-20T01:00:00Z', '--json'], env);
    expect([reversed.code, (JSON.parse(reversed.stdout) as { error: { field: string } }).error.field]).toEqual([2, '--since']);
    const id = listed[0]!.id;
    expect(await cli(['findings', 'show', id])).toEqual((await api('GET', `/api/v1/findings/${id}`)).json);
    expect((await vigil(['findings', 'suppress', id, '--reason', 'pilot, no data', '--by', 'ann'], env)).code).toBe(0);
    const suppressed = (await api('GET', `/api/v1/findings/${id}`)).json;
    expect(suppressed).toMatchObject({ suppression: { author: 'ann', reason: 'pilot, no data' } });
    expect(await cli(['findings', 'show', id])).toEqual(suppressed);
  });

  it('alerts: the list, and `alerts ack` through the same checks as PUT /alerts/{id}/status', async () => {
    const alerts = (await api('GET', '/api/v1/alerts?limit=500')).json.items as { id: string; eventIds: string[] }[];
    expect(alerts).toHaveLength(2);
    expect(alerts[0]!.eventIds.length).toBeGreaterThan(0);
    expect(await cli(['alerts'])).toEqual(alerts);
    // The API's search, order and time filters, by the same names (q is --search).
    for (const [query, flags] of [
      ['since=2026-11-20T02:00:00Z', ['--since', '2026-11-20T02:00:00Z']],
      ['until=2026-11-20T02:00:00Z&severity=high&ruleId=parity', ['--until', '2026-11-20T02:00:00Z', '--severity', 'high', '--rule', 'parity']],
      ['q=ALERT%201', ['--search', 'ALERT 1']],
      ['sort=title&order=asc', ['--sort', 'title', '--order', 'asc']],
    ] as const) {
      const viaApi = (await api('GET', `/api/v1/alerts?${query}&limit=500`)).json.items;
      expect(viaApi.length, query).toBe(query.startsWith('sort') ? 2 : 1);
      expect(await cli(['alerts', ...flags]), query).toEqual(viaApi);
    }
    const acked = (await cli(['alerts', 'ack', alerts[1]!.id])) as { status: string };
    expect(acked.status).toBe('acknowledged');
    expect((await api('GET', '/api/v1/alerts?status=acknowledged')).json.items).toEqual([acked]);
    const missing = await vigil(['alerts', 'ack', 'alr_0000000000', '--json'], env);
    const viaApi = await api('PUT', '/api/v1/alerts/alr_0000000000/status', { status: 'acknowledged' });
    expect([missing.code, (JSON.parse(missing.stdout) as { error: { code: string } }).error.code]).toEqual([4, (viaApi.json.error as { code: string }).code]);
    expect(viaApi.status).toBe(404);
  });

  it('events, runs, the run a collection printed, and the riskiest agents', async () => {
    const events = (await api('GET', '/api/v1/events?limit=20')).json.items;
    expect(events.length).toBeGreaterThan(0);
    expect(await cli(['events', '--limit', '20'])).toEqual(events);
    const collected = (await cli(['collect', 'contoso'])) as { run: { id: string } };
    expect(collected.run).toEqual((await api('GET', `/api/v1/runs/${collected.run.id}`)).json);
    expect(await cli(['runs', 'contoso'])).toEqual((await api('GET', `/api/v1/integrations/${integrationId}/runs`)).json.items);
    const dashboard = (await api('GET', '/api/v1/dashboard')).json as unknown as { riskiestAgents: unknown[] };
    expect(dashboard.riskiestAgents.length).toBeGreaterThan(0);
    expect(await cli(['agents', '--limit', '10'])).toEqual(dashboard.riskiestAgents);
    // The ranking has its own route, the same use case as `vigil agents`.
    const ranked = (await api('GET', '/api/v1/agents?limit=10')).json.items;
    expect(ranked).toEqual(dashboard.riskiestAgents);
    expect(await cli(['agents', '--integration', 'contoso', '--limit', '3'])).toEqual(
      (await api('GET', `/api/v1/agents?integrationId=${integrationId}&limit=3`)).json.items,
    );
  }, 60_000);

  it('integrations, their environment access and the inventory: the same views as the API', async () => {
    const integrations = (await api('GET', '/api/v1/integrations')).json.items as { id: string; lastRun: unknown; secretWarning: unknown }[];
    expect(integrations.map((i) => i.id)).toEqual([integrationId]);
    expect(integrations[0]).toHaveProperty('lastRun');
    expect(await cli(['integrations', 'list'])).toEqual(integrations);
    expect(await cli(['integrations', 'list', '--organization', 'Contoso'])).toEqual(integrations);
    expect(await cli(['integrations', 'list', '--organization', 'Fabrikam'])).toEqual([]);
    const detail = (await api('GET', `/api/v1/integrations/${integrationId}`)).json as unknown as { steps: unknown[] };
    expect(detail.steps.length).toBeGreaterThan(0);
    expect(await cli(['integrations', 'show', 'contoso'])).toEqual(detail);
    const environments = (await api('GET', `/api/v1/integrations/${integrationId}/environments`)).json.items;
    expect(environments.length).toBeGreaterThan(0);
    expect(await cli(['environments', 'list', '--integration', 'contoso'])).toEqual(environments);
    for (const kind of ['agents', 'environments', 'users']) {
      const items = (await api('GET', `/api/v1/inventory/${kind}?limit=500`)).json;
      expect(items.items.length, kind).toBeGreaterThan(0);
      expect(items.nextCursor, kind).toBeNull();
      expect(await cli(['inventory', kind, '--organization', 'Contoso']), kind).toEqual(items.items);
    }
    const agents = (await api('GET', `/api/v1/inventory/agents?integrationId=${integrationId}&limit=2`)).json.items as { name: string }[];
    expect(await cli(['inventory', 'agents', '--integration', 'contoso', '--limit', '2'])).toEqual(agents);
    const named = (await api('GET', `/api/v1/inventory/agents?q=${encodeURIComponent(agents[0]!.name.slice(1, 5))}`)).json.items;
    expect(await cli(['inventory', 'agents', '--name', agents[0]!.name.slice(1, 5)])).toEqual(named);
    expect(await cli(['inventory', 'agents', '--organization', 'Fabrikam'])).toEqual([]);
  }, 60_000);

  it("an operator narrowed to another organization is refused Contoso's objects with the code the API gives", async () => {
    const fabrikam = async (method: 'POST' | 'DELETE' | 'PUT', url: string, payload?: object) => {
      const res = await w.app.inject({ method, url, headers: { authorization: `Bearer ${w.keys.fabrikamAdmin}` }, ...(payload ? { payload } : {}) });
      return [res.statusCode, (res.json() as { error: { code: string } }).error.code];
    };
    const refused = async (args: string[]) => {
      const r = await vigil([...args, '--organization', 'Fabrikam', '--json'], env);
      return [r.code, (JSON.parse(r.stdout) as { error: { code: string } }).error.code];
    };
    const fabrikamGet = await w.app.inject({ url: `/api/v1/integrations/${integrationId}`, headers: { authorization: `Bearer ${w.keys.fabrikamAdmin}` } });
    expect([fabrikamGet.statusCode, fabrikamGet.json().error.code]).toEqual([404, 'INTEGRATION_NOT_FOUND']);
    expect(await refused(['integrations', 'show', 'contoso'])).toEqual([4, 'INTEGRATION_NOT_FOUND']);
    expect(await refused(['environments', 'list', '--integration', 'contoso'])).toEqual([4, 'INTEGRATION_NOT_FOUND']);
    // Commands that act on an integration refuse it the same way, before they touch anything.
    for (const args of [
      ['runs', 'contoso'],
      ['collect', 'contoso'],
      ['integrations', 'verify', 'contoso'],
      ['integrations', 'remove', 'contoso'],
    ])
      expect(await refused(args), args.join(' ')).toEqual([4, 'INTEGRATION_NOT_FOUND']);
    expect(await cli(['runs', 'contoso', '--organization', 'Contoso'])).toEqual(await cli(['runs', 'contoso']));
    expect(await fabrikam('POST', `/api/v1/integrations/${integrationId}/environments/grant`)).toEqual([404, 'INTEGRATION_NOT_FOUND']);
    expect(await refused(['environments', 'grant-access', '--integration', 'contoso'])).toEqual([4, 'INTEGRATION_NOT_FOUND']);
    const finding = ((await api('GET', '/api/v1/findings?status=open&limit=1')).json.items[0] as { id: string }).id;
    expect(await fabrikam('POST', `/api/v1/findings/${finding}/suppression`, { reason: 'x' })).toEqual([404, 'FINDING_NOT_FOUND']);
    expect(await refused(['findings', 'suppress', finding, '--reason', 'x'])).toEqual([4, 'FINDING_NOT_FOUND']);
    expect(await fabrikam('DELETE', `/api/v1/findings/${finding}/suppression`)).toEqual([404, 'FINDING_NOT_FOUND']);
    expect(await refused(['findings', 'unsuppress', finding])).toEqual([4, 'FINDING_NOT_FOUND']);
    expect(await refused(['findings', 'show', finding])).toEqual([4, 'FINDING_NOT_FOUND']);
    expect((await api('GET', `/api/v1/findings/${finding}`)).json.suppression).toBeNull();
    // Narrowed to its own organization, the operator acts, and prints what the API answers.
    const suppressed = await cli(['findings', 'suppress', finding, '--reason', 'lab tenant', '--by', 'ann', '--organization', 'Contoso']);
    expect(suppressed).toEqual((await api('GET', `/api/v1/findings/${finding}`)).json);
    const lifted = await cli(['findings', 'unsuppress', finding, '--organization', 'Contoso']);
    expect(lifted).toEqual((await api('GET', `/api/v1/findings/${finding}`)).json);

    const alert = ((await api('GET', '/api/v1/alerts?limit=500')).json.items as { id: string; status: string }[]).find((a) => a.status === 'new')!;
    expect(await fabrikam('PUT', `/api/v1/alerts/${alert.id}/status`, { status: 'closed' })).toEqual([404, 'ALERT_NOT_FOUND']);
    for (const verb of ['ack', 'close', 'reopen']) expect(await refused(['alerts', verb, alert.id]), verb).toEqual([4, 'ALERT_NOT_FOUND']);
    expect(((await api('GET', '/api/v1/alerts?limit=500')).json.items as { id: string; status: string }[]).find((a) => a.id === alert.id)!.status).toBe('new');
    expect(await cli(['alerts', 'close', alert.id, '--organization', 'Contoso'])).toMatchObject({ id: alert.id, status: 'closed' });
    expect(await cli(['alerts', 'reopen', alert.id, '--organization', 'Contoso'])).toMatchObject({ id: alert.id, status: 'new' });
  }, 60_000);

  it('protection: set-up, decisions, steps, a conversation, policies and enable print what /api/v1/protection answers; another organization is refused alike', async () => {
    const base = `/api/v1/protection/${integrationId}`;
    expect(await cli(['protection', 'setup', 'contoso'])).toEqual((await api('GET', base)).json);
    const decisions = (await api('GET', `${base}/steps?outcome=decision`)).json.items as { id: string }[];
    expect(decisions.map((d) => d.id)).toEqual([seeded.stepIds[2], seeded.stepIds[1]]);
    expect(await cli(['protection', 'decisions', 'contoso'])).toEqual(decisions);
    expect(await cli(['protection', 'decisions', 'contoso', '--outcome', 'wouldBlock'])).toEqual(
      (await api('GET', `${base}/steps?outcome=wouldBlock`)).json.items,
    );
    // The list's filters by detector, time and text, as the portal's decisions table uses them.
    const filtered = (await api('GET', `${base}/steps?outcome=decision&detector=prompt_injection&since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z&q=e`))
      .json.items as { id: string }[];
    expect(filtered.length).toBeGreaterThan(0);
    expect(
      await cli([
        'protection',
        'decisions',
        'contoso',
        '--detector',
        'prompt_injection',
        '--since',
        '2000-01-01T00:00:00Z',
        '--until',
        '2999-01-01T00:00:00Z',
        '--search',
        'e',
      ]),
    ).toEqual(filtered);
    expect(await cli(['protection', 'events', 'contoso', '--limit', '2'])).toEqual((await api('GET', `${base}/steps?limit=2`)).json.items);
    const timeline = (await api('GET', `${base}/conversations/${seeded.conversationId}`)).json;
    expect(timeline).toMatchObject({ agentName: seeded.agentName, environmentId: seeded.environmentId });
    expect(await cli(['protection', 'conversation', 'contoso', seeded.conversationId])).toEqual(timeline);
    const transcripts = (await api('GET', `${base}/transcripts?limit=20`)).json.items;
    expect(await cli(['protection', 'transcripts', 'contoso', '--limit', '20'])).toEqual(transcripts);
    expect(await cli(['protection', 'policy', 'set', 'contoso', '--mode', 'block', '--by', 'ann'])).toMatchObject({
      updatedBy: 'ann',
      fields: { mode: 'block' },
    });
    expect(await cli(['protection', 'policy', 'show', 'contoso'])).toEqual((await api('GET', `${base}/policies`)).json);
    expect(await cli(['protection', 'enable', 'contoso'])).toEqual((await api('PUT', base, {})).json);
    const integration = await w.rt.db.selectFrom('integrations').select('organization_id').where('id', '=', integrationId).executeTakeFirstOrThrow();
    for (const [n, outcome] of [
      [1, 'succeeded'],
      [2, 'refused'],
    ] as const)
      await insertContainmentAction(w.rt.db, {
        id: `ca_parity${n}`,
        organization_id: integration.organization_id,
        integration_id: integrationId,
        action: n === 1 ? 'contain' : 'release',
        environment_id: seeded.environmentId,
        agent_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        alert_id: null,
        step_id: seeded.stepIds[0]!,
        requested_by: 'ann',
        signed_in_as: 'pp-admin@contoso.test',
        requested_at: new Date(Date.UTC(2026, 10, 21, n)).toISOString(),
        outcome,
        quarantined: outcome === 'succeeded' ? 1 : null,
        error_code: outcome === 'refused' ? 'CONTAINMENT_NOT_AVAILABLE' : null,
        error_message: outcome === 'refused' ? 'Not available: pp-admin@contoso.test holds none of the roles' : null,
      });
    const containment = (await api('GET', `${base}/containment`)).json.items as { id: string }[];
    expect(containment.map((a) => a.id)).toEqual(['ca_parity2', 'ca_parity1']);
    expect(await cli(['protection', 'actions', 'contoso'])).toEqual(containment);
    const fabrikam = await w.app.inject({ url: `${base}/steps?outcome=decision`, headers: { authorization: `Bearer ${w.keys.fabrikamAdmin}` } });
    expect([fabrikam.statusCode, fabrikam.json().error.code]).toEqual([404, 'INTEGRATION_NOT_FOUND']);
    for (const args of [
      ['protection', 'decisions', 'contoso'],
      ['protection', 'setup', 'contoso'],
      ['protection', 'conversation', 'contoso', seeded.conversationId],
      ['protection', 'actions', 'contoso'],
    ]) {
      const r = await vigil([...args, '--organization', 'Fabrikam', '--json'], env);
      expect([r.code, (JSON.parse(r.stdout) as { error: { code: string } }).error.code], args.join(' ')).toEqual([4, 'INTEGRATION_NOT_FOUND']);
    }
  }, 60_000);

  it('compliance: the same view as GET /api/v1/compliance, with the latest results and the open alerts per item', async () => {
    type View = {
      integrationIds: string[];
      frameworks: { id: string; items: { id: string; covers: { kind: string; id: string }[]; fail: number; openAlerts: number; state: string }[] }[];
    };
    const all = (await api('GET', '/api/v1/compliance')).json as unknown as View;
    expect(all.integrationIds).toEqual([integrationId]);
    expect(await cli(['compliance', '--organization', 'Contoso'])).toEqual(all);
    // A failing check's result counts in its items: the fail counts equal the failing results of the checks mapped.
    const failing = await w.rt.db
      .selectFrom('check_results')
      .select(['check_id'])
      .where('status', '=', 'fail')
      .where('integration_id', '=', integrationId)
      .execute();
    const item = all.frameworks.flatMap((f) => f.items).find((i) => i.covers.some((c) => failing.some((r) => r.check_id === c.id)))!;
    expect(item.state).toBe('fail');
    expect(item.fail).toBeGreaterThan(0);
    // An alert of a detection counts while it is not closed.
    const sentinel = () => all.frameworks.find((f) => f.id === 'sentinel')!.items.find((i) => i.covers.some((c) => c.id === 'dlp_policy_weakened'))!;
    expect(sentinel().openAlerts).toBe(0);
    await raiseAlert(
      w.rt.db,
      { integrationId, ruleId: 'dlp_policy_weakened', severity: 'high', title: 'weakened', dedupeKey: 'compliance', detail: {} },
      new Date().toISOString(),
    );
    const one = (await api('GET', `/api/v1/compliance?integrationId=${integrationId}&framework=sentinel`)).json as unknown as View;
    expect(one.frameworks.map((f) => f.id)).toEqual(['sentinel']);
    expect(one.frameworks[0]!.items.find((i) => i.covers.some((c) => c.id === 'dlp_policy_weakened'))).toMatchObject({ openAlerts: 1, state: 'fail' });
    expect(await cli(['compliance', 'contoso', '--framework', 'sentinel'])).toEqual(one);
    // Another organization sees none of Contoso's results; an unknown framework is refused by both.
    const fabrikam = await w.app.inject({ url: '/api/v1/compliance', headers: { authorization: `Bearer ${w.keys.fabrikamAdmin}` } });
    expect(fabrikam.json().integrationIds).toEqual([]);
    expect(await cli(['compliance', '--organization', 'Fabrikam'])).toEqual(fabrikam.json());
    expect((await api('GET', '/api/v1/compliance?framework=nist')).status).toBe(400);
    const refused = await vigil(['compliance', '--framework', 'nist', '--json'], env);
    expect([refused.code, (JSON.parse(refused.stdout) as { error: { code: string; field: string } }).error]).toEqual([
      2,
      expect.objectContaining({ code: 'UNKNOWN_FRAMEWORK', field: '--framework' }),
    ]);
  }, 60_000);
});
