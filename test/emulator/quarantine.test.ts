import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

/**
 * The emulator's Power Platform API quarantine operations on the wire (quarantine.ts; Learn admin-quarantine-api):
 * paths and api-version, the status body, and who may call.
 */
const PP = 'https://api.powerplatform.com';
const PERMISSION = 'CopilotStudio.AdminActions.Invoke';
let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let base: string;
let env: string;
let bot: string;

beforeAll(async () => {
  tenant = generateTenant({ seed: 'quarantine-wire', sizes: { users: 8, environments: 2, agents: 4 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  const e = tenant.environments.find((x) => (x.dataverse?.bots.length ?? 0) > 0)!;
  env = e.name;
  bot = e.dataverse!.bots[0]!.botid;
  base = `/powerplatform/copilotstudio/environments/${env}/bots/${bot}/api/botQuarantine`;
});
afterAll(async () => {
  await http.close();
  await emu.close();
});

const admin = () => tenant.users.find((u) => (u.directoryRoles ?? []).length > 0)!;
const userToken = async (scp: string | undefined, userId = admin().id, resource = PP) =>
  (await emu.control.mintToken({ tenantId: tenant.id, resource, userId, ...(scp ? { scp } : {}) })).access_token;

describe('Power Platform API: Copilot Studio quarantine', () => {
  it('reads, sets and lifts the quarantine of a bot for an administrator with the delegated permission', async () => {
    const token = await userToken(PERMISSION);
    const first = await http.get(`${base}?api-version=1`, { token });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ isBotQuarantined: false, lastUpdateTimeUtc: expect.any(String) });
    const set = await http.request('POST', `${base}/SetAsQuarantined?api-version=1`, { token });
    expect([set.status, (set.json as { isBotQuarantined: boolean }).isBotQuarantined]).toEqual([200, true]);
    // The admin page's spelling of the status path reads the same state.
    expect((await http.get(`${base}/GetBotQuarantineStatus?api-version=1`, { token })).json).toMatchObject({ isBotQuarantined: true });
    expect(emu.control.botQuarantine(tenant.id, env, bot).isBotQuarantined).toBe(true);
    const lifted = await http.request('POST', `${base}/SetAsUnquarantined?api-version=1`, { token });
    expect(lifted.json).toMatchObject({ isBotQuarantined: false });
  });

  it('refuses without api-version, without a token, for another audience, an app-only token, no permission, no role', async () => {
    const token = await userToken(PERMISSION);
    expect((await http.get(base, { token })).json).toMatchObject({ error: { code: 'MissingApiVersionParameter' } });
    expect((await http.get(`${base}?api-version=1`)).status).toBe(401);
    const bapToken = await userToken(PERMISSION, admin().id, 'https://service.powerapps.com');
    expect((await http.get(`${base}?api-version=1`, { token: bapToken })).json).toMatchObject({ error: { code: 'InvalidAuthenticationTokenAudience' } });
    const app = (await emu.control.mintToken({ tenantId: tenant.id, resource: PP, kind: 'app' })).access_token;
    const appOnly = await http.request('POST', `${base}/SetAsQuarantined?api-version=1`, { token: app });
    expect([appOnly.status, (appOnly.json as { error: { message: string } }).error.message]).toEqual([403, expect.stringMatching(/app-only token/)]);
    const noScp = await http.get(`${base}?api-version=1`, { token: await userToken(undefined) });
    expect([noScp.status, (noScp.json as { error: { message: string } }).error.message]).toEqual([403, expect.stringContaining(PERMISSION)]);
    const ordinary = tenant.users.find((u) => u.userType === 'Member' && !(u.directoryRoles ?? []).length)!;
    const noRole = await http.request('POST', `${base}/SetAsQuarantined?api-version=1`, { token: await userToken(PERMISSION, ordinary.id) });
    expect([noRole.status, (noRole.json as { error: { message: string } }).error.message]).toEqual([
      403,
      expect.stringContaining('Global Administrator, AI Administrator or Power Platform Administrator'),
    ]);
    expect(emu.control.botQuarantine(tenant.id, env, bot).isBotQuarantined).toBe(false);
  });

  it('answers 404 for an unknown environment or bot', async () => {
    const token = await userToken(PERMISSION);
    const noEnv = await http.get(`/powerplatform/copilotstudio/environments/nope/bots/${bot}/api/botQuarantine?api-version=1`, { token });
    expect([noEnv.status, noEnv.json]).toEqual([404, { error: { code: 'EnvironmentNotFound', message: expect.any(String) } }]);
    const noBot = await http.get(`/powerplatform/copilotstudio/environments/${env}/bots/00000000-0000-4000-8000-000000000000/api/botQuarantine?api-version=1`, {
      token,
    });
    expect([noBot.status, (noBot.json as { error: { code: string } }).error.code]).toEqual([404, 'BotNotFound']);
  });
});
