import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizationSettingsGroundTruth, SYSTEM_ADMINISTRATOR, type OrganizationRow } from '../../emulator/index.ts';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import { listCheckResults } from '../../src/store/repositories/findings.ts';
import { loadChecks } from '../../src/checks/loader.ts';
import type { EnvironmentSettingsAttrs } from '../../src/sources/dataverse/streams/environmentSettings.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { listEstateObjects } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { world, type World } from './harness.ts';

/** The attrs Vigil should store for a served `organization` row. */
function expectedAttrs(environmentId: string, row: OrganizationRow): EnvironmentSettingsAttrs {
  return {
    environmentId,
    organizationId: row.organizationid,
    cspEnforcedModelDriven: row.iscontentsecuritypolicyenabled,
    cspEnforcedCanvas: row.iscontentsecuritypolicyenabledforcanvas,
    cspReportUri: row.contentsecuritypolicyreporturi,
    cspConfigurationModelDriven: row.contentsecuritypolicyconfiguration,
    cspConfigurationCanvas: row.contentsecuritypolicyconfigurationforcanvas,
    auditEnabled: row.isauditenabled,
    userAccessAuditEnabled: row.isuseraccessauditenabled,
    auditRetentionDays: row.auditretentionperiodv2,
    sessionTimeoutEnabled: row.sessiontimeoutenabled,
    sessionTimeoutMinutes: row.sessiontimeoutinmins,
    inactivityTimeoutEnabled: row.inactivitytimeoutenabled,
    inactivityTimeoutMinutes: row.inactivitytimeoutinmins,
    blockedAttachments: row.blockedattachments,
    ipFirewallEnabled: row.enableipbasedfirewallrule,
    ipFirewallAuditOnly: row.enableipbasedfirewallruleinauditmode,
    ipFirewallAllowedRanges: row.allowediprangeforfirewall,
    ipCookieBindingEnabled: row.enableipbasedcookiebinding,
  };
}

async function stored(rt: Runtime, integrationId: string): Promise<Record<string, EnvironmentSettingsAttrs>> {
  const rows = await listEstateObjects<EnvironmentSettingsAttrs>(rt.db, integrationId, 'environmentSettings');
  return Object.fromEntries(rows.map((r) => [r.id, r.attrs]));
}

function truthAttrs(w: World): Record<string, EnvironmentSettingsAttrs> {
  return Object.fromEntries(Object.entries(organizationSettingsGroundTruth(w.tenant).readable).map(([env, row]) => [env, expectedAttrs(env, row)]));
}

