import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { agentComponentFacts, type BotComponent } from '../../emulator/agentcomponents.ts';
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

  it('serves a component created or changed by the audit feed’s records with those dates, and the others as stored', async () => {
    const token = await dvToken(readable);
    const read = async () =>
      new Map(
        (
          (await http.get(`/dataverse/${readable.uniqueName}/api/data/v9.2/botcomponents?$select=botcomponentid,createdon,modifiedon`, { token })).json
            .value as Record<string, string>[]
        ).map((c) => [c.botcomponentid!, c]),
      );
    const stored = new Map(readable.botcomponents!.map((c) => [c.botcomponentid, c]));
    // Two days on from the generation: every stored date is older than the feed's records.
    const T = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 48 * 3_600_000;
    emu.control.configureFeed(tenant.id, { recordsPerHour: 3000, kindMix: { powerPlatformAdmin: 40 }, since: new Date(T - 24 * 3_600_000).toISOString() });
    try {
      // Before the feed's first record: as stored.
      emu.control.setClock(new Date(T - 25 * 3_600_000).toISOString());
      const before = await read();
      for (const [id, c] of before) expect([c.createdon, c.modifiedon]).toEqual([stored.get(id)!.createdon, stored.get(id)!.modifiedon]);
      emu.control.setClock(new Date(T).toISOString());
      const served = await read();
      const moved = [...served.values()].filter((c) => c.modifiedon !== stored.get(c.botcomponentid!)!.modifiedon);
      expect(moved.length).toBeGreaterThan(0);
      expect(moved.length).toBeLessThan(served.size);
      for (const c of moved) {
        const t = Date.parse(c.modifiedon!);
        expect(t).toBeGreaterThanOrEqual(T - 24 * 3_600_000);
        expect(t).toBeLessThanOrEqual(T);
        expect(Date.parse(c.createdon!)).toBeLessThanOrEqual(t);
        expect(c['@odata.etag']).not.toBe(before.get(c.botcomponentid!)!['@odata.etag']);
      }
    } finally {
      emu.control.setClock(null);
      emu.control.configureFeed(tenant.id, { since: null, recordsPerHour: 120, kindMix: { powerPlatformAdmin: 5 } });
    }
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

describe('agentComponentFacts (the ground truth of agent posture)', () => {
  const component = (componenttype: number, data: string): BotComponent => ({
    botcomponentid: 'c',
    name: 'c',
    schemaname: 'cr1_a.c',
    componenttype,
    category: null,
    description: null,
    data,
    content: null,
    _parentbotid_value: 'b',
    _parentbotcomponentid_value: null,
    reusepolicy: 0,
    statecode: 0,
    statuscode: 1,
    createdon: '2026-01-01T00:00:00Z',
    modifiedon: '2026-01-01T00:00:00Z',
  });
  const instructions = component(15, 'kind: GptComponentMetadata\ninstructions: "Be nice"\n');
  const topic = (url: string) =>
    component(9, ['kind: AdaptiveDialog', 'beginDialog:', '  actions:', '    - kind: HttpRequestAction', `      url: ${url}`, ''].join('\n'));
  const tool = (mode: string, operationId: string, mcp = false) =>
    component(
      9,
      [
        'kind: TaskDialog',
        'action:',
        `  kind: ${mcp ? 'InvokeExternalAgentTaskAction' : 'InvokeConnectorTaskAction'}`,
        '  connectionProperties:',
        `    mode: ${mode}`,
        `  operationId: ${operationId}`,
        ...(mcp ? ['  operationDetails:', '    kind: ModelContextProtocolMetadata'] : []),
        '',
      ].join('\n'),
    );

  it('names plain-HTTP or odd-port calls, maker tools, MCP tools, mail senders and missing instructions', () => {
    expect(agentComponentFacts([topic('http://webhook.site/v1/items'), tool('Maker', 'SendEmailV2'), tool('Invoker', 'InvokeMCP', true)])).toEqual([
      'insecureHttp',
      'makerCredentialTool',
      'mcpTool',
      'noInstructions',
      'sendsEmail',
    ]);
    expect(agentComponentFacts([instructions, topic('https://api.fabrikam-erp.com:8443/v1/items')])).toEqual(['insecureHttp']);
  });

  it('near misses: HTTPS on the default port, URLs built at run time, tools on the user’s connection that do not send mail', () => {
    expect(
      agentComponentFacts([instructions, topic('https://hooks.slack.com/v1/items'), topic('="https://" & Global.ApiHost'), tool('Invoker', 'GetItems')]),
    ).toEqual([]);
  });
});
