import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateTenant, startEmulator, tenantAccounts, type RunningEmulator, type Tenant, type TenantAccounts } from '../../emulator/index.ts';
import { ensureOrganization } from '../../src/access/index.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { UpstreamHttpError } from '../../src/platform/http/client.ts';
import { readUserClaims } from '../../src/platform/identity/index.ts';
import { agentQuarantineStatus, containAgent, releaseAgent, type ContainmentDeps } from '../../src/protection/containment.ts';
import { getAgentQuarantineStatus, setAgentQuarantine } from '../../src/sources/powerPlatform/quarantine.ts';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { listContainmentActions } from '../../src/store/repositories/containment.ts';
import { insertIntegration } from '../../src/store/repositories/integrations.ts';
import { vigil } from '../support/process.ts';
import { TEST_ENV } from './harness.ts';

/**
 * Containment (issue 19, "Respond") against the emulator's Power Platform API over HTTPS: the quarantine client, and
 * the use case with a real device-code sign-in of an administrator (auto-approved by the emulator for the account the
 * test chooses), the refusals it explains, and the record of every action with its author.
 */
describe('containment: Copilot Studio agent quarantine through the Power Platform API', () => {
  let emulator: RunningEmulator;
  let rt: Runtime;
  let tenant: Tenant;
  let accounts: TenantAccounts;
  let integrationId: string;
  let environmentId: string;
  let agentId: string;
  let alertId: string;
  const prompts: string[] = [];
  const signIn = { kind: 'device-code' as const, prompt: (m: string) => void prompts.push(m) };
  const PERMISSION = 'CopilotStudio.AdminActions.Invoke';
  const powerPlatform = 'https://api.powerplatform.com';
  const connectorApp = () => tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    tenant = generateTenant({ seed: 'containment', sizes: { users: 12, guests: 1, groups: 2, environments: 3, agents: 6 } });
    // The integration's own app allows public client flows (the device-code grant); one test turns it off.
    connectorApp().isFallbackPublicClient = true;
    accounts = tenantAccounts(tenant);
    emulator = await startEmulator({ tenants: [tenant] });
    emulator.control.setDeviceCodeSettings({ intervalSeconds: 1 });
    const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')));
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-data-'));
    cliEnv = { VIGIL_ENDPOINTS_FILE: endpointsFile, VIGIL_DATA_DIR: dataDir };
    rt = await createRuntime({ dataDir, cloud: loadCustomProfile(endpointsFile), env: TEST_ENV });
    const env = tenant.environments.find((e) => (e.dataverse?.bots.length ?? 0) > 0)!;
    environmentId = env.name;
    agentId = env.dataverse!.bots[0]!.botid;
    const org = (await ensureOrganization(rt.db, 'Contoso')).id;
    integrationId = `int_${randomUUID().replaceAll('-', '')}`;
    const at = new Date().toISOString();
    await insertIntegration(rt.db, {
      id: integrationId,
      organization_id: org,
      name: 'contoso',
      mode: 'customer-app',
      tenant_id: tenant.id,
      client_id: tenant.connectorAppId!,
      sp_object_id: null,
      secret_envelope: null,
      secret_expires_at: null,
      verification: null,
      verified_at: null,
      created_at: at,
      updated_at: at,
    });
    alertId = (
      await raiseAlert(
        rt.db,
        {
          integrationId,
          ruleId: 'agent_authentication_none',
          severity: 'high',
          title: 'Agent published without authentication',
          dedupeKey: `auth-none:${agentId}`,
          detail: { agentId, environmentId },
        },
        at,
      )
    ).id;
  });
  afterAll(async () => {
    await rt?.close();
    await emulator?.close();
  });
  beforeEach(() => {
    prompts.length = 0;
    emulator.control.setBotQuarantine(tenant.id, environmentId, agentId, false);
  });

  const deps = (extra: Partial<ContainmentDeps> = {}): ContainmentDeps => ({ db: rt.db, http: rt.http, cloud: rt.cloud, ...extra });
  const actions = () => listContainmentActions(rt.db, { integrationId, agentId });

  it('quarantines the agent of an alert, reads it quarantined, releases it, and records both actions with their author', async () => {
    emulator.control.setDeviceCodeAutoApprove(tenant.id, accounts.powerPlatformAdmin!.userPrincipalName);
    const contained = await containAgent(deps(), { integration: integrationId, alertId, requestedBy: 'alice (SOC)', signIn });
    expect(prompts[0]).toMatch(/To sign in, use a web browser to open the page .*devicelogin and enter the code/);
    expect(contained).toMatchObject({ action: 'contain', agentId, environmentId, alertId, quarantined: true, requestedBy: 'alice (SOC)' });
    expect(contained.signedInAs).toBe(accounts.powerPlatformAdmin!.userPrincipalName);
    expect(emulator.control.botQuarantine(tenant.id, environmentId, agentId).isBotQuarantined).toBe(true);

    const status = await agentQuarantineStatus(deps(), { integration: 'contoso', agentId, environmentId, signIn });
    expect(status).toMatchObject({ action: 'status', quarantined: true, actionId: null });

    const released = await releaseAgent(deps(), { integration: integrationId, agentId, environmentId, requestedBy: 'bob', signIn });
    expect(released).toMatchObject({ action: 'release', quarantined: false, environmentId });
    expect((await agentQuarantineStatus(deps(), { integration: integrationId, alertId, signIn })).quarantined).toBe(false);
    expect(emulator.control.botQuarantine(tenant.id, environmentId, agentId).isBotQuarantined).toBe(false);

    const rows = await actions();
    expect(rows.map((r) => [r.action, r.requested_by, r.signed_in_as, r.outcome, r.quarantined, r.alert_id])).toEqual([
      ['release', 'bob', accounts.powerPlatformAdmin!.userPrincipalName, 'succeeded', 0, null],
      ['contain', 'alice (SOC)', accounts.powerPlatformAdmin!.userPrincipalName, 'succeeded', 1, alertId],
    ]);
    expect(rows.map((r) => r.id)).toEqual([released.actionId, contained.actionId]);
  });

  it('refuses a user without an admin role, naming the roles, leaves the agent as it was and records the refusal', async () => {
    emulator.control.setDeviceCodeAutoApprove(tenant.id, accounts.ordinaryUser!.userPrincipalName);
    const before = (await actions()).length;
    const err = await containAgent(deps(), { integration: integrationId, agentId, environmentId, requestedBy: 'carol', signIn }).catch((e) => e);
    expect(err).toMatchObject({ code: 'CONTAINMENT_NOT_AVAILABLE', kind: 'authorization' });
    expect(err.message).toMatch(/^Not available: .* holds none of the roles Global Administrator, AI Administrator or Power Platform Administrator/);
    expect(err.remediation).toMatch(/Power Platform Administrator is the least privileged/);
    expect(emulator.control.botQuarantine(tenant.id, environmentId, agentId).isBotQuarantined).toBe(false);
    const rows = await actions();
    expect(rows.length).toBe(before + 1);
    expect(rows[0]).toMatchObject({
      action: 'contain',
      requested_by: 'carol',
      signed_in_as: accounts.ordinaryUser!.userPrincipalName,
      outcome: 'refused',
      error_code: 'CONTAINMENT_NOT_AVAILABLE',
      quarantined: null,
    });
  });

  it('the API refuses an app-only token and a user token without the permission, naming the permission', async () => {
    const appOnly = (await emulator.control.mintToken({ tenantId: tenant.id, resource: powerPlatform, kind: 'app' })).access_token;
    const refused = await setAgentQuarantine({ http: rt.http, cloud: rt.cloud, token: appOnly }, environmentId, agentId, true).catch((e) => e);
    expect(refused).toBeInstanceOf(UpstreamHttpError);
    expect(refused).toMatchObject({ status: 403, upstreamCode: 'Forbidden' });
    expect(refused.upstreamMessage).toMatch(/app-only token.*CopilotStudio\.AdminActions\.Invoke/);

    const admin = tenant.users.find((u) => u.userPrincipalName === accounts.globalAdmin!.userPrincipalName)!;
    const noScope = (await emulator.control.mintToken({ tenantId: tenant.id, resource: powerPlatform, userId: admin.id })).access_token;
    const refused2 = await getAgentQuarantineStatus({ http: rt.http, cloud: rt.cloud, token: noScope }, environmentId, agentId).catch((e) => e);
    expect(refused2).toMatchObject({ status: 403 });
    expect(refused2.upstreamMessage).toContain(PERMISSION);

    const granted = (await emulator.control.mintToken({ tenantId: tenant.id, resource: powerPlatform, userId: admin.id, scp: PERMISSION })).access_token;
    const ctx = { http: rt.http, cloud: rt.cloud, token: granted };
    expect(await setAgentQuarantine(ctx, environmentId, agentId, true)).toMatchObject({ quarantined: true });
    expect(await getAgentQuarantineStatus(ctx, environmentId, agentId)).toMatchObject({ quarantined: true, lastUpdateTimeUtc: expect.any(String) });
    expect(emulator.control.requestLogLeaks([appOnly, noScope, granted])).toEqual([]);
  });

  it('does not call the API with an app-only token or a token without the permission, and says which is missing', async () => {
    const appOnly = (await emulator.control.mintToken({ tenantId: tenant.id, resource: powerPlatform, kind: 'app' })).access_token;
    const asApp: ContainmentDeps['acquireToken'] = async () => ({ accessToken: appOnly, claims: readUserClaims(appOnly) });
    const e1 = await containAgent(deps({ acquireToken: asApp }), { integration: integrationId, agentId, environmentId, requestedBy: 'dave', signIn }).catch(
      (e) => e,
    );
    expect(e1).toMatchObject({ code: 'CONTAINMENT_NOT_AVAILABLE' });
    expect(e1.message).toMatch(/app-only token.*delegated permission CopilotStudio\.AdminActions\.Invoke/);

    const admin = tenant.users.find((u) => u.userPrincipalName === accounts.globalAdmin!.userPrincipalName)!;
    const plain = (await emulator.control.mintToken({ tenantId: tenant.id, resource: powerPlatform, userId: admin.id })).access_token;
    const noScope: ContainmentDeps['acquireToken'] = async () => ({ accessToken: plain, claims: readUserClaims(plain) });
    const e2 = await releaseAgent(deps({ acquireToken: noScope }), { integration: integrationId, agentId, environmentId, requestedBy: 'dave', signIn }).catch(
      (e) => e,
    );
    expect(e2).toMatchObject({ code: 'CONTAINMENT_NOT_AVAILABLE', field: 'clientId' });
    expect(e2.message).toContain(`does not grant the Power Platform API permission ${PERMISSION}`);
    expect(e2.remediation).toContain(`add the delegated Power Platform API (8578e004-a5c6-46e7-913e-12f58912df43) permission ${PERMISSION}`);
    expect((await actions()).slice(0, 2).map((r) => [r.action, r.outcome, r.requested_by])).toEqual([
      ['release', 'refused', 'dave'],
      ['contain', 'refused', 'dave'],
    ]);
  });

  it('explains an integration app that does not allow public client flows, with the setting and the permission to add', async () => {
    emulator.control.setDeviceCodeAutoApprove(tenant.id, accounts.globalAdmin!.userPrincipalName);
    connectorApp().isFallbackPublicClient = false;
    try {
      const err = await containAgent(deps(), { integration: integrationId, agentId, environmentId, requestedBy: 'erin', signIn }).catch((e) => e);
      expect(err, err.message).toMatchObject({ code: 'CONTAINMENT_NOT_AVAILABLE', field: 'clientId' });
      expect(err.message).toContain(`application ${tenant.connectorAppId} does not allow public client flows`);
      expect(err.remediation).toMatch(/"Allow public client flows" to Yes.*CopilotStudio\.AdminActions\.Invoke/);
    } finally {
      connectorApp().isFallbackPublicClient = true;
    }
  });

  it('names an agent the environment does not hold as not found', async () => {
    emulator.control.setDeviceCodeAutoApprove(tenant.id, accounts.globalAdmin!.userPrincipalName);
    const err = await containAgent(deps(), { integration: integrationId, agentId: randomUUID(), environmentId, requestedBy: 'frank', signIn }).catch((e) => e);
    expect(err).toMatchObject({ code: 'AGENT_NOT_FOUND', field: 'agentId' });
    expect(err.message).toMatch(/BotNotFound|could not be found/);
  });

  it('vigil protection contain / quarantine-status / release: the device-code prompt on stderr, the view on stdout', async () => {
    emulator.control.setDeviceCodeAutoApprove(tenant.id, accounts.globalAdmin!.userPrincipalName);
    const contain = await vigil(['protection', 'contain', 'contoso', '--alert', alertId, '--by', 'grace', '--json'], cliEnv);
    expect(contain.code, contain.stderr).toBe(0);
    expect(contain.stderr).toMatch(/To sign in, use a web browser to open the page \S+ and enter the code \S+ to authenticate\./);
    expect(JSON.parse(contain.stdout)).toMatchObject({ action: 'contain', agentId, environmentId, alertId, quarantined: true, requestedBy: 'grace' });
    const status = await vigil(['protection', 'quarantine-status', 'contoso', '--agent', agentId, '--environment', environmentId], cliEnv);
    expect(status.stdout).toContain(`Status of agent ${agentId} in environment ${environmentId}: quarantined`);
    const release = await vigil(['protection', 'release', 'contoso', '--agent', agentId, '--environment', environmentId, '--by', 'grace'], cliEnv);
    expect(release.code, release.stderr).toBe(0);
    expect(release.stdout).toMatch(
      new RegExp(
        `^Released agent ${agentId} .*: not quarantined[\\s\\S]*Recorded as ca_\\S+: by grace, signed in as ${accounts.globalAdmin!.userPrincipalName.replace(/\./g, '\\.')}`,
      ),
    );
    const bad = await vigil(['protection', 'contain', 'contoso', '--agent', 'HR bot', '--environment', environmentId], cliEnv);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--agent/);
  });
});
