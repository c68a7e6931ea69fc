import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { powerBiTenantSettingsGroundTruth } from '../../emulator/index.ts';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import { loadChecks } from '../../src/checks/loader.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import type { PowerBiTenantSettingAttrs } from '../../src/sources/powerBi/streams/powerBiTenantSettings.ts';
import { listCheckResults } from '../../src/store/repositories/findings.ts';
import { listEstateObjects } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { world, type World } from './harness.ts';

/** The tenant-setting checks and the policy of the ground truth each one judges. */
const POLICY_OF: Record<string, string> = {
  powerbi_publish_to_web_setting: 'MS.POWERBI.1.1',
  powerbi_guest_access_setting: 'MS.POWERBI.2.1',
  powerbi_guest_invitations_setting: 'MS.POWERBI.3.1',
  powerbi_service_principal_api_access: 'MS.POWERBI.4.1',
  powerbi_service_principal_profiles: 'MS.POWERBI.4.2',
  powerbi_resource_key_auth_allowed: 'MS.POWERBI.5.1',
  powerbi_r_python_visuals: 'MS.POWERBI.6.1',
  powerbi_sensitivity_labels_disabled: 'MS.POWERBI.7.1',
  powerbi_shareable_links_whole_org: 'CIS.9.1.7',
};

describe('Power BI tenant settings (Fabric List Tenant Settings) through the emulator over HTTPS', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  beforeAll(async () => {
    w = await world({
      seed: 'pbi-tenant-settings',
      sizes: { users: 8, guests: 1, groups: 2, environments: 1, agents: 0, powerBiWorkspaces: 2, apps: 0, flows: 0, connectors: 0, connections: 0 },
    });
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  }, 60_000);
  afterAll(async () => w.close());

  const evaluate = async () => {
    const integration = await rt.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    const checks = (await loadChecks()).filter((c) => c.metadata.id in POLICY_OF);
    await evaluateIntegration(rt.db, integration, { checks });
    return (await listCheckResults(rt.db, integrationId)).filter((r) => r.check_id in POLICY_OF);
  };

  it('stores every setting, page by page, and each check agrees with the ground truth', async () => {
    const model = w.tenant.powerBi!;
    model.tenantSettingsPageSize = 3;
    const truth = powerBiTenantSettingsGroundTruth(w.tenant);
    // The generated tenant is varied: some policies met, some not.
    expect(Object.values(truth)).toContain(true);
    expect(Object.values(truth)).toContain(false);

    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => e.stream === 'powerBiTenantSettings')).toEqual([]);
    const stored = await listEstateObjects<PowerBiTenantSettingAttrs>(rt.db, integrationId, 'powerBiTenantSettings');
    expect(stored.map((s) => s.id).sort()).toEqual(model.tenantSettings!.map((s) => s.settingName).sort());
    for (const s of model.tenantSettings!) {
      const row = stored.find((r) => r.id === s.settingName)!;
      expect(row.attrs).toMatchObject({ enabled: s.enabled, title: s.title, group: s.tenantSettingGroup });
      expect(row.attrs.enabledSecurityGroups.map((g) => g.graphId)).toEqual((s.enabledSecurityGroups ?? []).map((g) => g.graphId));
    }
    const pages = w.emulator.control.requests({ service: 'powerBi' }).filter((e) => e.path.includes('/v1/admin/tenantsettings'));
    expect(pages).toHaveLength(Math.ceil(model.tenantSettings!.length / 3));

    const results = await evaluate();
    for (const [check, policy] of Object.entries(POLICY_OF)) {
      expect(results.find((r) => r.check_id === check)?.status, check).toBe(truth[policy] ? 'pass' : 'fail');
    }
  }, 60_000);

  it.each([403, 404] as const)(
    'a %s from the API leaves every tenant-setting check not evaluated with the reason, never passed',
    async (status) => {
      w.tenant.powerBi!.tenantSettingsStatus = status;
      try {
        const run = await collectIntegration(rt, integrationId);
        expect(run.errors.filter((e) => e.stream === 'powerBiTenantSettings')).toHaveLength(1);
        const results = await evaluate();
        expect(results).toHaveLength(Object.keys(POLICY_OF).length);
        for (const r of results) {
          expect(r.status, r.check_id).toBe('not_evaluated');
          expect(r.reason).toMatch(status === 403 ? /refused List Tenant Settings/ : /answered 404/);
        }
      } finally {
        delete w.tenant.powerBi!.tenantSettingsStatus;
      }
    },
    60_000,
  );
});
