import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantAccounts, type TenantAccounts } from '../../emulator/index.ts';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { apiWorld, connector, signInAs, type ApiWorld, type Session } from './harness.ts';

/**
 * `/api/v1/protection/{integrationId}/containment` (issue 19, "Respond"): an admin starts the quarantine of the agent
 * an alert is about, gets the device code an administrator of the tenant signs in with, and the server, once the code
 * is approved (here through the emulator's control, as the administrator would in the browser), calls the Power
 * Platform API's quarantine operation and records the action with the API caller as its author. Viewers cannot start
 * one, another organization's integration is 404, bad input names its field, and a user without the roles is refused
 * with the roles named.
 */
describe('/api/v1/protection/{integrationId}/containment', () => {
  let w: ApiWorld;
  let accounts: TenantAccounts;
  let integrationId: string;
  let environmentId: string;
  let agentId: string;
  let alertId: string;
  let admin: Session;
  const key = (k: string) => ({ authorization: `Bearer ${k}` });
  const base = () => `/api/v1/protection/${integrationId}/containment`;
  const post = async (headers: Record<string, string>, payload: object, url = base()) => {
    const res = await w.app.inject({ method: 'POST', url, headers, payload });
    return { status: res.statusCode, json: res.json(), body: res.body };
  };
  const list = async (k = w.keys.contosoAdmin) => (await w.app.inject({ url: base(), headers: key(k) })).json().items as Record<string, unknown>[];
  /** Polls the list until the action has ended (the server's sign-in polls every second). */
  const outcome = async (id: string) => {
    for (let i = 0; i < 100; i++) {
      const item = (await list()).find((a) => a.id === id);
      if (item && item.status !== 'awaiting-sign-in') return item;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`action ${id} did not end`);
  };

  beforeAll(async () => {
    w = await apiWorld();
    const tenant = w.tenants.contoso;
    // The integration's app allows public client flows (the device-code grant), as docs/protection.md asks.
    tenant.apps.find((a) => a.appId === tenant.connectorAppId)!.isFallbackPublicClient = true;
    accounts = tenantAccounts(tenant);
    w.emulator.control.setDeviceCodeSettings({ intervalSeconds: 1 });
    const res = await w.app.inject({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: key(w.keys.contosoAdmin),
      payload: { mode: 'customer-app', name: 'contoso', ...connector(tenant) },
    });
    expect(res.statusCode, res.body).toBe(201);
    integrationId = res.json().integration.id as string;
    const env = tenant.environments.find((e) => (e.dataverse?.bots.length ?? 0) > 0)!;
    environmentId = env.name;
    agentId = env.dataverse!.bots[0]!.botid;
    alertId = (
      await raiseAlert(
        w.rt.db,
        {
          integrationId,
          ruleId: 'protection_prompt_injection',
          severity: 'high',
          title: 'Prompt injection blocked',
          dedupeKey: 'c1',
          detail: { agentId, environmentId },
        },
        new Date().toISOString(),
      )
    ).id;
    admin = await signInAs(w.app, 'admin@contoso.test', w.password);
  }, 120_000);
  afterAll(async () => w?.close());

  const asAdmin = () => ({ cookie: admin.cookie, 'x-csrf-token': admin.csrf });

  it('quarantines the agent of an alert once an administrator signs in with the code, and records it with the caller as author', async () => {
    w.emulator.control.setBotQuarantine(w.tenants.contoso.id, environmentId, agentId, false);
    const started = await post(asAdmin(), { action: 'contain', alertId });
    expect(started.status, started.body).toBe(202);
    expect(started.json).toMatchObject({ status: 'awaiting-sign-in', agent: agentId, environment: environmentId, userCode: expect.any(String) });
    expect(started.json.verificationUri).toMatch(/devicelogin/);
    const ttl = Date.parse(started.json.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(10 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    const waiting = (await list()).find((a) => a.id === started.json.id);
    expect(waiting).toMatchObject({ status: 'awaiting-sign-in', userCode: started.json.userCode, alertId, requestedBy: 'admin@contoso.test' });
    expect(w.emulator.control.botQuarantine(w.tenants.contoso.id, environmentId, agentId).isBotQuarantined).toBe(false);
    // A viewer sees the action in flight, not the code that would sign Vigil's call in.
    expect((await list(w.keys.contosoViewer)).find((a) => a.id === started.json.id)).toMatchObject({
      status: 'awaiting-sign-in',
      userCode: null,
      verificationUri: null,
    });

    w.emulator.control.approveDeviceCode(started.json.userCode, accounts.powerPlatformAdmin!.userPrincipalName);
    const done = await outcome(started.json.id);
    expect(done).toMatchObject({
      action: 'contain',
      status: 'succeeded',
      quarantined: true,
      agentId,
      environmentId,
      alertId,
      requestedBy: 'admin@contoso.test',
      signedInAs: accounts.powerPlatformAdmin!.userPrincipalName,
      userCode: null,
      error: null,
    });
    expect(w.emulator.control.botQuarantine(w.tenants.contoso.id, environmentId, agentId).isBotQuarantined).toBe(true);
    const row = await w.rt.db.selectFrom('containment_actions').selectAll().where('id', '=', started.json.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ action: 'contain', outcome: 'succeeded', requested_by: 'admin@contoso.test', alert_id: alertId, quarantined: 1 });

    // Released by an API key, named by ids; the newest action comes first.
    const released = await post(key(w.keys.contosoAdmin), { action: 'release', agentId, environmentId });
    expect(released.status, released.body).toBe(202);
    w.emulator.control.approveDeviceCode(released.json.userCode, accounts.powerPlatformAdmin!.userPrincipalName);
    expect(await outcome(released.json.id)).toMatchObject({ status: 'succeeded', quarantined: false, requestedBy: 'api-key:automation' });
    expect((await list()).slice(0, 2).map((a) => a.id)).toEqual([released.json.id, started.json.id]);
    expect(w.emulator.control.botQuarantine(w.tenants.contoso.id, environmentId, agentId).isBotQuarantined).toBe(false);
  }, 60_000);

  it('a user without an admin role is refused with the roles named and the remediation, and the agent is left as it was', async () => {
    w.emulator.control.setBotQuarantine(w.tenants.contoso.id, environmentId, agentId, false);
    const started = await post(asAdmin(), { action: 'contain', agentId, environmentId });
    expect(started.status, started.body).toBe(202);
    w.emulator.control.approveDeviceCode(started.json.userCode, accounts.ordinaryUser!.userPrincipalName);
    const done = await outcome(started.json.id);
    expect(done).toMatchObject({ status: 'refused', quarantined: null, signedInAs: accounts.ordinaryUser!.userPrincipalName });
    const error = done.error as { code: string; message: string; remediation: string };
    expect(error.code).toBe('CONTAINMENT_NOT_AVAILABLE');
    expect(error.message).toMatch(/holds none of the roles Global Administrator, AI Administrator or Power Platform Administrator/);
    expect(error.remediation).toMatch(/Power Platform Administrator is the least privileged/);
    expect(w.emulator.control.botQuarantine(w.tenants.contoso.id, environmentId, agentId).isBotQuarantined).toBe(false);
  }, 60_000);

  it('never returns or records a token', async () => {
    const rows = await w.rt.db.selectFrom('containment_actions').selectAll().execute();
    const text = JSON.stringify({ rows, list: await list() });
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
  });

  it('only admins start an action; another organization gets 404 as for an integration that never existed', async () => {
    const viewer = await post(key(w.keys.contosoViewer), { action: 'contain', alertId });
    expect([viewer.status, viewer.json.error.code]).toEqual([403, 'FORBIDDEN_ROLE']);
    const other = await post(key(w.keys.fabrikamAdmin), { action: 'contain', alertId });
    expect([other.status, other.json.error.code]).toEqual([404, 'INTEGRATION_NOT_FOUND']);
    const never = await post(key(w.keys.contosoAdmin), { action: 'contain', alertId }, '/api/v1/protection/int_doesnotexist/containment');
    expect([never.status, never.json.error.code]).toEqual([404, 'INTEGRATION_NOT_FOUND']);
    const read = await w.app.inject({ url: base(), headers: key(w.keys.fabrikamAdmin) });
    expect([read.statusCode, read.json().error.code]).toEqual([404, 'INTEGRATION_NOT_FOUND']);
  });

  it('bad input is refused naming the field, before any sign-in starts', async () => {
    const cases: [object, string, string][] = [
      [{ action: 'delete', alertId }, 'INVALID_INPUT', 'action'],
      [{ action: 'contain', agentId: 'HR bot', environmentId }, 'INVALID_INPUT', 'agentId'],
      [{ action: 'contain', agentId, environmentId: 'not an environment' }, 'INVALID_INPUT', 'environmentId'],
      [{ action: 'contain' }, 'INVALID_INPUT', 'agentId'],
      [{ action: 'contain', alertId: 'alr_doesnotexist' }, 'ALERT_NOT_FOUND', 'alertId'],
      [{ action: 'contain', stepId: 'stp_doesnotexist' }, 'AGENT_STEP_NOT_FOUND', 'stepId'],
    ];
    const before = (await list()).length;
    for (const [payload, code, field] of cases) {
      const res = await post(key(w.keys.contosoAdmin), payload);
      expect([res.status, res.json.error.code, res.json.error.field], JSON.stringify(payload)).toEqual([code === 'INVALID_INPUT' ? 400 : 404, code, field]);
    }
    expect((await list()).length).toBe(before);
  });
});
