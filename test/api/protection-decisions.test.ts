import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgentSteps } from '../../src/store/repositories/protection.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { dropSchema, TEST_DATABASE_URL } from '../store/dialects.ts';
import { seedConversation, type SeededConversation } from '../support/protection-steps.ts';
import { apiWorld, connector, keyRequests, type ApiWorld } from './harness.ts';

/**
 * Runtime protection's decisions through the API (issues 19 and 21), on SQLite and PostgreSQL: the step list's
 * filters (detector, time range, text search over tool name and reason, order) with the total; the filter values with
 * names (facets); and the organization's summary (per integration the last 24 hours and 7 days by outcome, the top
 * detectors, the steps per hour or day), each organization seeing only its own integrations' steps.
 */
describe.each(['sqlite', 'postgres'] as const)('API: protection decisions on %s', (dialect) => {
  let w: ApiWorld;
  const schema = `vigil_test_${randomBytes(6).toString('hex')}`;
  const ids: Record<'contoso' | 'fabrikam', string> = { contoso: '', fabrikam: '' };
  const seeded: Partial<Record<'contoso' | 'fabrikam', SeededConversation>> = {};
  /** Contoso's step of three days ago that timed out (besides the seeded conversation of ten minutes ago). */
  const oldStep = 'stp_old_timeout';
  const { get } = keyRequests(() => w);
  const ok = async (url: string, key?: string) => {
    const res = await get(url, key);
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    return res.json();
  };
  const stepIds = async (query: string) => ((await ok(`/api/v1/protection/${ids.contoso}/steps?${query}`)).items as { id: string }[]).map((s) => s.id);

  beforeAll(async () => {
    w = await apiWorld(dialect === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL, VIGIL_DATABASE_SCHEMA: schema } : {});
    for (const org of ['contoso', 'fabrikam'] as const) {
      const res = await w.app.inject({
        method: 'POST',
        url: '/api/v1/integrations',
        headers: { authorization: `Bearer ${org === 'contoso' ? w.keys.contosoAdmin : w.keys.fabrikamAdmin}` },
        payload: { mode: 'customer-app', name: org, ...connector(w.tenants[org]) },
      });
      expect(res.statusCode, res.body).toBe(201);
      ids[org] = res.json().integration.id as string;
      await collectAndEvaluate(w.rt, ids[org]);
      seeded[org] = await seedConversation(w.rt.db, ids[org], { appId: '11111111-2222-4333-8444-555555555555', apiUrl: null });
    }
    const first = await w.rt.db.selectFrom('agent_steps').selectAll().where('id', '=', seeded.contoso!.stepIds[0]!).executeTakeFirstOrThrow();
    await insertAgentSteps(w.rt.db, w.rt.db, [
      {
        ...first,
        id: oldStep,
        received_at: new Date(Date.now() - 3 * 86_400_000).toISOString(),
        conversation_id: 'conv-old',
        tool_name: 'Create a 100%_ticket',
        reason: 'The detectors ran out of time; the policy allows on timeout.',
        timed_out: 1,
      },
    ]);
  }, 240_000);
  afterAll(async () => {
    await w?.close();
    if (dialect === 'postgres') await dropSchema(schema);
  });

  it('filters steps by detector, time range and text in the tool name or reason, with the total over every page', async () => {
    const [allowed, wouldBlock, blocked] = seeded.contoso!.stepIds as [string, string, string];
    const all = await ok(`/api/v1/protection/${ids.contoso}/steps?limit=2`);
    expect(all.total).toBe(4);
    expect(all.items).toHaveLength(2);
    expect(await stepIds('detector=prompt_injection')).toEqual([wouldBlock]);
    expect(await stepIds('detector=sensitive_data_egress&outcome=blocked')).toEqual([blocked]);
    expect(await stepIds('detector=nothing_such')).toEqual([]);
    // Text: case-insensitive, in the tool's name or the reason; LIKE's wildcards are literal.
    expect(await stepIds('q=EMAIL')).toEqual([blocked, wouldBlock]);
    expect(await stepIds('q=secret')).toEqual([blocked]);
    expect(await stepIds(`q=${encodeURIComponent('100%_')}`)).toEqual([oldStep]);
    expect(await stepIds(`q=${encodeURIComponent('%')}`)).toEqual([oldStep]);
    expect(await stepIds('q=_')).toEqual([oldStep]);
    // Time range: since inclusive, until exclusive.
    const times = (await ok(`/api/v1/protection/${ids.contoso}/steps`)).items as { id: string; receivedAt: string }[];
    const at = (id: string) => encodeURIComponent(times.find((s) => s.id === id)!.receivedAt);
    expect(await stepIds(`until=${at(wouldBlock)}`)).toEqual([allowed, oldStep]);
    expect(await stepIds(`since=${at(allowed)}&until=${at(blocked)}`)).toEqual([wouldBlock, allowed]);
    const ranged = await ok(`/api/v1/protection/${ids.contoso}/steps?since=${at(allowed)}&until=${at(blocked)}&limit=1`);
    expect([ranged.items.length, ranged.total]).toEqual([1, 2]);
    expect(await stepIds('outcome=timeout')).toEqual([oldStep]);
  });

  it('pages oldest first when asked, the cursor continuing in that order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await ok(`/api/v1/protection/${ids.contoso}/steps?order=asc&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.total).toBe(4);
      seen.push(...(page.items as { id: string }[]).map((s) => s.id));
      cursor = page.nextCursor as string | null;
    } while (cursor);
    expect(seen).toEqual([oldStep, ...seeded.contoso!.stepIds]);
    // A cursor of the oldest-first order, passed without it (newest first), would start from the wrong end: refused.
    const first = await ok(`/api/v1/protection/${ids.contoso}/steps?order=asc&limit=1`);
    const res = await get(`/api/v1/protection/${ids.contoso}/steps?limit=1&cursor=${first.nextCursor as string}`);
    expect([res.statusCode, res.json().error.code, res.json().error.field]).toEqual([400, 'INVALID_CURSOR', 'cursor']);
  });

  it('answers 400 naming the field for a bad until, order, detector or search', async () => {
    for (const [query, field] of [
      ['until=yesterday', 'until'],
      ['order=up', 'order'],
      [`detector=${'d'.repeat(65)}`, 'detector'],
      [`q=${'x'.repeat(201)}`, 'q'],
    ] as const) {
      const res = await get(`/api/v1/protection/${ids.contoso}/steps?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error, query).toMatchObject({ code: 'INVALID_INPUT', field });
    }
  });

  it('lists the filter values with names and step counts; another organization’s integration is 404', async () => {
    const f = await ok(`/api/v1/protection/${ids.contoso}/steps/facets`);
    expect(f.detectors).toEqual([
      { detector: 'prompt_injection', steps: 1 },
      { detector: 'sensitive_data_egress', steps: 1 },
    ]);
    expect(f.agents).toEqual([{ agentId: seeded.contoso!.agentId, agentName: seeded.contoso!.agentName, steps: 4 }]);
    expect(f.environments).toEqual([{ environmentId: seeded.contoso!.environmentId, environmentName: expect.any(String), steps: 4 }]);
    const foreign = await get(`/api/v1/protection/${ids.contoso}/steps/facets`, w.keys.fabrikamAdmin);
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([404, 'INTEGRATION_NOT_FOUND']);
  });

  it('summarises the decisions of the organization’s own integrations: 24 hours, 7 days, top detectors, per day and per hour', async () => {
    const day = await ok('/api/v1/protection/summary');
    expect(day.bucket).toBe('day');
    expect(day.integrations).toEqual([
      {
        integrationId: ids.contoso,
        integrationName: 'contoso',
        last24h: { total: 3, blocked: 1, wouldBlock: 1, timedOut: 0, allowed: 1 },
        last7d: { total: 4, blocked: 1, wouldBlock: 1, timedOut: 1, allowed: 1 },
        topDetectors: [
          { detector: 'prompt_injection', decisions: 1 },
          { detector: 'sensitive_data_egress', decisions: 1 },
        ],
      },
    ]);
    expect(day.series).toHaveLength(14);
    expect(day.series.at(-1).period).toBe(new Date().toISOString().slice(0, 10));
    const sum = (series: { total: number; timedOut: number }[]) => series.reduce((n, p) => n + p.total, 0);
    expect(sum(day.series)).toBe(4);
    expect(day.series.find((p: { timedOut: number }) => p.timedOut === 1)).toMatchObject({ total: 1, allowed: 0 });
    const hour = await ok('/api/v1/protection/summary?bucket=hour');
    expect(hour.series).toHaveLength(48);
    expect(hour.series[0].period).toMatch(/^\d{4}-\d\d-\d\dT\d\d$/);
    expect(sum(hour.series)).toBe(3);
    // Fabrikam: its own integration and steps only.
    const fabrikam = await ok('/api/v1/protection/summary', w.keys.fabrikamAdmin);
    expect(fabrikam.integrations.map((i: { integrationId: string }) => i.integrationId)).toEqual([ids.fabrikam]);
    expect(fabrikam.integrations[0].last7d.total).toBe(3);
    expect(sum(fabrikam.series)).toBe(3);
    expect(JSON.stringify(fabrikam)).not.toContain(ids.contoso);
    expect((await get('/api/v1/protection/summary?bucket=week')).json().error).toMatchObject({ code: 'INVALID_INPUT', field: 'bucket' });
  });
});
