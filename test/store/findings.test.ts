import { afterEach, describe, expect, it } from 'vitest';
import { applyEvaluation, listFindings, type ResultInput } from '../../src/store/repositories/findings.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const r = (resourceId: string, status: ResultInput['status']): ResultInput => ({ checkId: 'agent_dormant', severity: 'low', resourceType: 'agent', resourceId, resourceName: resourceId, status, reason: status });

describe.each(DIALECTS)('findings lifecycle on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('opens on fail, keeps first seen, resolves on pass or disappearance, reopens, and ignores not evaluated', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');

    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'fail'), r('c', 'pass')], '2026-01-01T00:00:00Z')).toEqual({ opened: 2, open: 2, resolved: 0 });
    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'not_evaluated')], '2026-01-02T00:00:00Z')).toEqual({ opened: 0, open: 1, resolved: 0 });
    const [a] = await listFindings(db, { status: 'open' }).then((f) => f.filter((x) => x.resource_id === 'a'));
    expect(a).toMatchObject({ first_seen_at: '2026-01-01T00:00:00Z', last_seen_at: '2026-01-02T00:00:00Z' });
    expect((await listFindings(db, { status: 'open' })).map((f) => f.resource_id).sort()).toEqual(['a', 'b']);

    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'pass')], '2026-01-03T00:00:00Z')).toEqual({ opened: 0, open: 0, resolved: 2 });
    expect(await listFindings(db, { status: 'open' })).toEqual([]);
    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'fail')], '2026-01-04T00:00:00Z')).toMatchObject({ opened: 1, open: 1 });
    const reopened = (await listFindings(db, { status: 'open' }))[0]!;
    expect(reopened).toMatchObject({ resource_id: 'a', first_seen_at: '2026-01-01T00:00:00Z', resolved_at: null });
  });
});
