import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { operator } from '../../src/access/index.ts';
import { addCustomerAppIntegration, listIntegrationSummaries, verifyStoredIntegration } from '../../src/onboarding/integrations.ts';
import { getIntegration } from '../../src/integration/index.ts';
import { listCheckResults } from '../../src/store/repositories/findings.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { endpointsVariant, TEST_ENV, world, type World } from './harness.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function rejection(p: Promise<unknown>): Promise<{ code: string; field?: string; message: string; remediation?: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; field?: string; message: string; remediation?: string };
  }
  throw new Error('expected a rejection');
}

describe('Mode A onboarding against the emulator', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({ seed: 'onboarding', sizes: { users: 30, guests: 4, groups: 6, environments: 4, agents: 20 } });
  });
  afterAll(async () => w.close());

  it('verifies credentials, permissions, registration and environment access, then stores the integration', async () => {
    const rt = await w.runtime();
    const { integration, report } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    expect(report.verified).toBe(true);
    expect(report.permissionList).toBe('quick');
    expect(report.missingPermissions).toEqual([]);
    expect(report.servicePrincipalObjectId).toBe(w.app.servicePrincipalObjectId);
    expect(report.servicePrincipalObjectId).not.toBe(w.app.appId);
    expect(report.managementApp.registered).toBe(true);
    const unreadable = report.environments.filter((e) => e.agentsReadable === false);
    expect(unreadable).toHaveLength(w.truth.unreadableEnvironments);
    expect(unreadable[0]!.reason).toMatch(/System Administrator/);
    expect(report.environments.filter((e) => !e.dataverse)).toHaveLength(w.truth.environments - w.truth.dataverseEnvironments);
    expect((await listIntegrationSummaries(rt.db, operator('test'))).map((v) => v.id)).toEqual([integration.id]);
    expect(integration.secretDaysLeft).toBeGreaterThan(700);
  });

  it('says the secret VALUE is needed when the secret is wrong (AADSTS7000215), and saves nothing', async () => {
    const rt = await w.runtime();
    const e = await rejection(
      addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: 'Xy7Q~this-is-the-wrong-secret-value-000000' }),
    );
    expect(e.code).toBe('AADSTS7000215');
    expect(e.field).toBe('clientSecret');
    expect(e.message).toMatch(/secret VALUE, not the secret ID/);
    expect(e.remediation).toMatch(/Certificates & secrets/);
    expect(await listIntegrationSummaries(rt.db, operator('test'))).toEqual([]);
  });

  it('reports an unknown tenant (AADSTS90002) on tenantId', async () => {
    const rt = await w.runtime();
    const e = await rejection(addCustomerAppIntegration(rt, { tenantId: randomUUID(), clientId: w.app.appId, clientSecret: w.secret }));
    expect(e).toMatchObject({ code: 'AADSTS90002', field: 'tenantId' });
    expect(await listIntegrationSummaries(rt.db, operator('test'))).toEqual([]);
  });

  it('reports an application not in the tenant (AADSTS700016) on clientId', async () => {
    const rt = await w.runtime();
    const e = await rejection(addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: randomUUID(), clientSecret: w.secret }));
    expect(e).toMatchObject({ code: 'AADSTS700016', field: 'clientId' });
    expect(e.remediation).toMatch(/Application \(client\) ID/);
  });

  it('reports a refused scope (AADSTS70011) from a wrong resource in the endpoints file', async () => {
    const file = endpointsVariant(w.endpointsFile, (j) => {
      (j.graph as { resource: string }).resource = 'https://graph.microsoft.com User.Read';
    });
    const rt = await createRuntime({ dataDir: mkdtempSync(join(tmpdir(), 'vigil-data-')), cloud: loadCustomProfile(file), env: TEST_ENV });
    try {
      const e = await rejection(addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
      expect(e.code).toBe('AADSTS70011');
      expect(e.remediation).toMatch(/\.default/);
    } finally {
      await rt.close();
    }
  });

  it('reports an expired secret (AADSTS7000222) when verifying again', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const original = w.app.secrets[0]!.endDateTime;
    w.app.secrets[0]!.endDateTime = new Date(Date.now() - 86_400_000).toISOString();
    try {
      const e = await rejection(verifyStoredIntegration(rt, integration.id));
      expect(e).toMatchObject({ code: 'AADSTS7000222', field: 'clientSecret' });
      expect(e.message).toMatch(/expired/);
    } finally {
      w.app.secrets[0]!.endDateTime = original;
    }
  });
});

