import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, TEST_DATABASE_URL } from '../store/dialects.ts';
import { apiWorld, keyRequests, TRIAGE_ENVIRONMENT, triageWorld, type ApiWorld } from './harness.ts';

/**
 * The inventory list through the API (issue 21), on SQLite and PostgreSQL: the total the filter selects, server-side
 * sort (name, environment name, first and last seen) both ways with keyset pages that lose and repeat nothing, the
 * cursor bound to its order, each object's environment name read from its own organization's inventory, and the
 * kind's summary facts.
 */
describe.each(['sqlite', 'postgres'] as const)('API: inventory list on %s', (dialect) => {
  let w: ApiWorld;
  const schema = `vigil_test_${randomBytes(6).toString('hex')}`;
  const integration: Record<'contoso' | 'fabrikam', string> = { contoso: '', fabrikam: '' };
  const ENV = TRIAGE_ENVIRONMENT;
  const LAB = 'aaaaaaaa-1111-4222-8333-444444444444';
  const { get } = keyRequests(() => w);
  interface Item {
    id: string;
    name: string | null;
    environmentId: string | null;
    environmentName: string | null;
    summary: { label: string; value: string }[];
  }
  /** Every page of a list of limit 2, checking the total on each. */
  const allPages = async (query: string, key?: string) => {
    const seen: Item[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/api/v1/inventory/agents?limit=2&${query}${cursor ? `&cursor=${cursor}` : ''}`, key);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().total, query).toBe(key ? 1 : 5);
      seen.push(...(res.json().items as Item[]));
      cursor = res.json().nextCursor as string | null;
      pages++;
    } while (cursor && pages < 10);
    return seen;
  };

  beforeAll(async () => {
    w = await apiWorld(dialect === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL, VIGIL_DATABASE_SCHEMA: schema } : {});
    Object.assign(integration, await triageWorld(w));
    const stamps = { raw: '{}', last_seen_run: 'run_x', deleted_at: null as string | null };
    const environment = (org: 'contoso' | 'fabrikam', id: string, name: string, raw = '{}') => ({
      ...stamps,
      raw,
      integration_id: integration[org],
      id,
      display_name: name,
      sku: 'Sandbox',
      is_default: 0,
      region: 'europe',
      dataverse_url: 'https://lab.crm4.dynamics.com',
      state: 'Ready',
      first_seen_at: '2026-01-01T00:00:00.000Z',
      last_seen_at: '2026-01-01T00:00:00.000Z',
    });
    await w.rt.db
      .insertInto('environments')
      .values([
        environment('contoso', LAB, 'Alpha lab', JSON.stringify({ properties: { governanceConfiguration: { protectionLevel: 'Standard' } } })),
        // Fabrikam's environment has Contoso's default environment's id: its name must never reach Contoso.
        environment('fabrikam', ENV, 'Fabrikam private'),
      ])
      .execute();
    const agent = (org: 'contoso' | 'fabrikam', id: string, name: string | null, env: string, first: number, last: number, deleted = false) => ({
      ...stamps,
      integration_id: integration[org],
      environment_id: env,
      id,
      name,
      schema_name: null,
      authentication_mode: 1,
      authentication_trigger: null,
      access_control_policy: 0,
      owner_id: null,
      published_on: '2026-01-10T08:00:00.000Z',
      modified_on: null,
      created_on: null,
      state_code: 0,
      status_code: 1,
      first_seen_at: `2026-01-0${first}T00:00:00.000Z`,
      last_seen_at: `2026-02-0${last}T00:00:00.000Z`,
      deleted_at: deleted ? '2026-02-09T00:00:00.000Z' : null,
    });
    await w.rt.db
      .insertInto('agents')
      .values([
        agent('contoso', 'agt-1', 'Gamma helper', ENV, 3, 1),
        agent('contoso', 'agt-2', 'alpha bot', LAB, 1, 5),
        agent('contoso', 'agt-3', 'Beta bot', ENV, 5, 2),
        agent('contoso', 'agt-4', 'beta bot', LAB, 2, 4),
        agent('contoso', 'agt-5', null, 'Default-uncollected', 4, 3),
        agent('contoso', 'agt-6', 'Deleted bot', ENV, 6, 6, true),
        agent('fabrikam', 'agt-9', 'Fabrikam bot', ENV, 1, 1),
      ])
      .execute();
  }, 180_000);
  afterAll(async () => {
    await w?.close();
    if (dialect === 'postgres') await dropSchema(schema);
  });

  it('answers 400 naming the field for a bad sort or order, and refuses a cursor of another order', async () => {
    for (const [query, field] of [
      ['sort=risk', 'sort'],
      ['order=up', 'order'],
    ] as const) {
      const res = await get(`/api/v1/inventory/agents?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_INPUT', field });
    }
    const first = (await get('/api/v1/inventory/agents?sort=name&limit=2')).json().nextCursor as string;
    const other = await get(`/api/v1/inventory/agents?sort=lastSeenAt&limit=2&cursor=${first}`);
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ code: 'INVALID_CURSOR', field: 'cursor' });
    expect((await get(`/api/v1/inventory/agents?sort=name&order=desc&limit=2&cursor=${first}`)).statusCode).toBe(400);
  });

  it('sorts by name, environment, first and last seen, both ways, across pages: nothing lost or repeated, the total on every page', async () => {
    const expected: Record<string, string[]> = {
      // Unnamed first; "Beta bot" and "beta bot" tie ignoring case and are ordered by id.
      name: ['agt-5', 'agt-2', 'agt-3', 'agt-4', 'agt-1'],
      // Alpha lab, Contoso (default), then the environment not collected by its id.
      environment: ['agt-2', 'agt-4', 'agt-1', 'agt-3', 'agt-5'],
      firstSeenAt: ['agt-2', 'agt-4', 'agt-1', 'agt-5', 'agt-3'],
      lastSeenAt: ['agt-1', 'agt-3', 'agt-5', 'agt-4', 'agt-2'],
    };
    for (const [sort, ids] of Object.entries(expected)) {
      expect(
        (await allPages(`sort=${sort}`)).map((a) => a.id),
        sort,
      ).toEqual(ids);
      expect(
        (await allPages(`sort=${sort}&order=asc`)).map((a) => a.id),
        sort,
      ).toEqual(ids);
      expect(
        (await allPages(`sort=${sort}&order=desc`)).map((a) => a.id),
        `${sort} desc`,
      ).toEqual([...ids].reverse());
    }
    // The default order is by name, A to Z.
    expect((await allPages('')).map((a) => a.id)).toEqual(expected.name);
    // The total follows the filters, not the page.
    const lab = (await get(`/api/v1/inventory/agents?environmentId=${LAB}&limit=1`)).json();
    expect([lab.total, lab.items.length]).toEqual([2, 1]);
    expect((await get('/api/v1/inventory/agents?q=BETA')).json().total).toBe(2);
  });

  it("names each object's environment from its own organization's inventory, and summarises the kind's facts", async () => {
    const items = await allPages('sort=name');
    const byId = new Map(items.map((a) => [a.id, a]));
    expect(byId.get('agt-1')).toMatchObject({ environmentId: ENV, environmentName: 'Contoso (default)' });
    expect(byId.get('agt-2')).toMatchObject({ environmentId: LAB, environmentName: 'Alpha lab' });
    expect(byId.get('agt-5')).toMatchObject({ environmentId: 'Default-uncollected', environmentName: null });
    expect(byId.get('agt-1')!.summary).toEqual([
      { label: 'Authentication', value: 'None' },
      { label: 'Who can chat', value: 'Anyone who can reach a channel' },
      { label: 'Published', value: '2026-01-10' },
      { label: 'State', value: 'Active' },
    ]);
    const all = (await get('/api/v1/inventory/agents?limit=500')).body;
    expect(all).not.toMatch(/Fabrikam/);
    const fabrikam = await allPages('sort=environment', w.keys.fabrikamAdmin);
    expect(fabrikam).toEqual([expect.objectContaining({ id: 'agt-9', environmentId: ENV, environmentName: 'Fabrikam private' })]);
    expect((await get(`/api/v1/inventory/agents?integrationId=${integration.fabrikam}`)).statusCode).toBe(404);

    const envs = (await get('/api/v1/inventory/environments')).json();
    expect(envs.total).toBe(2);
    expect(envs.items.map((e: Item) => e.name)).toEqual(['Alpha lab', 'Contoso (default)']);
    expect(envs.items[0].summary).toEqual([
      { label: 'Type', value: 'Sandbox' },
      { label: 'Region', value: 'europe' },
      { label: 'Managed', value: 'Yes' },
      { label: 'Dataverse', value: 'Yes' },
      { label: 'State', value: 'Ready' },
    ]);
    // An environment whose BAP object carried no governance: "Managed" is not guessed.
    expect(envs.items[1].summary.map((f: { label: string }) => f.label)).not.toContain('Managed');
  });
});
