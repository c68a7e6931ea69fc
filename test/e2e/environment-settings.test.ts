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