describe('permission gaps are "not evaluated", never passes', () => {
  let w: World;
  afterAll(async () => w?.close());

  it('without registration as a management app: environments and every agent check are not evaluated', async () => {
    w = await world({ seed: 'unregistered', sizes: { users: 20, guests: 2, groups: 4, environments: 3, agents: 12 }, managementApp: false });
    const rt = await w.runtime();
    const { integration, report } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    expect(report.managementApp.registered).toBe(false);
    expect(report.managementApp.detail).toMatch(/New-PowerAppManagementApp -ApplicationId/);
    const run = await collectIntegration(rt, integration.id);
    expect(run.status).toBe('partial');
    expect(run.errors.find((e) => e.stream === 'environments')).toMatchObject({ code: 'Forbidden' });
    await evaluateIntegration(rt.db, await getIntegration(rt.db, integration.id));
    const all = await listCheckResults(rt.db, integration.id);
    // Every check that reads Power Platform or Copilot Studio data says why it could not look — never a pass.
    const dependent = all.filter(
      (r) =>
        /^(agent_|pp_)/.test(r.check_id) || ['environment_agents_not_readable', 'guest_owns_agent', 'guest_owns_app', 'guest_owns_flow'].includes(r.check_id),
    );
    expect(new Set(dependent.map((r) => r.check_id)).size).toBeGreaterThanOrEqual(25);
    expect(dependent.filter((r) => !(r.status === 'not_evaluated' && r.resource_type === 'tenant'))).toEqual([]);
    expect(dependent.filter((r) => !/management application|environments stream failed/.test(r.reason ?? ''))).toEqual([]);
    expect(all.find((r) => r.check_id === 'integration_not_management_app')).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/not a Power Platform admin management application/),
    });
    await w.close();
  });

  it("with the step-by-step list: users and groups collected, the quick list's extras reported missing", async () => {
    w = await world({ seed: 'step', sizes: { users: 20, guests: 2, groups: 4, environments: 3, agents: 12 }, permissions: 'step-by-step' });
    const rt = await w.runtime();
    const { report } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    expect(report.permissionList).toBe('step-by-step');
    expect(report.capabilities.find((c) => c.id === 'directory.groups')).toMatchObject({ status: 'granted', grantedBy: 'Group.Read.All' });
    expect(report.missingPermissions.map((m) => m.permission).sort()).toEqual([
      'AiEnterpriseInteraction.Read.All',
      'ExternalConnection.Read.All',
      'TeamsAppInstallation.ReadForUser.All',
    ]);
    await w.close();
  });

  it('without User.Read.All: users are not collected and agent owners are not evaluated', async () => {
    w = await world({
      seed: 'nousers',
      sizes: { users: 20, guests: 2, groups: 4, environments: 3, agents: 12 },
      permissions: ['GroupMember.Read.All', 'ActivityFeed.Read', 'Tenant.Read.All'],
    });
    const rt = await w.runtime();
    const { integration, report } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    expect(report.missingPermissions).toContainEqual({ api: 'Microsoft Graph', permission: 'User.Read.All', capability: 'directory.users' });
    const run = await collectIntegration(rt, integration.id);
    expect(run.errors).toContainEqual(expect.objectContaining({ stream: 'users', code: 'MISSING_PERMISSION' }));
    expect(run.streams.groups.records).toBe(w.truth.groups);
    await evaluateIntegration(rt.db, await getIntegration(rt.db, integration.id));
    const owner = (await listCheckResults(rt.db, integration.id)).filter(
      (r) => r.check_id === 'agent_owner_disabled_or_missing' && r.resource_type === 'agent',
    );
    expect(owner.length).toBeGreaterThan(0);
    // Owners that exist in Dataverse can only be judged against the directory, which Vigil could not read.
    expect(owner.filter((r) => r.status === 'pass' && r.reason === null)).toEqual([]);
    expect(owner.some((r) => r.status === 'not_evaluated' && /User\.Read\.All/.test(r.reason ?? ''))).toBe(true);
    await w.close();
  });
});
