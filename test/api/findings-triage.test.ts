import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, TEST_DATABASE_URL } from '../store/dialects.ts';
import { apiWorld, keyRequests, TRIAGE_ENVIRONMENT, triageWorld, type ApiWorld } from './harness.ts';

/**
 * Findings triage through the API (issue 21), on SQLite and PostgreSQL: the list's filters (severity, check,
 * integration, environment, status, suppressed), text search over check title, resource name and reason, server-side
 * sort with keyset paging bound to its order, the total; exports of the same filter; and bulk suppression and lift
 * (all or nothing, scoped to the caller's organization, each change in the finding's history; admins only).
 * Bad values answer 400 naming the field.
 */
describe.each(['sqlite', 'postgres'] as const)('API: finding triage on %s', (dialect) => {
  let w: ApiWorld;
  const schema = `vigil_test_${randomBytes(6).toString('hex')}`;
  const integration: Record<'contoso' | 'fabrikam', string> = { contoso: '', fabrikam: '' };
  const ENV = TRIAGE_ENVIRONMENT;
  const { get, post } = keyRequests(() => w);
  const ids = async (query: string) => {
    const res = await get(`/api/v1/findings?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().items as { id: string }[]).map((f) => f.id);
  };

  beforeAll(async () => {
    w = await apiWorld(dialect === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL, VIGIL_DATABASE_SCHEMA: schema } : {});
    Object.assign(integration, await triageWorld(w));
    const finding = (
      id: string,
      org: 'contoso' | 'fabrikam',
      check: string,
      severity: string,
      name: string,
      day: number,
      detail: Record<string, unknown> | null = null,
      status = 'open',
    ) => ({
      id,
      integration_id: integration[org],
      check_id: check,
      severity,
      resource_type: check.startsWith('agent') ? 'agent' : 'app',
      resource_id: `res-${id}`,
      resource_name: name,
      status,
      detail: detail ? JSON.stringify(detail) : null,
      first_seen_at: `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`,
      last_seen_at: `2026-02-${String(day).padStart(2, '0')}T00:00:00.000Z`,
      resolved_at: status === 'resolved' ? '2026-02-20T00:00:00.000Z' : null,
    });
    await w.rt.db
      .insertInto('findings')
      .values([
        finding('fnd_a', 'contoso', 'agent_no_authentication', 'high', 'HR helper', 3, { environmentId: ENV, reason: 'Authentication is None (100%)' }),
        finding('fnd_b', 'contoso', 'agent_shared_with_everyone', 'critical', 'Sales bot', 1, { environmentId: ENV }),
        finding('fnd_c', 'contoso', 'pp_app_shared_with_everyone', 'medium', 'Expenses app', 2),
        finding('fnd_d', 'contoso', 'pp_app_shared_with_everyone', 'low', 'Travel app', 4),
        finding('fnd_e', 'contoso', 'agent_no_authentication', 'high', 'Old bot', 5, null, 'resolved'),
        finding('fnd_x', 'fabrikam', 'agent_no_authentication', 'critical', 'Fabrikam bot', 1),
      ])
      .execute();
  }, 180_000);
  afterAll(async () => {
    await w?.close();
    if (dialect === 'postgres') await dropSchema(schema);
  });

  it('answers 400 naming the field for a bad sort, order, severity, status, suppressed or search', async () => {
    for (const [query, field] of [
      ['sort=risk', 'sort'],
      ['order=up', 'order'],
      ['severity=severe', 'severity'],
      ['status=new', 'status'],
      ['suppressed=yes', 'suppressed'],
      [`q=${'x'.repeat(201)}`, 'q'],
    ] as const) {
      for (const path of ['/api/v1/findings', '/api/v1/exports/findings?format=csv&']) {
        const res = await get(`${path}${path.endsWith('&') ? '' : '?'}${query}`);
        expect(res.statusCode, `${path} ${query}`).toBe(400);
        expect(res.json().error, query).toMatchObject({ code: 'INVALID_INPUT', field });
      }
    }
    expect((await get('/api/v1/findings?sort=lastSeenAt&order=asc&severity=high&status=all&suppressed=false&q=x')).statusCode).toBe(200);
  });

  it("sorts on the server across pages, the cursor bound to its order; the total counts every page; another organization's findings never show", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/api/v1/findings?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.json().total).toBe(4);
      seen.push(...(res.json().items as { id: string }[]).map((f) => f.id));
      cursor = res.json().nextCursor as string | null;
    } while (cursor);
    expect(seen).toEqual(['fnd_b', 'fnd_a', 'fnd_c', 'fnd_d']);
    expect(await ids('sort=severity&order=asc')).toEqual(['fnd_d', 'fnd_c', 'fnd_a', 'fnd_b']);
    expect(await ids('sort=resource&order=asc')).toEqual(['fnd_c', 'fnd_a', 'fnd_b', 'fnd_d']);
    expect(await ids('sort=check&order=asc')).toEqual(['fnd_a', 'fnd_b', 'fnd_c', 'fnd_d']);
    expect(await ids('sort=firstSeenAt&order=asc')).toEqual(['fnd_b', 'fnd_c', 'fnd_a', 'fnd_d']);
    expect(await ids('sort=lastSeenAt&status=all')).toEqual(['fnd_e', 'fnd_d', 'fnd_a', 'fnd_c', 'fnd_b']);
    expect(await ids('sort=status&order=desc&status=all&limit=1')).toEqual(['fnd_e']);
    const first = (await get('/api/v1/findings?sort=severity&limit=2')).json().nextCursor as string;
    const other = await get(`/api/v1/findings?sort=resource&limit=2&cursor=${first}`);
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ code: 'INVALID_CURSOR', field: 'cursor' });
    expect(await ids('status=all&integrationId=' + integration.contoso)).not.toContain('fnd_x');
    expect((await get(`/api/v1/findings?integrationId=${integration.fabrikam}`)).statusCode).toBe(404);
  });

  it('filters by severity, check, environment and status, and searches check title, resource name and reason', async () => {
    expect(await ids('severity=high&status=all')).toEqual(['fnd_e', 'fnd_a']);
    expect(await ids('checkId=pp_app_shared_with_everyone')).toEqual(['fnd_c', 'fnd_d']);
    const byEnv = (await get(`/api/v1/findings?environmentId=${ENV}`)).json();
    expect(byEnv.items.map((f: { id: string }) => f.id)).toEqual(['fnd_b', 'fnd_a']);
    expect(byEnv.items[0]).toMatchObject({ environmentId: ENV, environmentName: 'Contoso (default)' });
    expect(await ids('environmentId=Default-00000000-0000-4000-8000-000000000000')).toEqual([]);
    expect(await ids('status=resolved')).toEqual(['fnd_e']);
    // The check's title lives in the catalogue, not in the store: "shared with everyone" finds both checks' findings.
    expect(await ids('q=SHARED%20WITH%20EVERYONE')).toEqual(['fnd_b', 'fnd_c', 'fnd_d']);
    expect(await ids('q=travel')).toEqual(['fnd_d']);
    expect(await ids('q=none%20(100%25)')).toEqual(['fnd_a']);
    // Near miss: wildcards alone match only themselves; another organization's names are not searched.
    expect(await ids('q=%25%25')).toEqual([]);
    expect(await ids('q=fabrikam&status=all')).toEqual([]);
  });

  it("bulk suppression and lift: all or nothing; another organization's ids touch nothing; viewers get 403; each change in the history", async () => {
    const suppressed = async () =>
      (await w.rt.db.selectFrom('finding_suppressions').select('finding_id').orderBy('finding_id').execute()).map((r) => r.finding_id);
    const mixed = await post('/api/v1/findings/suppression', { ids: ['fnd_c', 'fnd_x'], reason: 'accepted' });
    expect(mixed.statusCode).toBe(404);
    expect(mixed.json().error).toMatchObject({ code: 'FINDING_NOT_FOUND', field: 'ids' });
    expect(await suppressed()).toEqual([]);
    const foreign = await post('/api/v1/findings/suppression', { ids: ['fnd_c'], reason: 'accepted' }, w.keys.fabrikamAdmin);
    expect(foreign.statusCode).toBe(404);
    expect((await post('/api/v1/findings/suppression', { ids: ['fnd_c'], reason: 'accepted' }, w.keys.contosoViewer)).statusCode).toBe(403);
    expect((await post('/api/v1/findings/suppression/lift', { ids: ['fnd_c'] }, w.keys.contosoViewer)).statusCode).toBe(403);
    expect(await suppressed()).toEqual([]);
    expect((await post('/api/v1/findings/suppression', { ids: ['fnd_c'], reason: '  ' })).json().error).toMatchObject({ field: 'reason' });
    expect((await post('/api/v1/findings/suppression', { ids: ['fnd_c'], reason: 'r', expiresAt: '2020-01-01' })).json().error).toMatchObject({
      field: 'expiresAt',
    });
    expect((await post('/api/v1/findings/suppression', { ids: [], reason: 'r' })).json().error).toMatchObject({ field: 'ids' });

    const ok = await post('/api/v1/findings/suppression', { ids: ['fnd_c', 'fnd_d', 'fnd_c'], reason: 'Test tenant, no data', expiresAt: '2099-01-01' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().changed).toBe(2);
    expect(ok.json().items).toMatchObject([
      { id: 'fnd_c', suppression: { reason: 'Test tenant, no data', author: 'api-key:automation', expiresAt: '2099-01-01T00:00:00.000Z' } },
      { id: 'fnd_d', suppression: { reason: 'Test tenant, no data' } },
    ]);
    expect(await suppressed()).toEqual(['fnd_c', 'fnd_d']);
    expect(await ids('')).toEqual(['fnd_b', 'fnd_a']);
    expect(await ids('status=suppressed')).toEqual(['fnd_c', 'fnd_d']);
    expect(await ids('status=all&suppressed=true')).toEqual(['fnd_c', 'fnd_d']);
    expect(await ids('q=no%20data')).toEqual([]);
    expect(await ids('status=suppressed&q=no%20data')).toEqual(['fnd_c', 'fnd_d']);

    const lift = await post('/api/v1/findings/suppression/lift', { ids: ['fnd_d', 'fnd_a'] });
    expect(lift.statusCode, lift.body).toBe(200);
    // fnd_a was not suppressed: nothing to lift there.
    expect(lift.json().changed).toBe(1);
    expect(await suppressed()).toEqual(['fnd_c']);
    const history = (await get('/api/v1/findings/fnd_d')).json().history as { event: string; detail: Record<string, unknown> }[];
    expect(history.map((h) => h.event)).toEqual(['suppressed', 'unsuppressed']);
    expect(history[0]!.detail).toMatchObject({ reason: 'Test tenant, no data', author: 'api-key:automation' });
    expect(history[1]!.detail).toMatchObject({ author: 'api-key:automation' });
    expect((await get('/api/v1/findings/fnd_a')).json().history).toEqual([]);
  });

  it('filters by first seen: since inclusive, until exclusive, any offset; since after until or a bad time answers 400 naming the field', async () => {
    // first seen: fnd_b 01-01, fnd_c 01-02, fnd_a 01-03, fnd_d 01-04, fnd_e 01-05 (last seen a month later).
    expect(await ids('status=all&sort=firstSeenAt&order=asc&since=2026-01-02T00:00:00Z&until=2026-01-04T00:00:00Z')).toEqual(['fnd_c', 'fnd_a']);
    // The same instants with an offset (01:00 in +01:00 is 00:00 UTC).
    expect(await ids(`status=all&sort=firstSeenAt&order=asc&since=${encodeURIComponent('2026-01-02T01:00:00+01:00')}&until=2026-01-04T00:00:00.001Z`)).toEqual([
      'fnd_c',
      'fnd_a',
      'fnd_d',
    ]);
    expect(await ids('status=all&since=2026-01-05T00:00:00Z')).toEqual(['fnd_e']);
    expect(await ids('status=all&until=2026-01-01T00:00:00Z')).toEqual([]);
    // Last seen (in February) is not what the filter reads.
    expect(await ids('status=all&since=2026-02-01T00:00:00Z')).toEqual([]);
    expect((await get('/api/v1/findings?status=all&since=2026-01-02T00:00:00Z&until=2026-01-04T00:00:00Z')).json().total).toBe(2);
    expect(await ids('status=all&since=2026-01-03T00:00:00Z&until=2026-01-03T00:00:00Z')).toEqual([]);
    for (const [query, field] of [
      ['since=2026-01-03', 'since'],
      ['until=yesterday', 'until'],
      ['since=2026-01-03T00:00:00', 'since'],
      ['since=2026-01-04T00:00:00Z&until=2026-01-03T00:00:00Z', 'since'],
    ] as const) {
      for (const url of [`/api/v1/findings?${query}`, `/api/v1/exports/findings?format=json&${query}`]) {
        const res = await get(url);
        expect(res.statusCode, url).toBe(400);
        expect(res.json().error, url).toMatchObject({ code: 'INVALID_INPUT', field });
      }
    }
    const reversed = await get('/api/v1/findings?since=2026-01-04T00:00:00Z&until=2026-01-03T00:00:00Z');
    expect(reversed.json().error.message).toMatch(/since \(2026-01-04T00:00:00Z\) is after until \(2026-01-03T00:00:00Z\)/);
    const exported = await get('/api/v1/exports/findings?format=json&sort=firstSeenAt&order=asc&since=2026-01-02T00:00:00Z&until=2026-01-04T00:00:00Z');
    expect(exported.statusCode, exported.body).toBe(200);
    expect((JSON.parse(exported.body) as { id: string }[]).map((f) => f.id)).toEqual(['fnd_c', 'fnd_a']);
  });

  it('exports the findings of the same filter and order as the list', async () => {
    const res = await get(`/api/v1/exports/findings?format=json&status=open&environmentId=${ENV}&q=helper`);
    expect(res.statusCode, res.body).toBe(200);
    expect((JSON.parse(res.body) as { id: string }[]).map((f) => f.id)).toEqual(['fnd_a']);
    const csv = await get('/api/v1/exports/findings?format=csv&status=all&sort=resource&order=asc');
    const lines = csv.body.trim().split('\n').slice(1);
    expect(lines.map((l) => l.split(',')[0])).toEqual(['fnd_c', 'fnd_a', 'fnd_e', 'fnd_b', 'fnd_d']);
  });
});
