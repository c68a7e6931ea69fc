import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { foundryGroundTruth, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let token: string;

beforeAll(async () => {
  tenant = generateTenant({ seed: 'arm-routes', sizes: { environments: 1, agents: 2, users: 10, foundryAccounts: 6 } });
  tenant.azure!.pageSize = 2;
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  const app = tenant.apps[0]!;
  token = (await http.token({ tenant: tenant.id, clientId: app.appId, clientSecret: app.secrets[0]!.value, scope: 'https://management.azure.com/.default' }))
    .json.access_token as string;
});
afterAll(async () => {
  await http.close();
  await emu.close();
});

const all = async (path: string) => (await http.pages(path, { token, link: 'nextLink' })).items;

describe('ARM Cognitive Services', () => {
  it('lists subscriptions, accounts with nextLink paging, projects and deployments', async () => {
    const subs = await all('/arm/subscriptions?api-version=2022-12-01');
    expect(subs.map((s) => s.subscriptionId)).toEqual(tenant.azure!.subscriptions.map((s) => s.subscriptionId));
    const accounts = (
      await Promise.all(
        subs.map((s) => all(`/arm/subscriptions/${String(s.subscriptionId)}/providers/Microsoft.CognitiveServices/accounts?api-version=2025-06-01`)),
      )
    ).flat();
    expect(accounts).toHaveLength(tenant.azure!.accounts.length);
    const foundry = accounts.filter((a) => a.kind === 'AIServices' || a.kind === 'OpenAI');
    const deployments = (await Promise.all(foundry.map((a) => all(`/arm${String(a.id)}/deployments?api-version=2025-06-01`)))).flat();
    const projects = (await Promise.all(foundry.map((a) => all(`/arm${String(a.id)}/projects?api-version=2025-06-01`)))).flat();
    const truth = foundryGroundTruth(tenant);
    expect(foundry).toHaveLength(truth.accounts);
    expect(deployments).toHaveLength(truth.deployments);
    expect(projects).toHaveLength(truth.projects);
    expect(deployments.filter((d) => !(d.properties as Record<string, unknown>).raiPolicyName)).toHaveLength(truth.deploymentsWithoutContentFilter);
  });

  it('answers ARM error envelopes: missing api-version, 403 AuthorizationFailed, bad audience', async () => {
    const sub = tenant.azure!.subscriptions[0]!.subscriptionId;
    expect((await http.get(`/arm/subscriptions`, { token })).json.error.code).toBe('MissingApiVersionParameter');
    const assignment = tenant.azure!.roleAssignments.find((r) => r.scope === `/subscriptions/${sub}`)!;
    assignment.roleDefinitionName = 'Cost Management Reader';
    try {
      const res = await http.get(`/arm/subscriptions/${sub}/providers/Microsoft.CognitiveServices/accounts?api-version=2025-06-01`, { token });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe('AuthorizationFailed');
      expect(foundryGroundTruth(tenant).forbiddenSubscriptions).toBe(1);
    } finally {
      assignment.roleDefinitionName = 'Reader';
    }
    const res = await http.get('/arm/subscriptions?api-version=2022-12-01', { token: 'not-a-token' });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('InvalidAuthenticationToken');
  });
});
