import { afterEach, describe, expect, it } from 'vitest';
import { operator } from '../../src/access/index.ts';
import { complianceView } from '../../src/reporting/compliance.ts';
import { raiseAlert, setAlertStatus } from '../../src/store/repositories/audit.ts';
import { applyEvaluation, type ResultInput } from '../../src/store/repositories/findings.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

/**
 * The compliance view over the store (both dialects): per item, the latest check results of the integrations in scope
 * (pass / fail / not evaluated) and the alerts of its detections that are not closed, and the state they give.
 */

const result = (checkId: string, resourceId: string, status: ResultInput['status']): ResultInput => ({
  checkId,
  severity: 'high',
  resourceType: 'environment',
  resourceId,
  resourceName: null,
  status,
  reason: status === 'pass' ? null : `${status} ${resourceId}`,
});

describe.each(DIALECTS)('compliance view on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it("counts each item's latest results and open alerts for the organization's integrations only", async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await db
      .insertInto('organizations')
      .values([
        { id: 'org_c', name: 'Contoso', created_at: 'x' },
        { id: 'org_f', name: 'Fabrikam', created_at: 'x' },
      ])
      .execute();
    for (const [id, org] of [
      ['int_c', 'org_c'],
      ['int_f', 'org_f'],
    ] as const) {
      await insertTestIntegration(db, id);
      await db.updateTable('integrations').set({ organization_id: org }).where('id', '=', id).execute();
    }
    // MS.POWERPLATFORM.2.2v1 ← pp_environment_without_dlp; MS.POWERPLATFORM.3.1v1 ← pp_tenant_isolation_enabled.
    await applyEvaluation(
      db,
      'int_c',
      null,
      [
        result('pp_environment_without_dlp', 'env-1', 'fail'),
        result('pp_environment_without_dlp', 'env-2', 'pass'),
        result('pp_environment_without_dlp', 'env-3', 'not_evaluated'),
        result('pp_tenant_isolation_enabled', 'tenant', 'pass'),
      ],
      '2026-11-20T10:00:00.000Z',
    );
    // Fabrikam's failure must not count for Contoso.
    await applyEvaluation(db, 'int_f', null, [result('pp_tenant_isolation_enabled', 'tenant', 'fail')], '2026-11-20T10:00:00.000Z');
    const open = await raiseAlert(
      db,
      { integrationId: 'int_c', ruleId: 'dlp_policy_weakened', severity: 'medium', title: 'weakened', dedupeKey: 'a', detail: {} },
      '2026-11-20T11:00:00.000Z',
    );
    const closed = await raiseAlert(
      db,
      { integrationId: 'int_c', ruleId: 'dlp_policy_weakened', severity: 'medium', title: 'weakened', dedupeKey: 'b', detail: {} },
      '2026-11-20T11:00:00.000Z',
    );
    await setAlertStatus(db, closed.id, 'closed', '2026-11-20T12:00:00.000Z');

    const contoso = operator('test', 'org_c');
    const view = await complianceView(db, contoso, { framework: 'scubagear' });
    expect(view.integrationIds).toEqual(['int_c']);
    const item = (id: string) => view.frameworks[0]!.items.find((i) => i.id === id)!;
    expect(item('MS.POWERPLATFORM.2.2v1')).toMatchObject({ pass: 1, fail: 1, notEvaluated: 1, openAlerts: 0, state: 'fail' });
    expect(item('MS.POWERPLATFORM.3.1v1')).toMatchObject({ pass: 1, fail: 0, notEvaluated: 0, state: 'pass' });
    // Covered, never evaluated here: no results yet (not a pass).
    expect(item('MS.POWERPLATFORM.1.1v1')).toMatchObject({ pass: 0, fail: 0, state: 'no_results' });

    // The detection's closed alert does not count; its open one does.
    const sentinel = (await complianceView(db, contoso, { framework: 'sentinel' })).frameworks[0]!;
    // Not covered: the reason, never a status.
    expect(sentinel.items.find((i) => i.name === 'Power Apps - App activity from unauthorized geo')).toMatchObject({
      covers: [],
      state: 'not_covered',
      notCoveredReason: expect.stringMatching(/^not covered, because/),
    });
    expect(sentinel.items.find((i) => i.name === 'Power Platform - DLP policy updated or removed')).toMatchObject({
      covers: [expect.objectContaining({ kind: 'detection', id: 'dlp_policy_weakened' })],
      openAlerts: 1,
      state: 'fail',
    });
    await setAlertStatus(db, open.id, 'closed', '2026-11-20T13:00:00.000Z');
    const quiet = (await complianceView(db, contoso, { framework: 'sentinel' })).frameworks[0]!;
    expect(quiet.items.find((i) => i.name === 'Power Platform - DLP policy updated or removed')).toMatchObject({ openAlerts: 0, state: 'monitored' });

    // Fabrikam sees its own failure; one integration of another organization is not found.
    const fabrikam = await complianceView(db, operator('test', 'org_f'), { framework: 'scubagear' });
    expect(fabrikam.frameworks[0]!.items.find((i) => i.id === 'MS.POWERPLATFORM.3.1v1')).toMatchObject({ pass: 0, fail: 1, state: 'fail' });
    await expect(complianceView(db, operator('test', 'org_f'), { integrationId: 'int_c' })).rejects.toMatchObject({ code: 'INTEGRATION_NOT_FOUND' });
    await expect(complianceView(db, contoso, { framework: 'nist-ai-rmf' })).rejects.toMatchObject({ code: 'UNKNOWN_FRAMEWORK', field: 'framework' });
  });
});
