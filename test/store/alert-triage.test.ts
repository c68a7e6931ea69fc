import { afterEach, describe, expect, it } from 'vitest';
import { alertHistory, raiseAlert, setAlertStatus } from '../../src/store/repositories/audit.ts';
import { ALERT_SORTS, pageAlerts, type AlertSort } from '../../src/store/repositories/queries.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

/**
 * The alerts list's query on both dialects: every order pages through all alerts once (keyset on the sort value, time
 * and id), the search treats LIKE wildcards literally, the environment filter matches the detail's exact id; and a
 * status change is recorded in the alert's history once.
 */
describe.each(DIALECTS)('alert triage queries on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('pages every order through all alerts once, in order, and filters by text and environment', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const severities = ['low', 'critical', 'high', 'high', 'medium', 'info', 'critical'];
    for (const [i, severity] of severities.entries())
      await raiseAlert(
        db,
        {
          integrationId: 'int_1',
          ruleId: `rule_${i % 3}`,
          severity,
          title: `Alert ${String.fromCharCode(71 - i)} 5${i}%`,
          dedupeKey: `k${i}`,
          detail: { environmentId: i % 2 ? 'env-odd' : 'env-even-1' },
        },
        // Two alerts share each instant: ties are broken by id.
        `2026-02-01T10:0${Math.floor(i / 2)}:00.000Z`,
      );
    for (const sort of ALERT_SORTS as readonly AlertSort[])
      for (const order of ['asc', 'desc'] as const) {
        const all = (await pageAlerts(db, { integrationIds: ['int_1'], sort, order, limit: 100 })).items.map((a) => a.id);
        const paged: string[] = [];
        let after: { v: string | number; at: string; id: string } | undefined;
        for (;;) {
          const { items, more } = await pageAlerts(db, { integrationIds: ['int_1'], sort, order, after, limit: 2 });
          paged.push(...items.map((a) => a.id));
          const last = items.at(-1);
          if (!more || !last) break;
          after = { v: sort === 'severity' || sort === 'status' ? Number(last.sort_value) : String(last.sort_value), at: last.created_at, id: last.id };
        }
        expect(paged, `${sort} ${order}`).toEqual(all);
        expect(new Set(paged).size).toBe(severities.length);
      }
    const bySeverity = (await pageAlerts(db, { integrationIds: ['int_1'], sort: 'severity', limit: 100 })).items.map((a) => a.severity);
    expect(bySeverity).toEqual(['critical', 'critical', 'high', 'high', 'medium', 'low', 'info']);
    const search = async (q: string) => (await pageAlerts(db, { integrationIds: ['int_1'], q, limit: 100 })).items.map((a) => a.title);
    expect(await search('alert g 50%')).toEqual(['Alert G 50%']);
    expect(await search('5_')).toEqual([]);
    const env = async (environmentId: string) => (await pageAlerts(db, { integrationIds: ['int_1'], environmentId, limit: 100 })).items.length;
    expect(await env('env-odd')).toBe(3);
    // Near miss: a prefix of an environment id is not that environment.
    expect(await env('env-even')).toBe(0);
  });

  it('records a status change once, with its author', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const { id } = await raiseAlert(
      db,
      { integrationId: 'int_1', ruleId: 'r', severity: 'high', title: 't', dedupeKey: 'k', detail: {} },
      '2026-02-01T10:00:00.000Z',
    );
    expect(await setAlertStatus(db, id, 'acknowledged', '2026-02-01T11:00:00.000Z', 'ann@contoso.test')).toBe(true);
    expect(await setAlertStatus(db, id, 'acknowledged', '2026-02-01T12:00:00.000Z', 'bob@contoso.test')).toBe(true);
    expect(await alertHistory(db, id)).toEqual([{ at: '2026-02-01T11:00:00.000Z', from_status: 'new', to_status: 'acknowledged', actor: 'ann@contoso.test' }]);
  });
});
