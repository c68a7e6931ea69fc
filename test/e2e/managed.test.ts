import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateManagedApp, generateTenant, startEmulator, type ManagedApp, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { tenantAccounts } from '../../emulator/generate.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { consentLink } from '../../src/onboarding/consent.ts';
import { setupSteps } from '../../src/onboarding/doctor.ts';
import { actionOf } from '../../src/cli/flags.ts';
import { grantEnvironmentAccess } from '../../src/onboarding/environments.ts';
import { addManagedAppIntegration, verifyStoredIntegration } from '../../src/onboarding/integrations.ts';
import { registerManagementApp } from '../../src/onboarding/registration.ts';
import { signState } from '../../src/platform/crypto/signed-state.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { TEST_ENV } from './harness.ts';
import { browse, consentCallbackIntercept } from '../support/browser.ts';

const REDIRECT = 'http://127.0.0.1:8080/consent/callback';

describe('Mode B: managed-app consent, registration, environment access', () => {
  let emulator: RunningEmulator;
  let rt: Runtime;
  let managed: ManagedApp;
  let t1: Tenant;
  let t2: Tenant;
  let dispatcher: Agent;

  beforeAll(async () => {
    t1 = generateTenant({ seed: 'mode-b-1', sizes: { users: 20, guests: 2, groups: 4, environments: 4, agents: 10 } });
    t2 = generateTenant({ seed: 'mode-b-2', sizes: { users: 10, guests: 1, groups: 2, environments: 3, agents: 4 } });
    managed = generateManagedApp({ seed: 'operator', redirectUris: [REDIRECT] });
    emulator = await startEmulator({ tenants: [t1, t2], managedApps: [managed] });
    emulator.control.setDeviceCodeSettings({ intervalSeconds: 1 });
    dispatcher = new Agent({ connect: { ca: emulator.caPem } });
    const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')));
    rt = await createRuntime({
      dataDir: mkdtempSync(join(tmpdir(), 'vigil-data-')),
      cloud: loadCustomProfile(endpointsFile),
      env: {
        ...TEST_ENV,
        VIGIL_MANAGED_APP_CLIENT_ID: managed.appId,
        VIGIL_MANAGED_APP_CLIENT_SECRET: managed.clientSecret,
        VIGIL_CONSENT_REDIRECT_URI: REDIRECT,
      },
    });
  });
  afterAll(async () => {
    await rt?.close();
    await emulator?.close();
  });

  /** Opens the consent link as the administrator's browser would, through consent, Vigil's callback and the sign-in. */
  async function consent(url: string): Promise<{ status: number; body: string }> {
    const intercept = await consentCallbackIntercept(rt, REDIRECT);
    try {
      const { final } = await browse(url, { dispatcher, intercept });
      return { status: final.status, body: final.body };
    } finally {
      await intercept.close();
    }
  }

  it('refuses an integration before consent, naming the proof to make', async () => {
    const sp = randomUUID();
    await expect(addManagedAppIntegration(rt, { tenantId: t1.id, spObjectId: sp })).rejects.toMatchObject({
      code: 'TENANT_NOT_PROVEN',
      remediation: expect.stringContaining('"Get consent link" in the portal'),
    });
  });

  it('resolves a primary domain and refuses the domain of another tenant', async () => {
    const link = await consentLink(rt, t1.domains[0]!, t1.id);
    expect(link.tenantId).toBe(t1.id);
    expect(link.url).toMatch(new RegExp(`/${t1.id}/adminconsent\\?client_id=${managed.appId}&redirect_uri=`));
    expect(link.instructions.join(' ')).toMatch(/private/);
    await expect(consentLink(rt, t2.domains[0]!, t1.id)).rejects.toMatchObject({ code: 'DOMAIN_OF_ANOTHER_TENANT', field: 'tenantId' });
    // A typed tenant that does not exist is the person's input (400, exit 2), not a refused credential.
    await expect(consentLink(rt, 'nope.onmicrosoft.com')).rejects.toMatchObject({
      code: 'TENANT_NOT_FOUND',
      kind: 'invalid-input',
      field: 'tenant',
      message: expect.stringContaining('(AADSTS90002)'),
      detail: { upstreamCode: 'AADSTS90002' },
    });
  });

  it('handles consent granted, cancelled, declined (AADSTS65004), and a tampered or expired state', async () => {
    emulator.control.setConsentBehavior(t2.id, 'deny');
    const denied = await consent((await consentLink(rt, t2.id)).url);
    expect(denied.body).toMatch(/Consent was cancelled/);
    emulator.control.setConsentBehavior(t2.id, 'consent_required');
    const declined = await consent((await consentLink(rt, t2.id)).url);
    expect(declined.body).toMatch(/declined \(AADSTS65004\)/);
    expect(declined.body).toMatch(/Global Administrator/);

    const link = await consentLink(rt, t1.id);
    const tampered = link.url.replace(/state=([^&]+)/, (_m, s: string) => `state=${s.slice(0, -3)}abc`);
    expect(await consent(tampered)).toMatchObject({ status: 400, body: expect.stringMatching(/not valid/) });
    const expired = link.url.replace(/state=([^&]+)/, `state=${signState(rt.kek, { tid: t1.id }, 60, Date.now() - 3_600_000)}`);
    expect(await consent(expired)).toMatchObject({ status: 400, body: expect.stringMatching(/expired/) });

    const granted = await consent(link.url);
    expect(granted.status).toBe(200);
    expect(granted.body).toMatch(/Consent granted/);
    expect(granted.body).toMatch(/Enterprise applications/);
    expect(granted.body).toMatch(/proved that you administer it/);
  });

  it('says exactly when the Application ID or another id is given instead of the Object ID, then creates the integration', async () => {
    await expect(addManagedAppIntegration(rt, { tenantId: t1.id, spObjectId: managed.appId })).rejects.toMatchObject({
      code: 'APPLICATION_ID_GIVEN',
      field: 'servicePrincipalObjectId',
      remediation: expect.stringMatching(/Enterprise applications/),
    });
    await expect(addManagedAppIntegration(rt, { tenantId: t1.id, spObjectId: randomUUID() })).rejects.toMatchObject({ code: 'OBJECT_ID_MISMATCH' });
    const sp = t1.apps.find((a) => a.appId === managed.appId)!;
    expect(sp.servicePrincipalObjectId).not.toBe(managed.appId);
    const { integration, report } = await addManagedAppIntegration(rt, {
      tenantId: t1.id,
      spObjectId: sp.servicePrincipalObjectId,
      primaryDomain: t1.domains[0],
      name: 'Fabrikam',
    });
    expect(report).toMatchObject({ verified: true, permissionList: 'quick', servicePrincipalObjectId: sp.servicePrincipalObjectId });
    expect(report.managementApp.registered).toBe(false);
    const steps = setupSteps(integration, report);
    expect(steps.map((s) => [s.order, s.state])).toEqual([
      [1, 'done'],
      [2, 'missing'],
      [3, 'done'],
      [4, 'missing'],
      // The managed app's consent carries Tenant.Read.All (the seed's list): Power BI refuses its read-only admin APIs.
      [5, 'missing'],
      [6, 'info'],
    ]);
    expect(steps[1]!.fix).toMatch(/New-PowerAppManagementApp in PowerShell/);
    expect(setupSteps(integration, report, undefined, actionOf)[1]!.fix).toContain(`run \`vigil register-management-app --integration ${integration.id}\``);
    expect(steps[4]!.fix).toMatch(/^Remove Tenant\.Read\.All/);
  });

  it('registration: MFA blocks the password grant, a user without the platform role is refused, the device code registers', async () => {
    const accounts = tenantAccounts(t1);
    const base = { tenantId: t1.id, applicationId: managed.appId };
    await expect(
      registerManagementApp(rt, { ...base, signIn: { kind: 'password', username: accounts.mfaUser!.userPrincipalName, password: accounts.mfaUser!.password } }),
    ).rejects.toMatchObject({
      code: 'AADSTS50076',
      message: expect.stringMatching(/Multi-factor authentication or Conditional Access/),
      remediation: expect.stringMatching(/device-code/),
    });
    await expect(
      registerManagementApp(rt, {
        ...base,
        signIn: { kind: 'password', username: accounts.ordinaryUser!.userPrincipalName, password: accounts.ordinaryUser!.password },
      }),
    ).rejects.toMatchObject({
      code: 'ADMIN_ROLE_MISSING',
      remediation: expect.stringMatching(/Power Platform Administrator/),
    });
    emulator.control.setDeviceCodeAutoApprove(t1.id, accounts.powerPlatformAdmin!.userPrincipalName);
    const prompts: string[] = [];
    const result = await registerManagementApp(rt, { ...base, signIn: { kind: 'device-code', prompt: (m) => prompts.push(m) } });
    expect(prompts[0]).toMatch(/enter the code/i);
    expect(result).toMatchObject({ registered: true, applicationId: managed.appId, registeredBy: accounts.powerPlatformAdmin!.userPrincipalName });
  });

  it('grants System Administrator per environment and reports an environment that refuses the role', async () => {
    const dataverseEnvs = t1.environments.filter((e) => e.dataverse);
    const refusing = dataverseEnvs[1]!;
    emulator.control.setEnvironmentFlags(t1.id, refusing.name, { refuseAddAppUser: true, refuseRoleAssignment: true });
    const results = await grantEnvironmentAccess(rt, 'Fabrikam');
    expect(results.filter((r) => r.result === 'no-dataverse')).toHaveLength(t1.environments.length - dataverseEnvs.length);
    const failed = results.find((r) => r.environmentId === refusing.name)!;
    expect(failed).toMatchObject({ result: 'failed', fix: expect.stringMatching(/Application users/) });
    expect(results.filter((r) => r.result === 'granted' || r.result === 'already-granted')).toHaveLength(dataverseEnvs.length - 1);
    const { integration, report } = await verifyStoredIntegration(rt, 'Fabrikam');
    const steps = setupSteps(integration, report);
    expect(steps[1]!.state).toBe('done');
    expect(steps[3]).toMatchObject({ state: 'incomplete', observed: expect.stringMatching(/not readable/) });
  });

  it('a permission revoked after consent degrades that capability to "not evaluated" without failing the collection', async () => {
    emulator.control.revokeServicePrincipalRoles(t1.id, managed.appId, { resource: 'https://graph.microsoft.com', roles: ['User.Read.All'] });
    const { integration, report } = await verifyStoredIntegration(rt, 'Fabrikam');
    expect(report.missingPermissions).toContainEqual(expect.objectContaining({ permission: 'User.Read.All' }));
    expect(setupSteps(integration, report)[0]).toMatchObject({ state: 'incomplete', fix: expect.stringMatching(/revoked/) });
    const run = await collectIntegration(rt, 'Fabrikam');
    expect(run.status).toBe('partial');
    expect(run.errors).toContainEqual(expect.objectContaining({ stream: 'users', code: 'MISSING_PERMISSION' }));
    expect(run.streams.agents.records).toBeGreaterThan(0);
  });

  it('canary: no password, secret or token in the emulator request log, Vigil logs, or the database', async () => {
    expect(emulator.control.requestLogLeaks()).toEqual([]);
    const accounts = tenantAccounts(t1);
    const canaries = [managed.clientSecret, accounts.mfaUser!.password, accounts.ordinaryUser!.password, accounts.powerPlatformAdmin!.password];
    const dir = rt.config.dataDir;
    const files = [
      ...readdirSync(dir)
        .filter((f) => f.startsWith('vigil.db'))
        .map((f) => join(dir, f)),
      join(dir, 'logs', 'vigil.log'),
    ];
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const c of canaries) expect(bytes.includes(Buffer.from(c)), `${c.slice(0, 3)}… in ${f}`).toBe(false);
      expect(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/.test(bytes.toString('latin1')), `a JWT in ${f}`).toBe(false);
    }
  });
});
