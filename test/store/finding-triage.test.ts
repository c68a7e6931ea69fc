import { afterEach, describe, expect, it } from 'vitest';
import { suppressFinding } from '../../src/store/repositories/findings.ts';
import { countFindings, FINDING_SORTS, pageFindings, type FindingQuery, type FindingSort } from '../../src/store/repositories/queries.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

/**
 * The findings list's query on both dialects (issue 21): every order pages through all findings once (keyset on the
 * sort value and id), severity sorts by weight and status open → suppressed → resolved, the search treats LIKE
 * wildcards literally and reads resource names, reasons and suppression reasons, the environment filter matches the
 * environment itself or a detail naming it exactly, the suppressed filter composes with the status, and the total
 * counts every page.
 */
describe.each(DIALECTS)('finding triage queries on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  const AT = '2026-03-01T00:00:00.000Z';

  it('pages every order through all findings once, in order, and filters, searches and counts', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const rows = [
      ['critical', 'open', 'agent_a', 'agent', 'HR helper', { environmentId: 'env-1', reason: 'No authentication 5%' }],
      ['low', 'open', 'agent_b', 'agent', 'sales bot', { environmentId: 'env-10' }],
      ['high', 'resolved', 'pp_c', 'environment', null, null],
      ['high', 'open', 'pp_c', 'environment', 'Zeta', null],
      ['info', 'open', 'agent_a', 'agent', 'alpha', { environmentId: 'env-1' }],
      ['medium', 'open', 'agent_b', 'agent', 'Beta', null],
      ['critical', 'open', 'agent_b', 'agent', 'gamma', { environmentId: 'env-2' }],
    ] as const;
    for (const [i, [severity, status, check, type, name, detail]] of rows.entries())
      await db
        .insertInto('findings')
        .values({
          id: `fnd_${i}`,
          integration_id: 'int_1',
          check_id: check,
          severity,
          resource_type: type,
          resource_id: type === 'environment' ? (i === 2 ? 'env-1' : 'env-2') : `res-${i}`,
          resource_name: name,
          status,
          detail: detail ? JSON.stringify(detail) : null,
          first_seen_at: `2026-02-0${(i % 3) + 1}T00:00:00.000Z`,
          last_seen_at: `2026-02-1${i}T00:00:00.000Z`,
          resolved_at: status === 'resolved' ? '2026-02-20T00:00:00.000Z' : null,
        })
        .execute();
    await suppressFinding(db, 'fnd_5', { reason: 'Accepted: test tenant', author: 'ann@contoso.test', expiresAt: null }, AT);
    // An expired suppression does not count.
    await suppressFinding(db, 'fnd_6', { reason: 'old', author: 'ann@contoso.test', expiresAt: '2026-02-28T00:00:00.000Z' }, AT);
    const base: FindingQuery = { integrationIds: ['int_1'], limit: 100, at: AT };

    for (const sort of FINDING_SORTS as readonly FindingSort[])
      for (const order of ['asc', 'desc'] as const) {
        const all = (await pageFindings(db, { ...base, sort, order })).items.map((f) => f.id);
        const paged: string[] = [];
        let after: { v: string | number; id: string } | undefined;
        for (;;) {
          const { items, more } = await pageFindings(db, { ...base, sort, order, after, limit: 2 });
          paged.push(...items.map((f) => f.id));
          const last = items.at(-1);
          if (!more || !last) break;
          after = { v: sort === 'severity' || sort === 'status' ? Number(last.sort_value) : String(last.sort_value), id: last.id };
        }
        expect(paged, `${sort} ${order}`).toEqual(all);
        expect(new Set(paged).size).toBe(rows.length);
      }
    const ids = async (q: Partial<FindingQuery>) => (await pageFindings(db, { ...base, ...q })).items.map((f) => f.id);
    expect((await pageFindings(db, base)).items.map((f) => f.severity)).toEqual(['critical', 'critical', 'high', 'high', 'medium', 'low', 'info']);
    expect(await ids({ sort: 'status', order: 'asc' })).toEqual(['fnd_0', 'fnd_1', 'fnd_3', 'fnd_4', 'fnd_6', 'fnd_5', 'fnd_2']);
    // A resource without a name sorts by its id; names ignore case.
    expect(await ids({ sort: 'resource', order: 'asc' })).toEqual(['fnd_4', 'fnd_5', 'fnd_2', 'fnd_6', 'fnd_0', 'fnd_1', 'fnd_3']);
    expect(await ids({ sort: 'lastSeenAt', order: 'desc', limit: 2 })).toEqual(['fnd_6', 'fnd_5']);

    expect(await ids({ q: 'hr HELP' })).toEqual(['fnd_0']);
    expect(await ids({ q: 'authentication 5%' })).toEqual(['fnd_0']);
    expect(await ids({ q: '5_' })).toEqual([]);
    expect(await ids({ q: 'test tenant' })).toEqual(['fnd_5']);
    expect(await ids({ q: 'no such text', qCheckIds: ['pp_c'] })).toEqual(['fnd_3', 'fnd_2']);

    expect(await ids({ environmentId: 'env-1' })).toEqual(['fnd_0', 'fnd_2', 'fnd_4']);
    // Near miss: env-1 is a prefix of env-10, which is another environment.
    expect(await ids({ environmentId: 'env-10' })).toEqual(['fnd_1']);

    expect(await ids({ status: 'open' })).toEqual(['fnd_6', 'fnd_0', 'fnd_3', 'fnd_1', 'fnd_4']);
    expect(await ids({ status: 'open', suppressed: true })).toEqual(['fnd_5']);
    expect(await ids({ suppressed: false })).not.toContain('fnd_5');
    expect(await ids({ status: 'suppressed', suppressed: false })).toEqual([]);
    expect(await ids({ severity: 'critical', checkId: 'agent_b' })).toEqual(['fnd_6']);

    expect(await countFindings(db, base)).toBe(7);
    expect(await countFindings(db, { ...base, status: 'open' })).toBe(5);
    expect(await countFindings(db, { ...base, environmentId: 'env-1', q: 'alpha' })).toBe(1);
    expect(await countFindings(db, { ...base, integrationIds: [] })).toBe(0);
  });
});
