import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { powerPlatformGroundTruth, startEmulator, STANDARD_CONNECTORS, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;

const PA = '/powerapps/providers/Microsoft.PowerApps';
const FLOW = '/flow/providers/Microsoft.ProcessSimple/scopes/admin/environments';
/** A recorded real response of test/fixtures/real/dlp/ (see SOURCES.md there). */
const readRealJson = (file: string): unknown => JSON.parse(readFileSync(new URL(`../fixtures/real/dlp/${file}`, import.meta.url), 'utf8'));

beforeAll(async () => {
  tenant = generateTenant({
    seed: 'pp-routes',
    managementApp: false,
    sizes: { environments: 3, agents: 4, apps: 12, flows: 12, connectors: 3, connections: 12 },
  });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const appToken = (resource: string) => http.appToken(tenant, resource);

const env = () => tenant.environments[0]!.name;
const appsPath = (e = env()) => `${PA}/scopes/admin/environments/${e}/apps?api-version=2023-06-01`;

const allPages = async (path: string, token: string) => {
  const r = await http.pages(path, { token, link: 'nextLink' });
  return { items: r.items, pages: r.pages.length };
};

describe('Power Platform inventory routes', () => {
  it('answer 403 "does not have permission to access the path" to an unregistered application, then serve once it is registered', async () => {
    const pa = await appToken('https://service.powerapps.com');
    const flow = await appToken('https://service.flow.microsoft.com');
    const paths: [string, string, 'GET' | 'POST'][] = [
      [appsPath(), pa, 'GET'],
      [`${PA}/scopes/admin/environments/${env()}/connections?api-version=2016-11-01`, pa, 'GET'],
      [`${PA}/apis?api-version=2019-05-01&$filter=environment eq '${env()}'`, pa, 'GET'],
      [`${FLOW}/${env()}/v2/flows?api-version=2016-11-01`, flow, 'GET'],
      ['/bap/providers/PowerPlatform.Governance/v2/policies', pa, 'GET'],
      ['/bap/providers/Microsoft.BusinessAppPlatform/listTenantSettings?api-version=2020-10-01', pa, 'POST'],
      [`/bap/providers/PowerPlatform.Governance/v1/tenants/${tenant.id}/tenantIsolationPolicy`, pa, 'GET'],
    ];
    for (const [path, token, method] of paths) {
      const res = await http.request(method, path, { token });
      expect(res.status, path).toBe(403);
      expect(String((res.json.error as { message: string }).message)).toContain('does not have permission to access the path');
    }
    tenant.apps[0]!.isManagementApp = true;
    try {
      for (const [path, token, method] of paths) expect((await http.request(method, path, { token })).status, path).toBe(200);
    } finally {
      tenant.apps[0]!.isManagementApp = false;
    }
  });

  describe('once registered', () => {
    let pa: string;
    let flow: string;
    beforeAll(async () => {
      tenant.apps[0]!.isManagementApp = true;
      pa = await appToken('https://service.powerapps.com');
      flow = await appToken('https://service.flow.microsoft.com');
    });
    afterAll(() => {
      tenant.apps[0]!.isManagementApp = false;
      delete tenant.powerPlatform!.pageSize;
    });

    it('require api-version on the Power Apps and flow lists and a token for the right audience', async () => {
      const bare = await http.get(`${PA}/scopes/admin/environments/${env()}/apps`, { token: pa });
      expect(bare.status).toBe(400);
      expect((bare.json.error as { code: string }).code).toBe('MissingApiVersionParameter');
      expect((await http.get(`${FLOW}/${env()}/v2/flows`, { token: flow })).status).toBe(400);
      expect((await http.get(`${FLOW}/${env()}/v2/flows?api-version=2016-11-01`, { token: pa })).status).toBe(401);
      expect((await http.get(appsPath('00000000-0000-4000-8000-000000000000'), { token: pa })).status).toBe(404);
    });

    it('page every list with nextLink and $skiptoken, and serve each environment exactly its objects', async () => {
      tenant.powerPlatform!.pageSize = 2;
      const pp = tenant.powerPlatform!;
      let apps = 0;
      let flows = 0;
      for (const e of tenant.environments) {
        const a = await allPages(`${appsPath(e.name)}&$expand=permissions`, pa);
        expect(a.items.map((x) => x.name).sort()).toEqual(
          pp.apps
            .filter((x) => x.environment === e.name)
            .map((x) => x.name)
            .sort(),
        );
        if (a.items.length > 2) expect(a.pages).toBeGreaterThan(1);
        apps += a.items.length;
        const f = await allPages(`${FLOW}/${e.name}/v2/flows?api-version=2016-11-01`, flow);
        expect(f.items.map((x) => x.name).sort()).toEqual(
          pp.flows
            .filter((x) => x.environment === e.name)
            .map((x) => x.name)
            .sort(),
        );
        flows += f.items.length;
        const c = await allPages(`${PA}/apis?api-version=2019-05-01&$filter=environment eq '${e.name}'`, pa);
        expect(c.items.length).toBe(STANDARD_CONNECTORS.length + pp.connectors.filter((x) => x.environment === e.name).length);
      }
      const truth = powerPlatformGroundTruth(tenant);
      expect(apps).toBe(truth.powerApps);
      expect(flows).toBe(truth.flows);
      const bad = await http.get(`${appsPath()}&$skiptoken=garbage`, { token: pa });
      expect(bad.status).toBe(400);
    });

    it('show apps shared with everyone as a Tenant principal, flows without URLs in the list and with them in the definition', async () => {
      delete tenant.powerPlatform!.pageSize;
      const pp = tenant.powerPlatform!;
      const shared = pp.apps.find((a) => a.sharedWithTenant)!;
      const list = await allPages(`${appsPath(shared.environment)}&$expand=permissions`, pa);
      const app = list.items.find((a) => a.name === shared.name)!;
      expect(app.appType).toMatch(/App$/);
      const props = app.properties as Record<string, unknown>;
      expect(props.sharedUsersCount).toBe(shared.sharedUsers.length);
      expect((props.permissions as { properties: { principal: { type: string } } }[]).some((p) => p.properties.principal.type === 'Tenant')).toBe(true);
      const perms = await http.get(`${PA}/scopes/admin/environments/${shared.environment}/apps/${shared.name}/permissions?api-version=2023-06-01`, {
        token: pa,
      });
      expect(perms.json.value).toEqual(props.permissions);
      const plain = await allPages(appsPath(shared.environment), pa);
      expect((plain.items[0]!.properties as Record<string, unknown>).permissions).toBeUndefined();

      const httpFlow = pp.flows.find((f) => f.actions.some((a) => a.type === 'Http' && a.uri))!;
      const flows = await allPages(`${FLOW}/${httpFlow.environment}/v2/flows?api-version=2016-11-01`, flow);
      const listed = flows.items.find((f) => f.name === httpFlow.name)!;
      expect(JSON.stringify(listed)).not.toContain('https://');
      const one = await http.get(`${FLOW}/${httpFlow.environment}/flows/${httpFlow.name}?api-version=2016-11-01`, { token: flow });
      const uri = httpFlow.actions.find((a) => a.type === 'Http')!.uri!;
      expect(JSON.stringify((one.json.properties as Record<string, unknown>).definition)).toContain(uri);
    });

    it('serve connections with creator and permissions, DLP policies, tenant settings and the isolation policy', async () => {
      const pp = tenant.powerPlatform!;
      const c = pp.connections[0]!;
      const list = await allPages(`${PA}/scopes/admin/environments/${c.environment}/connections?api-version=2016-11-01`, pa);
      const got = list.items.find((x) => x.name === c.name)!;
      const props = got.properties as Record<string, unknown>;
      expect(props.apiId).toBe(`/providers/Microsoft.PowerApps/apis/${c.connector}`);
      expect((props.createdBy as { id: string }).id).toBe(c.createdById);
      expect(Array.isArray(props.permissions)).toBe(true);

      // The list carries no connector groups, the single policy does — with the keys of the real recorded answers
      // (test/fixtures/real/dlp: TF dlp_policy fixtures), built-in HTTP connectors unprefixed.
      const realList = readRealJson('tf-list-policies.json') as { value: { policyDefinition: Record<string, unknown> }[] };
      const realOne = readRealJson('tf-get-policy-00000002.json') as { policyDefinition: Record<string, unknown> };
      const dlp = await http.get('/bap/providers/PowerPlatform.Governance/v2/policies', { token: pa });
      expect((dlp.json.value as unknown[]).length).toBe(pp.dlpPolicies.length);
      const items = dlp.json.value as Record<string, unknown>[];
      for (const item of items) {
        expect(Object.keys(item)).toEqual(['policyDefinition']);
        expect(Object.keys(item.policyDefinition as object)).toEqual(Object.keys(realList.value[0]!.policyDefinition));
      }
      const def = items[0]!.policyDefinition as Record<string, unknown>;
      expect(def.environmentType).toBe(pp.dlpPolicies[0]!.environmentType);
      expect(def.connectorGroups).toBeUndefined();
      const defaultPolicy = pp.dlpPolicies.find((p) => p.blocked.includes('Http'))!;
      const one = await http.get(`/bap/providers/PowerPlatform.Governance/v2/policies/${defaultPolicy.name}`, { token: pa });
      const oneDef = one.json.policyDefinition as Record<string, unknown>;
      expect(Object.keys(oneDef)).toEqual(Object.keys(realOne.policyDefinition));
      const groups = oneDef.connectorGroups as { classification: string; connectors: { id: string; name: string; type: string }[] }[];
      expect(groups.map((g) => g.classification)).toEqual(['Confidential', 'General', 'Blocked']);
      expect(groups[2]!.connectors).toContainEqual({ id: 'Http', name: 'HTTP', type: 'Microsoft.PowerApps/apis' });
      expect(groups[2]!.connectors.map((c) => c.id)).toContain('/providers/Microsoft.PowerApps/apis/shared_webcontents');
      expect((await http.get('/bap/providers/PowerPlatform.Governance/v2/policies/00000000-0000-0000-0000-00000000dead', { token: pa })).status).toBe(404);

      const settings = await http.request('POST', '/bap/providers/Microsoft.BusinessAppPlatform/listTenantSettings?api-version=2020-10-01', { token: pa });
      expect(settings.json.disableEnvironmentCreationByNonAdminUsers).toBe(false);
      expect((await http.request('POST', '/bap/providers/Microsoft.BusinessAppPlatform/listTenantSettings', { token: pa })).status).toBe(400);

      const iso = await http.get(`/bap/providers/PowerPlatform.Governance/v1/tenants/${tenant.id}/tenantIsolationPolicy`, { token: pa });
      expect(iso.json).toEqual({
        properties: { tenantId: tenant.id, isDisabled: pp.tenantIsolation!.isDisabled, allowedTenants: pp.tenantIsolation!.allowedTenants },
      });
      const saved = pp.tenantIsolation;
      pp.tenantIsolation = null;
      try {
        expect((await http.get(`/bap/providers/PowerPlatform.Governance/v1/tenants/${tenant.id}/tenantIsolationPolicy`, { token: pa })).status).toBe(404);
      } finally {
        pp.tenantIsolation = saved;
      }
    });
  });
});

describe('Power Platform generator', () => {
  it('is deterministic, places the risky properties, and generates the benchmark size fast', () => {
    const a = generateTenant({ seed: 'pp-gen', now: '2026-01-01T00:00:00Z' });
    const b = generateTenant({ seed: 'pp-gen', now: '2026-01-01T00:00:00Z' });
    expect(a.powerPlatform).toEqual(b.powerPlatform);
    const truth = powerPlatformGroundTruth(a);
    expect(truth.powerApps).toBe(10);
    expect(truth.risks.appsSharedWithTenant).toBeGreaterThan(0);
    expect(truth.risks.flowsWithExternalHttp).toBeGreaterThan(0);
    expect(truth.risks.connectionsByDisabledUsers).toBeGreaterThan(0);
    expect(truth.risks.connectionsByGuests).toBeGreaterThan(0);
    expect(truth.risks.customConnectorsExternal).toBe(3);
    expect(truth.risks.environmentsWithoutDlp).toBe(1);
    expect(truth.risks.defaultEnvironmentHasDlp).toBe(true);
    expect(truth.risks.environmentCreationOpen).toBe(true);

    const started = performance.now();
    const big = generateTenant({
      seed: 'pp-big',
      sizes: { users: 500, environments: 50, agents: 0, apps: 5000, flows: 5000, connections: 2000, connectors: 50 },
    });
    expect(big.powerPlatform!.apps).toHaveLength(5000);
    expect(big.powerPlatform!.flows).toHaveLength(5000);
    // Generous bound: the point is "not quadratic", not a timing assertion on a shared machine.
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
