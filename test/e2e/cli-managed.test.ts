import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { generateManagedApp, generateTenant, startEmulator, type RunningEmulator } from '../../emulator/index.ts';
import { tenantAccounts } from '../../emulator/generate.ts';
import { TEST_ENV } from './harness.ts';
import { CLI, freePort, vigil } from '../support/process.ts';
import { browse } from '../support/browser.ts';

describe('Mode B from the CLI alone', () => {
  let emulator: RunningEmulator;
  afterAll(async () => emulator?.close());

  it('consent link → browser consent → serve callback → registration → integration → environment access → setup doctor', async () => {
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/consent/callback`;
    const tenant = generateTenant({ seed: 'cli-mode-b', sizes: { users: 12, guests: 1, groups: 2, environments: 3, agents: 5 } });
    const managed = generateManagedApp({ seed: 'cli-operator', redirectUris: [redirect] });
    emulator = await startEmulator({ tenants: [tenant], managedApps: [managed] });
    const env = {
      VIGIL_ENDPOINTS_FILE: emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-'))),
      VIGIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'vigil-cli-b-')),
      VIGIL_MANAGED_APP_CLIENT_ID: managed.appId,
      VIGIL_MANAGED_APP_CLIENT_SECRET: managed.clientSecret,
      VIGIL_CONSENT_REDIRECT_URI: redirect,
      VIGIL_PORT: String(port),
    };

    const serve = spawn(process.execPath, [...CLI, 'serve'], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let served = '';
    serve.stdout.on('data', (d) => (served += d));
    const serveExit = new Promise((r) => serve.once('exit', r));
    try {
      for (let i = 0; i < 300 && !served.includes('listening'); i++) await new Promise((r) => setTimeout(r, 100));

      // 1. Consent: the operator prints the link; the administrator's browser follows it and lands on Vigil's page.
      const link = await vigil(['consent-url', '--tenant', tenant.domains[0]!, '--tenant-id', tenant.id, '--json'], env);
      expect(link.code, link.stderr).toBe(0);
      const { url } = JSON.parse(link.stdout) as { url: string };
      // consent → Vigil's callback → the administrator's OpenID Connect sign-in → Vigil's callback binds the tenant.
      const { final } = await browse(url, { dispatcher: new Agent({ connect: { ca: emulator.caPem } }) });
      expect(final.status).toBe(200);
      expect(final.body).toMatch(/Consent granted/);
      const bound = await vigil(['tenants', 'list', '--json'], env);
      expect(JSON.parse(bound.stdout)).toEqual([expect.objectContaining({ tenantId: tenant.id, organization: 'Default', method: 'oidc-admin' })]);

      // 2. Registration by a Power Platform administrator (password grant from stdin).
      const ppa = tenantAccounts(tenant).powerPlatformAdmin!;
      const registered = await vigil(
        ['register-management-app', '--tenant-id', tenant.id, '--username', ppa.userPrincipalName, '--password-stdin', '--json'],
        env,
        ppa.password,
      );
      expect(registered.code, registered.stderr).toBe(0);
      expect(JSON.parse(registered.stdout)).toMatchObject({ registered: true, applicationId: managed.appId });

      // 3. The integration, with the service principal's Object ID from Enterprise applications.
      const objectId = tenant.apps.find((a) => a.appId === managed.appId)!.servicePrincipalObjectId;
      const wrong = await vigil(['integrations', 'add', '--mode', 'managed-app', '--tenant-id', tenant.id, '--sp-object-id', managed.appId], env);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/Application ID of Vigil's managed application, not the Object ID/);
      const added = await vigil(
        ['integrations', 'add', '--mode', 'managed-app', '--tenant-id', tenant.id, '--sp-object-id', objectId, '--name', 'B', '--json'],
        env,
      );
      expect(added.code, added.stderr).toBe(0);

      // 4. System Administrator everywhere, then the doctor says every step is done but Power BI: the managed app's
      //    consent carries Tenant.Read.All (the seed's list), which the read-only admin APIs refuse (Microsoft documents it).
      const granted = await vigil(['environments', 'grant-access', '--integration', 'B', '--json'], env);
      expect(granted.code, granted.stderr).toBe(0);
      expect((JSON.parse(granted.stdout) as { result: string }[]).every((r) => r.result !== 'failed')).toBe(true);
      const doctor = await vigil(['integrations', 'verify', 'B', '--json'], env);
      expect(doctor.code, doctor.stderr).toBe(0);
      const { steps } = JSON.parse(doctor.stdout) as { steps: { order: number; state: string }[] };
      expect(steps.map((s) => s.state)).toEqual(['done', 'done', 'done', 'done', 'missing', 'info']);
      const text = await vigil(['integrations', 'verify', 'B'], env);
      expect(text.stdout).toMatch(/4\. ok +Give the application System Administrator in every environment/);
      expect(text.stdout).toMatch(
        /5\. MISSING Power BI: the tenant setting "Service principals can access read-only admin APIs" covers the application[\s\S]*fix: Remove Tenant\.Read\.All/,
      );

      // 5. The operator moves the tenant explicitly (method "operator"); an unknown organization is refused.
      expect((await vigil(['tenants', 'bind', '--tenant-id', tenant.id, '--organization', 'Nobody'], env)).stderr).toMatch(/No organization named "Nobody"/);
      const rebound = await vigil(['tenants', 'bind', '--tenant-id', tenant.id, '--organization', 'Default', '--json'], env);
      expect(JSON.parse(rebound.stdout)).toMatchObject({ tenantId: tenant.id, organization: 'Default', method: 'operator' });
      expect((await vigil(['tenants', 'unbind', '--tenant-id', tenant.id], env)).code).toBe(0);
      const unbound = await vigil(['integrations', 'add', '--mode', 'managed-app', '--tenant-id', tenant.id, '--sp-object-id', objectId, '--name', 'B2'], env);
      expect(unbound.stderr).toMatch(/has not proven that it administers tenant/);
    } finally {
      serve.kill('SIGTERM');
      await serveExit;
    }
  }, 120_000);
});
