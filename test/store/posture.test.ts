import { afterEach, describe, expect, it } from 'vitest';
import { applyCheckResults, recordPostureDay, type ResultInput } from '../../src/store/repositories/findings.ts';
import { postureByDay, resultsByCheck } from '../../src/store/repositories/queries.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

/** One result of check `checkId` on resource `id`. */
const result = (checkId: string, id: string, status: ResultInput['status']): ResultInput => ({
  checkId,
  severity: 'high',
  resourceType: 'agent',
  resourceId: id,
  resourceName: id,
  status,
  reason: status === 'not_evaluated' ? 'no access' : null,
});

describe.each(DIALECTS)('posture history on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it("keeps each integration's last evaluation of a day and sums the integrations per day, carrying the last one forward", async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    await insertTestIntegration(db, 'int_2');
    const now = new Date('2026-11-05T12:00:00.000Z');

    // Day 2: int_1 evaluated twice; the second evaluation (1 pass, 1 fail, 1 not evaluated) replaces the first.
    await applyCheckResults(db, 'int_1', null, 'c1', [result('c1', 'a', 'fail'), result('c1', 'b', 'fail')], '2026-11-02T08:00:00.000Z');
    await recordPostureDay(db, 'int_1', '2026-11-02T08:00:00.000Z');
    await applyCheckResults(
      db,
      'int_1',
      null,
      'c1',
      [result('c1', 'a', 'pass'), result('c1', 'b', 'fail'), result('c1', 'c', 'not_evaluated')],
      '2026-11-02T20:00:00.000Z',
    );
    await recordPostureDay(db, 'int_1', '2026-11-02T20:00:00.000Z');
    // Day 4: int_2's first evaluation (2 passes).
    await applyCheckResults(db, 'int_2', null, 'c2', [result('c2', 'x', 'pass'), result('c2', 'y', 'pass')], '2026-11-04T08:00:00.000Z');
    await recordPostureDay(db, 'int_2', '2026-11-04T08:00:00.000Z');

    const days = await postureByDay(db, ['int_1', 'int_2'], 5, now);
    expect(days).toEqual([
      { date: '2026-11-01', counts: null },
      { date: '2026-11-02', counts: { passed: 1, failed: 1, notEvaluated: 1 } },
      { date: '2026-11-03', counts: { passed: 1, failed: 1, notEvaluated: 1 } },
      { date: '2026-11-04', counts: { passed: 3, failed: 1, notEvaluated: 1 } },
      { date: '2026-11-05', counts: { passed: 3, failed: 1, notEvaluated: 1 } },
    ]);
    // Another organization's integration is not summed in; no integration at all: no counts.
    expect((await postureByDay(db, ['int_2'], 5, now)).map((d) => d.counts?.passed ?? null)).toEqual([null, null, null, 2, 2]);
    expect((await postureByDay(db, [], 2, now)).map((d) => d.counts)).toEqual([null, null]);

    expect(Object.fromEntries(await resultsByCheck(db, ['int_1', 'int_2']))).toEqual({
      c1: { passed: 1, failed: 1, notEvaluated: 1 },
      c2: { passed: 2, failed: 0, notEvaluated: 0 },
    });
  });
});
