import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, transcriptsGroundTruth, type DataverseOrg, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let withTable: DataverseOrg;
let withoutTable: DataverseOrg;

beforeAll(async () => {
  tenant = generateTenant({ seed: 'transcripts-routes', sizes: { environments: 5, agents: 10, users: 20 }, plantedTranscripts: true });
  const app = tenant.apps[0]!;
  const readable = tenant.environments.filter((e) => e.dataverse?.appUsers.some((a) => a.appId === app.appId)).map((e) => e.dataverse!);
  withTable = readable.find((o) => o.conversationtranscripts)!;
  withoutTable = readable.find((o) => !o.conversationtranscripts)!;
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});
afterAll(async () => {
  await http.close();
  await emu.close();
});

const dvToken = (org: DataverseOrg) => http.appToken(tenant, `${emu.url}/dataverse/${org.uniqueName}`);
const path = (org: DataverseOrg, query: string) => `/dataverse/${org.uniqueName}/api/data/v9.2/conversationtranscripts?${query}`;

describe('Dataverse conversationtranscripts', () => {
  it('pages every transcript with $select, keeping the modifiedon filter in the next links', async () => {
    const token = await dvToken(withTable);
    const rows = withTable.conversationtranscripts!;
    const bound = [...rows.map((r) => r.modifiedon)].sort()[Math.floor(rows.length / 2)]!;
    const seen: string[] = [];
    let url: string | undefined = path(
      withTable,
      `$select=conversationtranscriptid,content,modifiedon&$filter=${encodeURIComponent(`modifiedon gt ${bound}`)}`,
    );
    while (url) {
      const res = await http.get(url, { token, headers: { prefer: 'odata.maxpagesize=2' } });
      expect(res.status).toBe(200);
      for (const t of res.json.value as Record<string, unknown>[]) seen.push(t.conversationtranscriptid as string);
      url = res.json['@odata.nextLink'] as string | undefined;
      if (url) expect(decodeURIComponent(url)).toContain(`modifiedon gt ${bound}`);
    }
    // Strictly after the bound: the transcript modified at the bound itself is not returned (near miss).
    expect(seen.sort()).toEqual(
      rows
        .filter((r) => Date.parse(r.modifiedon) > Date.parse(bound))
        .map((r) => r.conversationtranscriptid)
        .sort(),
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(rows.length);
  });

  it('answers 404 0x8006088a where the org has no conversationtranscript table', async () => {
    const res = await http.get(path(withoutTable, '$select=conversationtranscriptid'), { token: await dvToken(withoutTable) });
    expect(res.status).toBe(404);
    expect((res.json.error as { code: string }).code).toBe('0x8006088a');
  });

  it('serves content as {"activities": […]} with Unix-second timestamps and numeric roles, and plants the asked cases', () => {
    const t = withTable.conversationtranscripts![0]!;
    const acts = (JSON.parse(t.content) as { activities: { type: string; timestamp: unknown; from: { role: unknown } }[] }).activities;
    expect(acts[0]!.type).toBe('trace');
    expect(acts.every((a) => typeof a.timestamp === 'number' && [0, 1].includes(a.from.role as number))).toBe(true);
    expect(t.name.endsWith(`_${t._bot_conversationtranscriptid_value}`)).toBe(true);
    const truth = transcriptsGroundTruth(tenant);
    expect(Object.keys(truth.planted).sort()).toEqual(['benign', 'jailbreak', 'personal', 'secret', 'toolInjection']);
    expect(transcriptsGroundTruth(generateTenant({ seed: 'transcripts-routes', sizes: { environments: 5, agents: 10, users: 20 } })).planted).toEqual({});
  });
});
