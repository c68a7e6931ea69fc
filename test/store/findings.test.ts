import { afterEach, describe, expect, it } from 'vitest';
import {
  applyEvaluation,
  findingHistory,
  getFinding,
  listFindings,
  suppressFinding,
  unsuppressFinding,
  type ResultInput,
} from '../../src/store/repositories/findings.ts';
import { notEvaluated, NOT_EVALUATED_SAMPLE } from '../../src/store/repositories/queries.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const r = (resourceId: string, status: ResultInput['status']): ResultInput => ({
  checkId: 'agent_dormant',
  severity: 'low',
  resourceType: 'agent',
  resourceId,
  resourceName: resourceId,
  status,
  reason: status,
});

describe.each(DIALECTS)('findings lifecycle on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('opens on fail, keeps first seen, resolves on pass or disappearance, reopens, and ignores not evaluated', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');

    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'fail'), r('c', 'pass')], '2026-01-01T00:00:00Z')).toEqual({
      opened: 2,
      open: 2,
      resolved: 0,
    });
    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'not_evaluated')], '2026-01-02T00:00:00Z')).toEqual({
      opened: 0,
      open: 1,
      resolved: 0,
    });
    const [a] = await listFindings(db, { status: 'open' }).then((f) => f.filter((x) => x.resource_id === 'a'));
    expect(a).toMatchObject({ first_seen_at: '2026-01-01T00:00:00Z', last_seen_at: '2026-01-02T00:00:00Z' });
    expect((await listFindings(db, { status: 'open' })).map((f) => f.resource_id).sort()).toEqual(['a', 'b']);

    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'pass')], '2026-01-03T00:00:00Z')).toEqual({ opened: 0, open: 0, resolved: 2 });
    expect(await listFindings(db, { status: 'open' })).toEqual([]);
    expect(await applyEvaluation(db, 'int_1', null, [r('a', 'fail')], '2026-01-04T00:00:00Z')).toMatchObject({ opened: 1, open: 1 });
    const reopened = (await listFindings(db, { status: 'open' }))[0]!;
    expect(reopened).toMatchObject({ resource_id: 'a', first_seen_at: '2026-01-01T00:00:00Z', resolved_at: null });
  });

  it('records the history, hides a suppressed finding until its expiry, and shows it again as it stands', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'fail')], '2026-01-01T00:00:00.000Z');
    const a = (await listFindings(db, { status: 'open', at: '2026-01-01T00:00:00.000Z' })).find((f) => f.resource_id === 'a')!;
    expect(
      await suppressFinding(db, a.id, { reason: 'sandbox, no data', author: 'ann', expiresAt: '2026-02-01T00:00:00.000Z' }, '2026-01-05T00:00:00.000Z'),
    ).toBe(true);
    expect(await suppressFinding(db, 'fnd_missing', { reason: 'x', author: 'ann', expiresAt: null }, '2026-01-05T00:00:00.000Z')).toBe(false);
    // Suppressed: out of the open list, in the suppressed list, with who and why; the lifecycle goes on underneath.
    const jan = '2026-01-10T00:00:00.000Z';
    expect((await listFindings(db, { status: 'open', at: jan })).map((f) => f.resource_id)).toEqual(['b']);
    expect((await listFindings(db, { status: 'suppressed', at: jan })).map((f) => [f.resource_id, f.suppression?.author, f.suppression?.reason])).toEqual([
      ['a', 'ann', 'sandbox, no data'],
    ]);
    await applyEvaluation(db, 'int_1', null, [r('a', 'pass'), r('b', 'fail')], '2026-01-10T00:00:00.000Z');
    await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'fail')], '2026-01-20T00:00:00.000Z');
    expect((await listFindings(db, { status: 'open', at: '2026-01-20T00:00:00.000Z' })).map((f) => f.resource_id)).toEqual(['b']);
    // After the expiry it is open again (it fails), and the next evaluation records that the suppression expired.
    expect((await listFindings(db, { status: 'open', at: '2026-02-02T00:00:00.000Z' })).map((f) => f.resource_id).sort()).toEqual(['a', 'b']);
    await applyEvaluation(db, 'int_1', null, [r('a', 'fail'), r('b', 'fail')], '2026-02-02T00:00:00.000Z');
    expect((await findingHistory(db, a.id)).map((h) => [h.event, h.at])).toEqual([
      ['opened', '2026-01-01T00:00:00.000Z'],
      ['suppressed', '2026-01-05T00:00:00.000Z'],
      ['resolved', '2026-01-10T00:00:00.000Z'],
      ['reopened', '2026-01-20T00:00:00.000Z'],
      ['suppression_expired', '2026-02-01T00:00:00.000Z'],
    ]);
    // Suppressed until lifted, then lifted.
    const b = (await listFindings(db, { status: 'open' })).find((f) => f.resource_id === 'b')!;
    await suppressFinding(db, b.id, { reason: 'accepted risk', author: 'bob', expiresAt: null }, '2026-02-03T00:00:00.000Z');
    expect((await getFinding(db, b.id, '2030-01-01T00:00:00.000Z'))!.suppression).toMatchObject({ author: 'bob', expires_at: null });
    expect(await unsuppressFinding(db, b.id, 'carol', '2026-02-04T00:00:00.000Z')).toBe(true);
    expect(await unsuppressFinding(db, b.id, 'carol', '2026-02-04T00:00:00.000Z')).toBe(false);
    expect((await findingHistory(db, b.id)).map((h) => h.event)).toEqual(['opened', 'suppressed', 'unsuppressed']);
  });
});

describe.each(DIALECTS)('coverage read model on %s (issue 15, defect 8)', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('lists what was not evaluated as stored (`not_evaluated`), per check and reason, with a count and the first resources by name', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const gap = "Not evaluated: 'dataverseUsers' of environment Sales (env2) could not be read (0x80040220).";
    const results: ResultInput[] = [
      r('pass-1', 'pass'),
      r('fail-1', 'fail'),
      ...Array.from({ length: 12 }, (_, i) => ({
        ...r(`agent-${String(i).padStart(2, '0')}`, 'not_evaluated'),
        resourceName: `Agent ${String(12 - i).padStart(2, '0')}`,
        reason: gap,
      })),
      { ...r('env3', 'not_evaluated'), resourceType: 'environment', resourceName: 'Lab', reason: 'Agent components could not be read.' },
    ];
    await applyEvaluation(db, 'int_1', null, results, '2026-01-01T00:00:00Z');
    const rows = await notEvaluated(db, ['int_1']);
    expect(rows.map((x) => [x.checkId, x.reason, x.resources, x.sample.length])).toEqual([
      ['agent_dormant', 'Agent components could not be read.', 1, 1],
      ['agent_dormant', gap, 12, NOT_EVALUATED_SAMPLE],
    ]);
    // The first resources by name (Agent 01 … Agent 10), never a pass or a fail.
    expect(rows[1]!.sample.map((s) => s.resourceName)).toEqual(Array.from({ length: 10 }, (_, i) => `Agent ${String(i + 1).padStart(2, '0')}`));
    expect(rows[0]!.sample).toEqual([{ resourceType: 'environment', resourceId: 'env3', resourceName: 'Lab' }]);
    expect(await notEvaluated(db, [])).toEqual([]);
    expect(await notEvaluated(db, ['int_other'])).toEqual([]);
  });
});