describe('environment settings (Dataverse organization: content security policy)', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  beforeAll(async () => {
    w = await world({
      seed: 'env-settings-e2e',
      sizes: {
        users: 12,
        guests: 1,
        groups: 2,
        environments: 5,
        agents: 2,
        powerBiWorkspaces: 0,
        apps: 0,
        flows: 0,
        connectors: 0,
        connections: 0,
        foundryAccounts: 0,
        agentComponentsPerAgent: 0,
      },
    });
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  }, 60_000);
  afterAll(async () => w.close());

  it('stores the CSP settings of every readable environment, errors unreadable ones, and the check judges them', async () => {
    const truth = organizationSettingsGroundTruth(w.tenant);
    const readable = Object.values(truth.readable);
    expect(readable.some((r) => r.iscontentsecuritypolicyenabled && r.iscontentsecuritypolicyenabledforcanvas)).toBe(true);
    expect(readable.some((r) => !r.iscontentsecuritypolicyenabled)).toBe(true);
    expect(truth.unreadableEnvironments).toBeGreaterThan(0);

    const run = await collectIntegration(rt, integrationId);
    expect(await stored(rt, integrationId)).toEqual(truthAttrs(w));
    expect(run.errors.filter((e) => e.stream === 'environmentSettings')).toHaveLength(truth.unreadableEnvironments);

    const integration = await rt.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    const check = (await loadChecks()).find((c) => c.metadata.id === 'pp_content_security_policy')!;
    await evaluateIntegration(rt.db, integration, { checks: [check] });
    const results = (await listCheckResults(rt.db, integrationId)).filter((r) => r.check_id === check.metadata.id);
    const byEnv = Object.fromEntries(results.map((r) => [r.resource_id, r.status]));
    for (const [env, row] of Object.entries(truth.readable))
      expect(byEnv[env], env).toBe(row.iscontentsecuritypolicyenabled && row.iscontentsecuritypolicyenabledforcanvas ? 'pass' : 'fail');
    expect(results.filter((r) => r.status === 'not_evaluated')).toHaveLength(truth.unreadableEnvironments);
  }, 60_000);

  it('judges each environment security settings and Managed Environments configuration as the served values say', async () => {
    const truth = organizationSettingsGroundTruth(w.tenant);
    const rows = Object.values(truth.readable);
    // The generator makes the first org weak and the second strong in every respect: both outcomes are exercised.
    expect(rows.some((r) => !r.isauditenabled) && rows.some((r) => r.isauditenabled)).toBe(true);
    expect(rows.some((r) => !r.enableipbasedfirewallrule) && rows.some((r) => r.enableipbasedfirewallrule)).toBe(true);
    const integration = await rt.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    const expected: Record<string, (r: OrganizationRow) => boolean> = {
      pp_dataverse_auditing_disabled: (r) => r.isauditenabled,
      pp_dataverse_access_logging_disabled: (r) => r.isauditenabled && r.isuseraccessauditenabled,
      pp_session_timeout_too_long: (r) => !r.sessiontimeoutenabled || r.sessiontimeoutinmins <= 1440,
      pp_inactivity_timeout_disabled: (r) => r.inactivitytimeoutenabled && r.inactivitytimeoutinmins <= 120,
      pp_blocked_attachments_incomplete: (r) => ['exe', 'js', 'vbs', 'hta'].every((e) => r.blockedattachments.split(';').includes(e)),
      pp_ip_firewall_disabled: (r) => r.enableipbasedfirewallrule && !r.enableipbasedfirewallruleinauditmode && !!r.allowediprangeforfirewall,
      pp_ip_cookie_binding_disabled: (r) => r.enableipbasedcookiebinding,
    };
    const checks = (await loadChecks()).filter(
      (c) => c.metadata.id in expected || c.metadata.id.startsWith('pp_environment_not_managed') || c.metadata.id.startsWith('pp_managed_environment_'),
    );
    await evaluateIntegration(rt.db, integration, { checks });
    const results = await listCheckResults(rt.db, integrationId);
    for (const [checkId, passes] of Object.entries(expected)) {
      const byEnv = Object.fromEntries(results.filter((r) => r.check_id === checkId).map((r) => [r.resource_id, r.status]));
      for (const [env, row] of Object.entries(truth.readable)) expect(byEnv[env], `${checkId} ${env}`).toBe(passes(row) ? 'pass' : 'fail');
      expect(
        Object.values(byEnv).filter((s) => s === 'not_evaluated'),
        checkId,
      ).toHaveLength(truth.unreadableEnvironments);
    }
    // Managed Environments: BAP's governanceConfiguration of each environment, as served.
    const status = (checkId: string, env: string) => results.find((r) => r.check_id === checkId && r.resource_id === env)?.status;
    let managedSeen = 0;
    for (const env of w.tenant.environments) {
      const gov = env.governanceConfiguration ?? { protectionLevel: 'Basic' as const };
      const ext = gov.settings?.extendedSettings ?? {};
      const managedEnv = gov.protectionLevel === 'Standard';
      const inScope = env.isDefault || env.environmentSku === 'Production';
      expect(status('pp_environment_not_managed', env.name), env.name).toBe(inScope ? (managedEnv ? 'pass' : 'fail') : undefined);
      if (!managedEnv) {
        expect(status('pp_managed_environment_sharing_unlimited', env.name)).toBeUndefined();
        continue;
      }
      managedSeen++;
      const limited = ext.limitSharingMode === 'excludeSharingToSecurityGroups' && Number(ext.maxLimitUserSharing) >= 0;
      expect(status('pp_managed_environment_sharing_unlimited', env.name), env.name).toBe(limited ? 'pass' : 'fail');
      expect(status('pp_managed_environment_solution_checker_off', env.name), env.name).toBe(ext.solutionCheckerMode === 'none' ? 'fail' : 'pass');
    }
    expect(managedSeen).toBeGreaterThan(1);
  }, 60_000);

  it('a second round after a change, a removal and newly granted access equals the new ground truth', async () => {
    const model = w.tenant.organizationSettings!;
    const readableEnvs = Object.keys(organizationSettingsGroundTruth(w.tenant).readable);
    const orgOf = (envName: string) => w.tenant.environments.find((e) => e.name === envName)!.dataverse!;
    const changed = model[orgOf(readableEnvs[0]!).uniqueName.toLowerCase()]!;
    changed.iscontentsecuritypolicyenabled = !changed.iscontentsecuritypolicyenabled;
    changed.contentsecuritypolicyreporturi = 'https://csp.changed.example.org/report';
    const removedEnv = readableEnvs[1]!;
    delete model[orgOf(removedEnv).uniqueName.toLowerCase()];
    const locked = w.tenant.environments.find((e) => e.dataverse && !e.dataverse.appUsers.some((a) => a.appId === w.app.appId))!;
    locked.dataverse!.appUsers.push({ appId: w.app.appId, systemuserid: '0e0e0e0e-0000-4000-8000-000000000001', roles: [SYSTEM_ADMINISTRATOR] });

    await collectIntegration(rt, integrationId);
    const now = await stored(rt, integrationId);
    expect(now).toEqual(truthAttrs(w));
    expect(now[locked.name]).toBeDefined();
    expect(now[readableEnvs[0]!]?.cspReportUri).toBe('https://csp.changed.example.org/report');
    const deleted = await rt.db
      .selectFrom('estate_objects')
      .select('id')
      .where('stream', '=', 'environmentSettings')
      .where('deleted_at', 'is not', null)
      .execute();
    expect(deleted.map((d) => d.id)).toEqual([removedEnv]);
  }, 60_000);
});
