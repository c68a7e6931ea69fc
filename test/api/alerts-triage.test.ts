import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, TEST_DATABASE_URL } from '../store/dialects.ts';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { countEventsUpTo } from '../../src/store/repositories/queries.ts';
import { storeRecords } from '../../src/sync/audit.ts';
import { agentRow } from '../support/checks.ts';
import { apiWorld, keyRequests, TRIAGE_ENVIRONMENT, triageWorld, type ApiWorld } from './harness.ts';

/**
 * Triage through the API (issue 21): the alerts list's filters, text search and server-side sort with keyset paging,
 * the bulk status change (all or nothing, scoped to the caller's organization, each change in the alert's history),
 * an alert's detail (its events, history, related finding), one event's raw record, and the events list's filters.
 * Bad values answer 400 naming the field.
 */
describe('API: alert triage', () => {
  let w: ApiWorld;
  const integration: Record<'contoso' | 'fabrikam', string> = { contoso: '', fabrikam: '' };
  const alerts: Record<string, string> = {};
  let agent: { id: string; environmentId: string; name: string | null };
  let envName: string | null;
  const { get, post } = keyRequests(() => w);

  const EVENT_ID = '7d1c1f0e-93b4-4b71-9c0c-4d1b2f6a0001';
  const OTHER_EVENT_ID = '7d1c1f0e-93b4-4b71-9c0c-4d1b2f6a0002';

  beforeAll(async () => {
    w = await apiWorld();
    Object.assign(integration, await triageWorld(w));
    const cid = integration.contoso;
    // An agent of the inventory (as a collection stores it), for names and the related finding.
    const envId = TRIAGE_ENVIRONMENT;
    agent = { id: 'b0b0b0b0-0000-4000-8000-000000000001', environmentId: envId, name: null };
    envName = 'Contoso (default)';
    await w.rt.db
      .insertInto('findings')
      .values({
        id: 'fnd_triage1',
        integration_id: cid,
        check_id: 'agent_authentication_none',
        severity: 'high',
        resource_type: 'agent',
        resource_id: agent.id,
        resource_name: 'HR helper',
        status: 'open',
        detail: null,
        first_seen_at: '2026-01-01T00:00:00.000Z',
        last_seen_at: '2026-01-01T00:00:00.000Z',
        resolved_at: null,
      })
      .execute();
    // The agent as a collection stores it: its events name it.
    await w.rt.db
      .insertInto('agents')
      .values(agentRow({ integration_id: cid, environment_id: envId, id: agent.id, name: 'HR helper' }))
      .execute();
    const at = '2026-02-01T10:00:00.000Z';
    await storeRecords(
      w.rt.db,
      cid,
      'Audit.General',
      [
        {
          Id: EVENT_ID,
          CreationTime: '2026-02-01T09:00:00',
          Operation: 'BotUpdateOperation-BotAuthUpdate',
          Workload: 'PowerPlatform',
          UserId: 'megan@contoso.test',
          RecordType: 174,
          ObjectId: agent.id,
        },
        {
          Id: OTHER_EVENT_ID,
          CreationTime: '2026-02-01T08:00:00',
          Operation: 'FileAccessed',
          Workload: 'SharePoint',
          UserId: 'adele@contoso.test',
          RecordType: 6,
        },
      ],
      at,
    );
    const raise = async (
      org: 'contoso' | 'fabrikam',
      key: string,
      severity: string,
      title: string,
      minute: number,
      detail: Record<string, unknown> = {},
      eventIds?: string[],
    ) => {
      const a = await raiseAlert(
        w.rt.db,
        { integrationId: integration[org], ruleId: `rule_${severity}`, severity, title, dedupeKey: key, detail, ...(eventIds ? { eventIds } : {}) },
        `2026-02-01T10:${String(minute).padStart(2, '0')}:00.000Z`,
      );
      alerts[key] = a.id;
    };
    await raise('contoso', 'c-low', 'low', 'Power BI report published to the web', 1);
    await raise('contoso', 'c-critical', 'critical', 'Service principal credentials added', 2);
    await raise('contoso', 'c-medium', 'medium', 'Custom connector created 100% by Megan', 3);
    await raise(
      'contoso',
      'c-high',
      'high',
      'Agent HR helper set to no authentication',
      4,
      { agentId: agent.id, agent: 'HR helper', environmentId: envId, user: 'megan@contoso.test' },
      [EVENT_ID],
    );
    await raise('contoso', 'c-high2', 'high', 'Copilot used from a new IP address', 5);
    await raise('fabrikam', 'f-high', 'high', 'Fabrikam alert', 6);
  }, 120_000);
  afterAll(async () => w?.close());

  const titles = (body: { items: { title: string }[] }) => body.items.map((a) => a.title);

  it('answers 400 naming the field for a bad sort, order, severity, status, limit or search', async () => {
    for (const [query, field] of [
      ['sort=risk', 'sort'],
      ['order=up', 'order'],
      ['severity=severe', 'severity'],
      ['status=open', 'status'],
      ['limit=0', 'limit'],
      [`q=${'x'.repeat(201)}`, 'q'],
    ] as const) {
      const res = await get(`/api/v1/alerts?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error, query).toMatchObject({ code: 'INVALID_INPUT', field });
    }
    // The accepted values of the same fields.
    expect((await get('/api/v1/alerts?sort=severity&order=asc&severity=high&status=new&limit=1&q=x')).statusCode).toBe(200);
  });

  it('sorts by severity (critical first, or last ascending) across pages, ties newest first', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/api/v1/alerts?sort=severity&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...titles(res.json()));
      // Every page says how many alerts the filters select in all, not how many it holds.
      expect(res.json().total).toBe(5);
      cursor = res.json().nextCursor as string | null;
    } while (cursor);
    expect(seen).toEqual([
      'Service principal credentials added',
      'Copilot used from a new IP address',
      'Agent HR helper set to no authentication',
      'Custom connector created 100% by Megan',
      'Power BI report published to the web',
    ]);
    const asc = await get('/api/v1/alerts?sort=severity&order=asc&limit=500');
    expect(titles(asc.json())).toEqual([...seen].reverse());
    // A cursor is bound to its order: passed with another, it is refused rather than skipping or repeating alerts.
    const first = (await get('/api/v1/alerts?sort=severity&limit=2')).json().nextCursor as string;
    const other = await get(`/api/v1/alerts?sort=title&limit=2&cursor=${first}`);
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ code: 'INVALID_CURSOR', field: 'cursor' });
  });

  it('sorts by title and by time, both ways', async () => {
    const byTitle = titles((await get('/api/v1/alerts?sort=title&order=asc')).json());
    expect(byTitle).toEqual([...byTitle].sort());
    expect(byTitle[0]).toBe('Agent HR helper set to no authentication');
    expect(titles((await get('/api/v1/alerts?order=asc')).json())[0]).toBe('Power BI report published to the web');
    expect(titles((await get('/api/v1/alerts')).json())[0]).toBe('Copilot used from a new IP address');
  });

  it('searches title, rule and detail case-insensitively; LIKE wildcards in the text are literal', async () => {
    expect(titles((await get('/api/v1/alerts?q=POWER%20BI')).json())).toEqual(['Power BI report published to the web']);
    expect(titles((await get('/api/v1/alerts?q=megan%40contoso')).json())).toEqual(['Agent HR helper set to no authentication']);
    expect(titles((await get('/api/v1/alerts?q=rule_critical')).json())).toEqual(['Service principal credentials added']);
    expect(titles((await get('/api/v1/alerts?q=100%25')).json())).toEqual(['Custom connector created 100% by Megan']);
    // Near miss: `_` and `%` alone match only themselves, not every alert.
    expect(titles((await get('/api/v1/alerts?q=%25%25')).json())).toEqual([]);
  });

  it('filters by severity and environment, and names the environment and agent', async () => {
    expect(titles((await get('/api/v1/alerts?severity=high')).json())).toEqual([
      'Copilot used from a new IP address',
      'Agent HR helper set to no authentication',
    ]);
    const byEnv = (await get(`/api/v1/alerts?environmentId=${encodeURIComponent(agent.environmentId)}`)).json();
    expect(titles(byEnv)).toEqual(['Agent HR helper set to no authentication']);
    expect(byEnv.total).toBe(1);
    expect((await get('/api/v1/alerts?severity=high&limit=1')).json()).toMatchObject({ total: 2, nextCursor: expect.any(String) });
    expect(byEnv.items[0]).toMatchObject({ environmentId: agent.environmentId, environmentName: envName, agentId: agent.id, agentName: 'HR helper' });
    expect(titles((await get('/api/v1/alerts?environmentId=Default-00000000-0000-4000-8000-000000000000')).json())).toEqual([]);
  });

  it("bulk status change: all or nothing; another organization's alert id is 404 and touches nothing", async () => {
    const mixed = await post('/api/v1/alerts/status', { ids: [alerts['c-low'], alerts['f-high']], status: 'acknowledged' });
    expect(mixed.statusCode).toBe(404);
    expect(mixed.json().error).toMatchObject({ code: 'ALERT_NOT_FOUND', field: 'ids' });
    const statuses = async () =>
      Object.fromEntries((await w.rt.db.selectFrom('alerts').select(['id', 'status']).execute()).map((r) => [r.id, r.status] as const));
    expect((await statuses())[alerts['c-low']!]).toBe('new');
    expect((await statuses())[alerts['f-high']!]).toBe('new');
    // Fabrikam's admin cannot touch Contoso's alerts either.
    const foreign = await post('/api/v1/alerts/status', { ids: [alerts['c-low']], status: 'closed' }, w.keys.fabrikamAdmin);
    expect(foreign.statusCode).toBe(404);
    expect((await statuses())[alerts['c-low']!]).toBe('new');
    // A viewer may not change alerts.
    expect((await post('/api/v1/alerts/status', { ids: [alerts['c-low']], status: 'closed' }, w.keys.contosoViewer)).statusCode).toBe(403);
    expect((await post('/api/v1/alerts/status', { ids: [], status: 'closed' })).json().error).toMatchObject({ field: 'ids' });
    expect((await post('/api/v1/alerts/status', { ids: [alerts['c-low']], status: 'done' })).json().error).toMatchObject({ field: 'status' });

    const ok = await post('/api/v1/alerts/status', { ids: [alerts['c-low'], alerts['c-high'], alerts['c-low']], status: 'acknowledged' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().changed).toBe(2);
    expect(ok.json().items.map((a: { status: string }) => a.status)).toEqual(['acknowledged', 'acknowledged']);
    expect((await statuses())[alerts['c-critical']!]).toBe('new');
    expect((await statuses())[alerts['f-high']!]).toBe('new');
    // Setting the status it has changes nothing and records nothing.
    expect((await post('/api/v1/alerts/status', { ids: [alerts['c-low']], status: 'acknowledged' })).json().changed).toBe(0);
    expect(titles((await get('/api/v1/alerts?status=acknowledged')).json())).toEqual([
      'Agent HR helper set to no authentication',
      'Power BI report published to the web',
    ]);
  });

  it("an alert's detail: its events, the history with who changed it, the open finding on its agent", async () => {
    const res = await get(`/api/v1/alerts/${alerts['c-high']}`);
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json();
    expect(d.events.map((e: { id: string }) => e.id)).toEqual([EVENT_ID]);
    expect(d.events[0]).toMatchObject({ operation: 'BotUpdateOperation-BotAuthUpdate', userId: 'megan@contoso.test', objectId: agent.id });
    expect(d.history).toEqual([{ at: expect.any(String), from: 'new', to: 'acknowledged', actor: 'api-key:automation' }]);
    expect(d.relatedFinding).toMatchObject({ id: 'fnd_triage1', resourceId: agent.id, status: 'open' });
    // Near miss: an alert naming no agent or resource has no related finding and no events.
    const plain = (await get(`/api/v1/alerts/${alerts['c-critical']}`)).json();
    expect(plain).toMatchObject({ relatedFinding: null, events: [], history: [] });
    expect((await get(`/api/v1/alerts/${alerts['c-high']}`, w.keys.fabrikamAdmin)).statusCode).toBe(404);
  });

  it('one event with its raw record; the events list filters by object, user, operation and time range', async () => {
    const e = await get(`/api/v1/events/${EVENT_ID}`);
    expect(e.statusCode, e.body).toBe(200);
    expect(e.json().raw).toMatchObject({ Id: EVENT_ID, ObjectId: agent.id });
    expect((await get(`/api/v1/events/${EVENT_ID}`, w.keys.fabrikamAdmin)).json().error.code).toBe('EVENT_NOT_FOUND');
    const ids = async (query: string) => ((await get(`/api/v1/events?${query}`)).json().items as { id: string }[]).map((x) => x.id);
    expect(await ids(`objectId=${agent.id}`)).toEqual([EVENT_ID]);
    // The object is named from the inventory; an object Vigil does not hold keeps its id alone.
    const named = (await get('/api/v1/events')).json().items as { id: string; objectId: string | null; objectName: string | null }[];
    expect(named.find((x) => x.id === EVENT_ID)).toMatchObject({ objectId: agent.id, objectName: 'HR helper' });
    expect(named.find((x) => x.id === OTHER_EVENT_ID)?.objectName).toBeNull();
    expect(e.json().objectName).toBe('HR helper');
    expect(await ids('userId=adele%40contoso.test')).toEqual([OTHER_EVENT_ID]);
    expect(await ids('operation=FileAccessed')).toEqual([OTHER_EVENT_ID]);
    expect(await ids('since=2026-02-01T08:30:00Z&until=2026-02-01T09:30:00Z')).toEqual([EVENT_ID]);
    expect(await ids('until=2026-02-01T09:00:00Z')).toEqual([OTHER_EVENT_ID]);
    const bad = await get('/api/v1/events?until=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.field).toBe('until');
  });
});

/**
 * The time filter of the alerts and events lists, on SQLite and PostgreSQL: `since` inclusive, `until` exclusive (on an
 * alert's createdAt, an event's creationTime), instants with any offset compared as UTC; a since after until answers
 * 400 naming since.
 */
describe.each(['sqlite', 'postgres'] as const)('API: alerts and events in a time range on %s', (dialect) => {
  let w: ApiWorld;
  const schema = `vigil_test_${randomBytes(6).toString('hex')}`;
  const { get } = keyRequests(() => w);
  let contosoId = '';
  const titles = async (query: string) => {
    const res = await get(`/api/v1/alerts?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().items as { title: string }[]).map((a) => a.title);
  };

  beforeAll(async () => {
    w = await apiWorld(dialect === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL, VIGIL_DATABASE_SCHEMA: schema } : {});
    const { contoso, fabrikam } = await triageWorld(w);
    contosoId = contoso;
    for (const [integrationId, hour] of [
      [contoso, 8],
      [contoso, 9],
      [contoso, 10],
      [fabrikam, 9],
    ] as const)
      await raiseAlert(
        w.rt.db,
        { integrationId, ruleId: 'rule_time', severity: 'high', title: `${integrationId === contoso ? 'c' : 'f'}${hour}`, dedupeKey: `t${hour}`, detail: {} },
        `2026-03-01T${String(hour).padStart(2, '0')}:00:00.000Z`,
      );
    await storeRecords(
      w.rt.db,
      contoso,
      'Audit.General',
      [8, 9, 10].map((h) => ({ Id: `e${h}`, CreationTime: `2026-03-01T${String(h).padStart(2, '0')}:00:00`, Operation: 'FileAccessed', RecordType: 6 })),
      '2026-03-01T11:00:00.000Z',
    );
  }, 180_000);
  afterAll(async () => {
    await w?.close();
    if (dialect === 'postgres') await dropSchema(schema);
  });

  it('lists alerts created at or after since and before until', async () => {
    expect(await titles('since=2026-03-01T09:00:00Z')).toEqual(['c10', 'c9']);
    expect(await titles('until=2026-03-01T09:00:00Z')).toEqual(['c8']);
    expect(await titles('since=2026-03-01T09:00:00Z&until=2026-03-01T10:00:00Z')).toEqual(['c9']);
    // 10:00 at +01:00 is 09:00 UTC.
    expect(await titles(`since=${encodeURIComponent('2026-03-01T10:00:00+01:00')}&until=2026-03-01T09:00:00.001Z`)).toEqual(['c9']);
    expect(await titles('since=2026-03-01T09:00:00Z&until=2026-03-01T09:00:00Z')).toEqual([]);
    // Paged, the range holds on every page.
    const first = (await get('/api/v1/alerts?since=2026-03-01T08:00:00Z&limit=2')).json();
    expect(first.items.map((a: { title: string }) => a.title)).toEqual(['c10', 'c9']);
    const next = (await get(`/api/v1/alerts?since=2026-03-01T08:00:00Z&limit=2&cursor=${first.nextCursor}`)).json();
    expect(next.items.map((a: { title: string }) => a.title)).toEqual(['c8']);
  });

  it('lists events in the same range, and answers 400 naming the field for a bad or reversed range', async () => {
    const events = await get('/api/v1/events?since=2026-03-01T09:00:00Z&until=2026-03-01T10:00:00Z');
    expect(events.json().items.map((e: { id: string }) => e.id)).toEqual(['e9']);
    expect(events.json()).toMatchObject({ total: 1, totalIsLowerBound: false });
    // The total counts every page the filters select, not the one answered.
    expect((await get('/api/v1/events?since=2026-03-01T08:00:00Z&limit=1')).json()).toMatchObject({
      items: [{ id: 'e10' }],
      total: 3,
      totalIsLowerBound: false,
    });
    // Counting stops past the cap: the count says "more than" instead of reading on.
    const where = { integrationIds: [contosoId], since: '2026-03-01T08:00:00.000Z' };
    expect([await countEventsUpTo(w.rt.db, where, 2), await countEventsUpTo(w.rt.db, where, 3), await countEventsUpTo(w.rt.db, where, 100)]).toEqual([3, 3, 3]);
    expect(await countEventsUpTo(w.rt.db, where, 1)).toBe(2);
    expect(await countEventsUpTo(w.rt.db, { ...where, operation: 'BotCreate' }, 10)).toBe(0);
    for (const [url, field] of [
      ['/api/v1/alerts?since=2026-03-01', 'since'],
      ['/api/v1/alerts?until=2026-03-01T09:00:00', 'until'],
      ['/api/v1/alerts?since=2026-03-01T10:00:00Z&until=2026-03-01T09:00:00Z', 'since'],
      ['/api/v1/events?since=2026-03-01T10:00:00Z&until=2026-03-01T09:00:00Z', 'since'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toMatchObject({ code: 'INVALID_INPUT', field });
    }
    expect((await get('/api/v1/alerts?since=2026-03-01T10:00:00Z&until=2026-03-01T09:00:00Z')).json().error.message).toBe(
      'since (2026-03-01T10:00:00Z) is after until (2026-03-01T09:00:00Z).',
    );
  });
});
