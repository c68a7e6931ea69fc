import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { agentComponentsGroundTruth, componentKind, startEmulator, type DataverseOrg, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let readable: DataverseOrg;
let unreadable: DataverseOrg;

beforeAll(async () => {
  tenant = generateTenant({ seed: 'components-routes', sizes: { environments: 3, agents: 10, users: 20 } });
  const app = tenant.apps[0]!;
  readable = tenant.environments.find((e) => e.dataverse?.appUsers.some((a) => a.appId === app.appId))!.dataverse!;
  unreadable = tenant.environments.find((e) => e.dataverse && !e.dataverse.appUsers.some((a) => a.appId === app.appId))!.dataverse!;
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});
afterAll(async () => {
  await http.close();
  await emu.close();
});

const dvToken = (org: DataverseOrg) => http.appToken(tenant, `${emu.url}/dataverse/${org.uniqueName}`);

describe('Dataverse botcomponents', () => {
  it('pages every component of the org with $select, and filters by parent bot', async () => {
    const token = await dvToken(readable);
    const seen: string[] = [];
    let url: string | undefined = `/dataverse/${readable.uniqueName}/api/data/v9.2/botcomponents?$select=botcomponentid,componenttype,data,_parentbotid_value`;
    while (url) {
      const res = await http.get(url, { token, headers: { prefer: 'odata.maxpagesize=7' } });
      expect(res.status).toBe(200);
      for (const c of res.json.value as Record<string, unknown>[]) {
        expect(Object.keys(c)).toEqual(['@odata.etag', 'botcomponentid', 'componenttype', 'data', '_parentbotid_value']);
        seen.push(c.botcomponentid as string);
      }
      url = res.json['@odata.nextLink'] as string | undefined;
    }
    expect(seen).toEqual(readable.botcomponents!.map((c) => c.botcomponentid));
    const bot = readable.bots[0]!;
    const filtered = await http.get(
      `/dataverse/${readable.uniqueName}/api/data/v9.2/botcomponents?$select=botcomponentid&$filter=_parentbotid_value eq ${bot.botid}`,
      { token },
    );
    expect((filtered.json.value as unknown[]).length).toBe(readable.botcomponents!.filter((c) => c._parentbotid_value === bot.botid).length);
  });

  it('refuses an org where the app is not an application user', async () => {
    const res = await http.get(`/dataverse/${unreadable.uniqueName}/api/data/v9.2/botcomponents?$select=botcomponentid`, { token: await dvToken(unreadable) });
    expect(res.status).toBe(403);
  });

  it('generates a realistic mix, and the ground truth counts readable environments only', () => {
    const truth = agentComponentsGroundTruth(tenant);
    const all = tenant.environments.flatMap((e) => e.dataverse?.botcomponents ?? []);
    expect(truth.components + truth.componentsUnreadable).toBe(all.length);
    expect(Object.values(truth.byKind).reduce((a, b) => a + b, 0)).toBe(truth.components);
    expect(new Set(all.map(componentKind))).toEqual(new Set(['topic', 'instructions', 'knowledge', 'action', 'mcp', 'variable', 'agent']));
    // One credential in an agent's instructions, one in a child agent's.
    expect(truth.plantedSecrets).toHaveLength(2);
    // Child and connected agents have the shape of the real solution exports (test/fixtures/real/powerbi-agents/).
    const agents = all.filter((c) => componentKind(c) === 'agent');
    expect(agents.every((c) => c.componenttype === 9)).toBe(true);
    const child = agents.find((c) => c.data?.startsWith('kind: AgentDialog'))!;
    expect(parseYaml(child.data!)).toMatchObject({
      kind: 'AgentDialog',
      beginDialog: { kind: 'OnToolSelected', id: 'main' },
      settings: { instructions: expect.any(String) },
      inputType: {},
      outputType: {},
    });
    expect(child.schemaname).toMatch(/\.agent\.Agent_/);
  });
});
