import { afterEach, describe, expect, it } from 'vitest';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import { loadChecks } from '../../src/checks/loader.ts';
import { ESTATE_PAGE_SIZE } from '../../src/checks/types.ts';
import type { TeamsAppAttrs } from '../../src/sources/graph/streams/teamsApps.ts';
import type { EstateObject } from '../../src/core/inventory.ts';
import { listCheckResults, listFindings } from '../../src/store/repositories/findings.ts';
import { markUnseen, pageEstateObjects, upsertRecords } from '../../src/store/repositories/inventory.ts';
import { finishRun, insertRun } from '../../src/store/repositories/runs.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

/** `n` personal installations of one Teams app, one per user, ids sorting across page boundaries. */
function installations(appId: string, distributionMethod: string, n: number, from = 0): EstateObject<TeamsAppAttrs>[] {
  return Array.from({ length: n }, (_, i) => {
    const userId = `u${String(from + i).padStart(6, '0')}`;
    return {
      sliceKey: userId,
      id: `${userId}/${appId}`,
      name: appId,
      attrs: {
        userId,
        installationId: `i-${appId}`,
        teamsAppId: appId,
        externalId: null,
        displayName: `App ${appId}`,
        version: '1.0',
        distributionMethod,
        azureADAppId: null,
        publishingState: 'published',
      },
      raw: {},
    };
  });
}

describe.each(DIALECTS)('evaluation over the store on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('reads a stream larger than a page through every page, once each, and applies each check as it runs', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    await insertRun(db, { id: 'run1', integration_id: 'int_1', started_at: '2026-11-01T00:00:00.000Z', owner_host: 'h', owner_pid: 1 });
    // A custom app on more users than one page holds, a second one on 19 users (under the threshold of 20), a store app.
    const wide = ESTATE_PAGE_SIZE + 700;
    const records = [
      ...installations('custom-wide', 'organization', wide),
      ...installations('custom-few', 'sideloaded', 19, 5000),
      ...installations('store-app', 'store', 300),
    ];
    await upsertRecords(db, 'teamsApps', 'int_1', 'run1', records, '2026-11-01T00:00:00.000Z');
    await finishRun(db, 'run1', { status: 'succeeded', finishedAt: '2026-11-01T00:10:00.000Z', durationMs: 1, counts: {}, errors: [], httpStats: {} });

    const seen: string[] = [];
    for (let after: string | null = null; ;) {
      const page: { id: string }[] = await pageEstateObjects(db, 'int_1', 'teamsApps', after, ESTATE_PAGE_SIZE);
      seen.push(...page.map((r) => r.id));
      if (page.length < ESTATE_PAGE_SIZE) break;
      after = page.at(-1)!.id;
    }
    expect(seen).toHaveLength(records.length);
    expect(new Set(seen).size).toBe(records.length);

    const integration = await db.selectFrom('integrations').selectAll().where('id', '=', 'int_1').executeTakeFirstOrThrow();
    const teams = (await loadChecks()).filter((c) => c.metadata.id === 'teams_custom_app_widely_installed');
    const first = await evaluateIntegration(db, integration, { checks: teams });
    expect(first).toMatchObject({ results: 1, byStatus: { fail: 1, pass: 0, not_evaluated: 0 }, findingsOpened: 1, findingsOpen: 1 });
    const [result] = await listCheckResults(db, 'int_1');
    expect(result).toMatchObject({ check_id: 'teams_custom_app_widely_installed', resource_id: 'custom-wide', status: 'fail' });
    expect(result!.reason).toContain(`installed for ${wide} users`);

    // The wide app is removed for all but 5 users: the finding resolves, the tenant passes.
    await insertRun(db, { id: 'run2', integration_id: 'int_1', started_at: '2026-11-02T00:00:00.000Z', owner_host: 'h', owner_pid: 1 });
    await upsertRecords(
      db,
      'teamsApps',
      'int_1',
      'run2',
      [...installations('custom-wide', 'organization', 5), ...installations('custom-few', 'sideloaded', 19, 5000)],
      '2026-11-02T00:00:00.000Z',
    );
    await markUnseen(db, 'teamsApps', 'int_1', 'run2', 'all', '2026-11-02T00:00:00.000Z');
    await finishRun(db, 'run2', { status: 'succeeded', finishedAt: '2026-11-02T00:10:00.000Z', durationMs: 1, counts: {}, errors: [], httpStats: {} });
    const second = await evaluateIntegration(db, integration, { checks: teams });
    expect(second).toMatchObject({ results: 1, byStatus: { pass: 1 }, findingsResolved: 1, findingsOpen: 0 });
    expect((await listFindings(db, { integrationId: 'int_1' })).map((f) => [f.resource_id, f.status])).toEqual([['custom-wide', 'resolved']]);
  }, 60_000);
});
