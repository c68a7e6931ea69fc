import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { ingestAudit } from '../../src/sync/audit.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { vigil } from '../support/process.ts';
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
  }, 60_000);
});
