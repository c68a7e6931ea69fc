import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { seedConversation, type SeededConversation } from '../support/protection-steps.ts';
import { apiWorld, connector, signInAs, type ApiWorld } from './harness.ts';

/**
 * `/api/v1/protection` (issue 19) as a portal user or a script sees it: each organization sees its own integrations'
 * endpoints, set-up, decisions, conversations and policies only (another organization's integration answers 404
 * INTEGRATION_NOT_FOUND, like one that never existed); viewers read, admins change; bad input is refused naming the field.
 */
describe('/api/v1/protection', () => {
  let w: ApiWorld;
  const ids: Record<'contoso' | 'fabrikam', string> = { contoso: '', fabrikam: '' };
  let seeded: SeededConversation;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const get = async (url: string, key: string) => {
    const res = await w.app.inject({ url, headers: as(key) });
    return { status: res.statusCode, json: res.json() };
  };
  const put = async (url: string, key: string, payload: object) => {
    const res = await w.app.inject({ method: 'PUT', url, headers: as(key), payload });
    return { status: res.statusCode, json: res.json() };
  };

  beforeAll(async () => {
    w = await apiWorld();
    for (const [org, key] of [
      ['contoso', w.keys.contosoAdmin],
      ['fabrikam', w.keys.fabrikamAdmin],
    ] as const) {
      const res = await w.app.inject({
        method: 'POST',
        url: '/api/v1/integrations',
        headers: as(key),
        payload: { mode: 'customer-app', name: org, ...connector(w.tenants[org]) },
      });
      expect(res.statusCode, res.body).toBe(201);
      ids[org] = res.json().integration.id as string;
      await collectAndEvaluate(w.rt, ids[org]);
    }
    seeded = await seedConversation(w.rt.db, ids.contoso, { appId: '11111111-2222-4333-8444-555555555555', apiUrl: null });
  }, 120_000);
  afterAll(async () => w?.close());

  it("lists every integration of the caller's organization with its endpoint, and nothing of another organization's", async () => {
    const contoso = await get('/api/v1/protection', w.keys.contosoViewer);
    expect(contoso.status).toBe(200);
    expect(contoso.json.items).toEqual([
      expect.objectContaining({ integrationId: ids.contoso, integrationName: 'contoso', endpoint: expect.objectContaining({ id: seeded.endpointId }) }),
    ]);
    const fabrikam = await get('/api/v1/protection', w.keys.fabrikamAdmin);
    expect(fabrikam.json.items).toEqual([expect.objectContaining({ integrationId: ids.fabrikam, endpoint: null })]);
    expect(JSON.stringify(fabrikam.json)).not.toContain(seeded.endpointId);
  });

  it('every route answers 404 INTEGRATION_NOT_FOUND for an integration of another organization, as for one that never existed', async () => {
    const paths = ['', '/steps', `/conversations/${seeded.conversationId}`, '/policies'];
    for (const p of paths) {
      const foreign = await get(`/api/v1/protection/${ids.contoso}${p}`, w.keys.fabrikamAdmin);
      const never = await get(`/api/v1/protection/int_doesnotexist${p}`, w.keys.contosoAdmin);
      expect([foreign.status, foreign.json.error?.code], p).toEqual([404, 'INTEGRATION_NOT_FOUND']);
      expect(never.json.error.code, p).toBe('INTEGRATION_NOT_FOUND');
    }
    expect((await put(`/api/v1/protection/${ids.contoso}`, w.keys.fabrikamAdmin, {})).status).toBe(404);
    expect((await put(`/api/v1/protection/${ids.contoso}/policy`, w.keys.fabrikamAdmin, { mode: 'block' })).status).toBe(404);
    // Nothing changed for Contoso.
    expect((await get(`/api/v1/protection/${ids.contoso}/policies`, w.keys.contosoAdmin)).json.policies).toEqual([]);
  });

  it('the set-up report names the environments with their analyses and the problems with their fixes', async () => {
    const r = await get(`/api/v1/protection/${ids.contoso}`, w.keys.contosoViewer);
    expect(r.status).toBe(200);
    const env = (r.json.environments as { environmentId: string; displayName: string | null; calls: number }[]).find(
      (e) => e.environmentId === seeded.environmentId,
    );
    expect(env).toMatchObject({ calls: 3 });
    expect(env!.displayName).toBeTruthy();
    // VIGIL_API_URL is not set in this world: no base URL, and the problem says how to fix it.
    expect(r.json.setup).toBeNull();
    expect(r.json.problems.join(' ')).toContain('VIGIL_API_URL');
  });

  it('steps: newest first, filtered by outcome, agent, environment, conversation and time, paged with a cursor, with names', async () => {
    const base = `/api/v1/protection/${ids.contoso}/steps`;
    const all = await get(base, w.keys.contosoViewer);
    expect(all.json.items.map((s: { id: string }) => s.id)).toEqual([...seeded.stepIds].reverse());
    expect(all.json.items[0]).toMatchObject({
      agentName: seeded.agentName,
      environmentId: seeded.environmentId,
      blockAction: true,
      decidedBy: 'sensitive_data_egress',
    });
    expect(all.json.items[0].environmentName).toBeTruthy();
    const outcome = async (o: string) => (await get(`${base}?outcome=${o}`, w.keys.contosoViewer)).json.items.map((s: { id: string }) => s.id);
    expect(await outcome('blocked')).toEqual([seeded.stepIds[2]]);
    expect(await outcome('wouldBlock')).toEqual([seeded.stepIds[1]]);
    expect(await outcome('decision')).toEqual([seeded.stepIds[2], seeded.stepIds[1]]);
    expect(await outcome('allowed')).toEqual([seeded.stepIds[0]]);
    expect(await outcome('timeout')).toEqual([]);
    expect((await get(`${base}?agentId=someone-else`, w.keys.contosoViewer)).json.items).toEqual([]);
    expect((await get(`${base}?agentId=${seeded.agentId}&environmentId=${seeded.environmentId}`, w.keys.contosoViewer)).json.items).toHaveLength(3);
    expect((await get(`${base}?conversationId=nope`, w.keys.contosoViewer)).json.items).toEqual([]);
    const since = all.json.items[1].receivedAt as string;
    expect((await get(`${base}?since=${encodeURIComponent(since)}`, w.keys.contosoViewer)).json.items).toHaveLength(2);
    const first = await get(`${base}?limit=2`, w.keys.contosoViewer);
    expect(first.json.items).toHaveLength(2);
    const second = await get(`${base}?limit=2&cursor=${first.json.nextCursor}`, w.keys.contosoViewer);
    expect(second.json).toEqual({ items: [all.json.items[2]], nextCursor: null, total: 3 });
  });

  it("a conversation's timeline is oldest first with each step's detectors and redacted evidence; an unknown one is 404", async () => {
    const r = await get(`/api/v1/protection/${ids.contoso}/conversations/${seeded.conversationId}`, w.keys.contosoViewer);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ conversationId: seeded.conversationId, agentId: seeded.agentId, agentName: seeded.agentName, userId: 'user-1' });
    expect(r.json.steps.map((s: { id: string }) => s.id)).toEqual(seeded.stepIds);
    expect(r.json.steps[1].verdicts[0]).toMatchObject({ detector: 'prompt_injection', evidence: [{ field: 'previousOutputs[0].outputs[0].value' }] });
    const missing = await get(`/api/v1/protection/${ids.contoso}/conversations/never-seen`, w.keys.contosoViewer);
    expect([missing.status, missing.json.error.code]).toEqual([404, 'CONVERSATION_NOT_FOUND']);
  });

  it('viewers are refused every change (403 FORBIDDEN_ROLE), admins enable and set policies recorded with their name', async () => {
    for (const [url, body] of [
      [`/api/v1/protection/${ids.fabrikam}`, {}],
      [`/api/v1/protection/${ids.fabrikam}/policy`, { mode: 'block' }],
    ] as const) {
      const viewer = await signInAs(w.app, 'viewer@fabrikam.test', w.password);
      const res = await w.app.inject({ method: 'PUT', url, headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf }, payload: body });
      expect([res.statusCode, res.json().error.code], url).toEqual([403, 'FORBIDDEN_ROLE']);
    }
    expect((await get('/api/v1/protection', w.keys.fabrikamAdmin)).json.items[0].endpoint).toBeNull();
    const admin = await signInAs(w.app, 'admin@fabrikam.test', w.password);
    const headers = { cookie: admin.cookie, 'x-csrf-token': admin.csrf };
    const enabled = await w.app.inject({ method: 'PUT', url: `/api/v1/protection/${ids.fabrikam}`, headers, payload: {} });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json()).toMatchObject({ integrationId: ids.fabrikam, appId: null });
    const withApp = await w.app.inject({
      method: 'PUT',
      url: `/api/v1/protection/${ids.fabrikam}`,
      headers,
      payload: { appId: 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE' },
    });
    expect(withApp.json()).toMatchObject({ id: enabled.json().id, appId: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' });
    const policy = await w.app.inject({
      method: 'PUT',
      url: `/api/v1/protection/${ids.fabrikam}/policy`,
      headers,
      payload: { environmentId: 'env-1', mode: 'block', detectors: { jailbreak: { action: 'block' } } },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    expect(policy.json()).toMatchObject({ environmentId: 'env-1', updatedBy: 'admin@fabrikam.test', fields: { mode: 'block' } });
    const effective = await get(`/api/v1/protection/${ids.fabrikam}/policies?environmentId=env-1`, w.keys.fabrikamAdmin);
    expect(effective.json.effective).toMatchObject({ mode: 'block', detectors: { jailbreak: { action: 'block' } }, policyIds: [policy.json().id] });
    expect((await get(`/api/v1/protection/${ids.fabrikam}/policies`, w.keys.fabrikamAdmin)).json.effective.mode).toBe('monitor');
  });

  it('bad input is refused with 400 naming the field', async () => {
    const field = async (p: ReturnType<typeof get>) => {
      const r = await p;
      return [r.status, r.json.error?.field];
    };
    const key = w.keys.contosoAdmin;
    const base = `/api/v1/protection/${ids.contoso}`;
    expect(await field(put(base, key, { appId: 'not-a-guid' }))).toEqual([400, 'appId']);
    expect(await field(put(`${base}/policy`, key, { detectors: { jailbreak: { threshold: 7 } } }))).toEqual([400, 'detectors.jailbreak.threshold']);
    expect(await field(put(`${base}/policy`, key, { mode: 'panic' }))).toEqual([400, 'mode']);
    expect(await field(put(`${base}/policy`, key, { allow: { hosts: ['https://x.test/path'] } }))).toEqual([400, 'allow.hosts.0']);
    expect(await field(get(`${base}/steps?outcome=sometimes`, key))).toEqual([400, 'outcome']);
    expect(await field(get(`${base}/steps?since=yesterday`, key))).toEqual([400, 'since']);
    expect(await field(get(`${base}/steps?cursor=garbage`, key))).toEqual([400, 'cursor']);
  });
});
