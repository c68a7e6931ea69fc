/**
 * The emulator follows the corpus: for every API Vigil reads, every field the emulator sends exists in the real shape
 * for that API, with a JSON type the real API sends there, at the same nesting; list items and single-item GETs are
 * compared with their own real samples. Real shapes come from `test/fixtures/real/inventory/` and
 * `test/fixtures/real/audit/` (each file's source in the folder's SOURCES.md); the comparison is
 * `test/support/shape.ts` (keys and JSON types, arrays by their elements' merged shape, maps keyed by ids compared by
 * their values).
 *
 * `ALLOW` lists the known deviations per API, each with its reason: fields other helpers of issue 15 are changing
 * (DLP policies), fields the real API documents but the corpus's recorded examples happen not to show ("corpus gap"),
 * and fields the emulator sends that no public source shows ("UNCONFIRMED", kept because Vigil reads them today; see
 * test/fixtures/real/README.md). Any other field the emulator adds fails this test.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { EmulatedClock } from '../../emulator/clock.ts';
import { FeedStore, type TenantFeed } from '../../emulator/feed.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { CONTENT_TYPES, startEmulator, TenantStore, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { deviations, shapeOf, type CompareOptions } from '../support/shape.ts';

type Json = Record<string, unknown>;

const REAL = new URL('../fixtures/real/', import.meta.url);
const load = (rel: string): unknown => JSON.parse(readFileSync(new URL(rel, REAL), 'utf8'));
const loadRecords = (rel: string): Json[] => {
  const text = readFileSync(new URL(rel, REAL), 'utf8');
  return rel.endsWith('.ndjson')
    ? text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Json)
    : (JSON.parse(text) as Json[]);
};
/** The pages of a corpus file: one page object, or an array of pages. */
const pages = (rel: string): Json[] => {
  const j = load(rel);
  return Array.isArray(j) ? (j as Json[]) : [j as Json];
};
const items = (rel: string): Json[] => pages(rel).flatMap((p) => (p.value as Json[] | undefined) ?? []);
/** A page without its items (the envelope is compared apart from the items). */
const envelope = (p: Json, key = 'value'): Json => Object.fromEntries(Object.entries(p).filter(([k]) => k !== key));

/** Real audit records of this folder, by RecordType (Power BI activity events are RecordType 20 records). */
const AUDIT_FILES = [
  'audit/o365-mgmt-api-reference.json',
  'audit/elastic-beats-o365.ndjson',
  'audit/pnp-analytics-insights.ndjson',
  'audit/powerbi-docs-activity-log.json',
  'audit/cli-m365-purview-auditlog.json',
  // A real LaunchPowerApp record (RecordType 256, resource type PowerApp) with its identifiers sanitised: its shape is
  // real (not counted as a real record, test/corpus/audit.test.ts).
  'audit/pnp-analytics-powerapps-launch-sanitised.json',
];

/**
 * Known deviations, per comparison. Reasons:
 * - corpus gap: documented by Microsoft (page named) but absent from the recorded examples here.
 * - UNCONFIRMED: no public source shows it; Vigil reads it today (listed in test/fixtures/real/README.md).
 */
const ALLOW: Record<string, CompareOptions['allow']> = {
  apps: [
    // corpus gap: the TF fixture's lastModifiedBy/lastPublishedBy is SYSTEM (no email); owner/createdBy, the same principal object, carry `email`.
    'properties.lastModifiedBy.email',
    'properties.lastPublishedBy.email',
    // UNCONFIRMED: inline `$expand=permissions` on the admin apps list (emulator/powerplatform.ts says so); Vigil reads it for "shared with everyone".
    'properties.permissions',
  ],
  apis: [
    // corpus gap: custom connectors carry createdBy/environment (the TF fixture lists standard connectors only).
    'properties.createdBy',
    'properties.environment',
    // UNCONFIRMED: custom connector backend fields in the list answer; Vigil reads swagger.host / backendService.serviceUrl for the backend host.
    'properties.apiDefinitions',
    'properties.backendService',
    'properties.swagger',
  ],
  connections: [
    // UNCONFIRMED: an API-key connection's `connectionParameters.api_key`; Vigil reads its presence as authenticationType "apiKey".
    'properties.connectionParameters.api_key',
    // corpus gap: principals of connection permissions carry the same fields as createdBy; errored statuses carry target/error (Power Apps connection docs).
    'properties.permissions[].properties.principal',
    'properties.statuses[].error',
    'properties.statuses[].target',
  ],
  flows: [
    // UNCONFIRMED: `definitionSummary.actions[].api` (the real list shows swaggerOperationId/metadata, the real single GET apiOperation); Vigil reads api.id for each action's connector.
    'properties.definitionSummary.actions[].api',
  ],
  flowSingle: [
    'properties.definitionSummary.actions[].api',
    // corpus gap: trigger `kind` appears on the real list items' definitionSummary (flow-admin-flows-list.json).
    'properties.definitionSummary.triggers[].kind',
    // corpus gap: action `inputs` depend on the action type (workflow definition language: Http has uri/method, Compose any value); the recorded flow has other action types.
    'properties.definition.actions.*.inputs',
  ],
  bots: [
    // corpus gap: every Dataverse row carries @odata.etag (dataverse-systemusers-list.json); the cli mock of bots drops it.
    '@odata.etag',
  ],
  usersDelta: [
    // corpus gap: the user-delta doc example is truncated; these are user properties (Graph resources/user.md) Vigil selects.
    'accountEnabled',
    'assignedLicenses',
    'createdDateTime',
    'userType',
  ],
  accounts: [
    // corpus gap: AccountProperties of the 2025-06-01 swagger; the recorded list example dates from 2017.
    'properties.allowProjectManagement',
    'properties.disableLocalAuth',
    'properties.networkAcls',
    'properties.publicNetworkAccess',
    // corpus gap: AccountProperties.restrictOutboundNetworkAccess / allowedFqdnList of the 2025-06-01 swagger, set by the
    // PATCH body on learn.microsoft.com azure/ai-services/cognitive-services-data-loss-prevention; no recorded response.
    'properties.allowedFqdnList',
    'properties.restrictOutboundNetworkAccess',
  ],
  deployments: [
    // corpus gap: DeploymentProperties.raiPolicyName of the 2025-06-01 swagger.
    'properties.raiPolicyName',
  ],
  activityEventsEnvelope: [
    // corpus gap: `lastResultSet` is documented on learn.microsoft.com get-activity-events, absent from the swagger examples.
    'lastResultSet',
  ],
  scannerResult: [
    // corpus gap: defined in the swagger's definitions (DatasourceConnectionDetails.path/url, WorkspaceInfo.description,
    // DatasetUser/ReportUser/GroupUser access rights and userType), absent from its GetScanResult example.
    'datasourceInstances[].connectionDetails.path',
    'datasourceInstances[].connectionDetails.url',
    'workspaces[].description',
    'workspaces[].datasets[].users[].datasetUserAccessRight',
    'workspaces[].datasets[].users[].userType',
    'workspaces[].reports[].users[].reportUserAccessRight',
    'workspaces[].reports[].users[].userType',
    'workspaces[].users[].groupUserAccessRight',
    'workspaces[].users[].userType',
    // UNCONFIRMED: the swagger's WorkspaceInfoDataset spells it `CreatedDate` and has no isEffectiveIdentity* fields
    // (those belong to the Dataset of GetDatasets); Vigil reads isEffectiveIdentityRequired from the scan result.
    'workspaces[].datasets[].createdDate',
    'workspaces[].datasets[].isEffectiveIdentityRequired',
    'workspaces[].datasets[].isEffectiveIdentityRolesRequired',
  ],
  audit11: [
    // The SharePoint DLP records recorded in 2020 (elastic beats) carry no ClientIP; the emulator's auditrecords test
    // requires ClientIP on every record. Kept, listed in the README.
    'ClientIP',
    // corpus gap: newer DLP rule-match fields (Management Activity schema, "DLP schema": SensitiveInformationTypeName,
    // UniqueCount, Location, ManagementRuleId, …) not in the 2020 records.
    'PolicyDetails[].Rules[].ConditionsMatched.ConditionMatchedInNewScheme',
    'PolicyDetails[].Rules[].ConditionsMatched.SensitiveInformation[].Location',
    'PolicyDetails[].Rules[].ConditionsMatched.SensitiveInformation[].SensitiveInformationDetailedClassificationAttributes',
    'PolicyDetails[].Rules[].ConditionsMatched.SensitiveInformation[].SensitiveInformationTypeName',
    'PolicyDetails[].Rules[].ConditionsMatched.SensitiveInformation[].UniqueCount',
    'PolicyDetails[].Rules[].ManagementRuleId',
    // The schema page spells SharePointMetadata `itemCreationTime`, `UniqueId`, `LastModifiedTime`; the recorded records
    // spell them `ItemCreationTime`, `UniqueID`, `ItemLastModifiedTime`. The emulator follows the page; Vigil reads none.
    'SharePointMetaData.DocumentLastModifier',
    'SharePointMetaData.DocumentSharer',
    'SharePointMetaData.FileID',
    'SharePointMetaData.IsVisibleOnlyToOdbOwner',
    'SharePointMetaData.LastModifiedTime',
    'SharePointMetaData.UniqueId',
    'SharePointMetaData.itemCreationTime',
  ],
  audit13: [
    // Same as audit11: no ClientIP on the recorded Exchange DLP record, newer rule-match fields absent from 2020 records.
    'ClientIP',
    'PolicyDetails[].Rules[].ConditionsMatched.ConditionMatchedInNewScheme',
    'PolicyDetails[].Rules[].ConditionsMatched.SensitiveInformation[].SensitiveInformationDetailedClassificationAttributes',
    'PolicyDetails[].Rules[].ConditionsMatched.SensitiveInformation[].SensitiveInformationTypeName',
    'PolicyDetails[].Rules[].ManagementRuleId',
  ],
  audit256: [
    // UNCONFIRMED: the one real RecordType 256 record here (a Power App launch, pnp Analytics Insights) has no ObjectId;
    // the emulator's agent and custom-connector records keep one (no public record of those resource types). Vigil reads
    // their ids from PropertyCollection and uses ObjectId only when PropertyCollection names none.
    'ObjectId',
  ],
  audit6: [
    // corpus gap: a SharePoint file-operation field (Management Activity schema, SharePoint file operations).
    'HighPriorityMediaProcessing',
  ],
  audit20: [
    // corpus gap: Power BI activity fields of dashboard and export activities (powerbi-docs operation list).
    'DashboardId',
    'DashboardName',
    'ExportedArtifactInfo',
    // corpus gap: common schema field (office-365-management-activity-api-schema.md); the Power BI examples omit it.
    'ResultStatus',
  ],
};

/** Record types the emulator generates with no real record in this folder yet (no shape to compare). */
// 310, 313, 314, 325: Copilot plugin and settings records (issue 20); no record of them is published.
const AUDIT_TYPES_WITHOUT_CORPUS = [2, 30, 50, 187, 261, 310, 313, 314, 325];

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
const tokens = new Map<string, string>();

async function token(resource: string): Promise<string> {
  let t = tokens.get(resource);
  if (!t) {
    t = (await emu.control.mintToken({ tenantId: tenant.id, resource, kind: 'app' })).access_token;
    tokens.set(resource, t);
  }
  return t;
}

async function call(path: string, resource: string, method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<Json> {
  const res = await http.request(method, path, { token: await token(resource), ...(body === undefined ? {} : { body }) });
  if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.json as Json;
}

/** Asserts that the emulator's samples have no field or type the real samples lack, beyond `ALLOW[name]`. */
function conforms(name: string, actual: unknown[], real: unknown[], options: Omit<CompareOptions, 'allow'> = {}): void {
  expect(actual.length, `${name}: the emulator answered nothing to compare`).toBeGreaterThan(0);
  expect(real.length, `${name}: the corpus has nothing to compare with`).toBeGreaterThan(0);
  expect(deviations(shapeOf(actual), shapeOf(real), { ...options, allow: ALLOW[name] ?? [] }), name).toEqual([]);
}

const PA = 'https://service.powerapps.com';
const FLOW = 'https://service.flow.microsoft.com';
const BAP = 'https://api.bap.microsoft.com';
const GRAPH = 'https://graph.microsoft.com';
const ARM = 'https://management.azure.com';
const PBI = 'https://analysis.windows.net/powerbi/api';
const MANAGE = 'https://manage.office.com';

beforeAll(async () => {
  tenant = generateTenant({
    seed: 'conformance',
    permissions: 'documented',
    sizes: {
      users: 20,
      guests: 3,
      groups: 4,
      environments: 3,
      agents: 6,
      apps: 8,
      flows: 12,
      connectors: 3,
      connections: 8,
      foundryAccounts: 4,
      powerBiWorkspaces: 4,
      copilotUsersPercent: 50,
      copilotPairsPerUser: 3,
    },
  });
  for (const app of tenant.apps) app.isManagementApp = true;
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const env = () => tenant.environments[0]!.name;

describe('emulator conformance with the real corpus: Power Platform', () => {
  it('Power Apps admin apps list (items and envelope)', async () => {
    const page = await call(`/powerapps/providers/Microsoft.PowerApps/scopes/admin/environments/${env()}/apps?api-version=2023-06-01&$expand=permissions`, PA);
    conforms('apps', page.value as Json[], items('inventory/powerapps-admin-apps-list.json'), { maps: ['properties.connectionReferences'] });
    conforms(
      'appsEnvelope',
      [envelope(page)],
      pages('inventory/powerapps-admin-apps-list.json').map((p) => envelope(p)),
    );
  });

  it('connectors (apis) and connections lists', async () => {
    const apis = await call(
      `/powerapps/providers/Microsoft.PowerApps/apis?api-version=2019-05-01&$filter=${encodeURIComponent(`environment eq '${env()}'`)}`,
      PA,
    );
    conforms('apis', apis.value as Json[], items('inventory/powerapps-apis-list.json'));
    const conns = await call(`/powerapps/providers/Microsoft.PowerApps/scopes/admin/environments/${env()}/connections?api-version=2016-11-01`, PA);
    conforms('connections', conns.value as Json[], items('inventory/powerapps-connections-list.json'));
  });

  it('flows: admin list items and the single-flow GET, each against its own real sample', async () => {
    const list = await call(`/flow/providers/Microsoft.ProcessSimple/scopes/admin/environments/${env()}/v2/flows?api-version=2016-11-01`, FLOW);
    const flows = list.value as Json[];
    conforms('flows', flows, items('inventory/flow-admin-flows-list.json'));
    // The list never carries the definition: only the single GET does (the list-vs-item split).
    expect(flows.some((f) => 'definition' in (f.properties as Json))).toBe(false);
    const single = await call(
      `/flow/providers/Microsoft.ProcessSimple/scopes/admin/environments/${env()}/flows/${String(flows[0]!.name)}?api-version=2016-11-01`,
      FLOW,
    );
    expect(Object.keys(single.properties as Json)).toContain('definition');
    conforms('flowSingle', [single], [load('inventory/flow-get-with-definition.json')], {
      maps: ['properties.connectionReferences', 'properties.definition.actions', 'properties.definition.triggers'],
    });
  });

  it('DLP policies: list and single policy', async () => {
    const list = await call('/bap/providers/PowerPlatform.Governance/v2/policies', PA);
    conforms('dlpList', list.value as Json[], items('inventory/dlp-policies-list.json'));
    const first = (list.value as Json[])[0]!;
    const name = String((first.policyDefinition as Json | undefined)?.name ?? first.name);
    const one = await call(`/bap/providers/PowerPlatform.Governance/v2/policies/${name}`, PA);
    conforms('dlpSingle', [one], [load('inventory/dlp-policy-single.json')]);
  });

  it('tenant settings, tenant isolation policy and environments', async () => {
    const settings = await call('/bap/providers/Microsoft.BusinessAppPlatform/listTenantSettings?api-version=2020-10-01', PA, 'POST', {});
    conforms('tenantSettings', [settings], [load('inventory/bap-tenant-settings.json'), load('inventory/bap-tenant-settings-cli.json')]);
    const iso = await call(`/bap/providers/PowerPlatform.Governance/v1/tenants/${tenant.id}/tenantIsolationPolicy`, PA);
    conforms('tenantIsolation', [iso], [load('inventory/bap-tenant-isolation-policy.json')]);
    const envs = await call('/bap/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments?api-version=2020-10-01', BAP);
    conforms('environments', envs.value as Json[], [
      ...items('inventory/bap-environments-list.json'),
      ...items('inventory/powerapps-environments-list.json'),
      load('inventory/bap-environment-managed.json'),
    ]);
  });

  it('Dataverse bots and systemusers rows', async () => {
    const dv = tenant.environments.find((e) => e.dataverse)!.dataverse!;
    const resource = `${emu.url}/dataverse/${dv.uniqueName}`;
    const bots = await call(
      `/dataverse/${dv.uniqueName}/api/data/v9.2/bots?$select=botid,name,schemaname,authenticationmode,authenticationtrigger,accesscontrolpolicy,authorizedsecuritygroupids,publishedon,_publishedby_value,_ownerid_value,statecode,statuscode,language,runtimeprovider,template,createdon,modifiedon,configuration`,
      resource,
    );
    conforms('bots', bots.value as Json[], items('inventory/dataverse-bots-list.json'));
    const users = await call(
      `/dataverse/${dv.uniqueName}/api/data/v9.2/systemusers?$select=systemuserid,fullname,domainname,azureactivedirectoryobjectid,applicationid,isdisabled,accessmode`,
      resource,
    );
    conforms('systemusers', users.value as Json[], items('inventory/dataverse-systemusers-list.json'));
  });
});

describe('emulator conformance with the real corpus: Graph, ARM, Power BI, Management Activity', () => {
  it('Graph groups delta with members@delta, users delta, Copilot interaction history', async () => {
    const gd = await call('/graph/v1.0/groups/delta?$select=id,members', GRAPH);
    conforms('groupsDelta', gd.value as Json[], items('inventory/graph-groups-delta-members.json'));
    const ud = await call(
      '/graph/v1.0/users/delta?$select=id,displayName,userPrincipalName,mail,accountEnabled,userType,createdDateTime,assignedLicenses',
      GRAPH,
    );
    conforms('usersDelta', ud.value as Json[], items('inventory/graph-users-delta.json'));
    const licensed = tenant.users.find((u) => (u.assignedLicenses ?? []).length > 0 && u.userType === 'Member')!;
    const ints = await call(`/graph/v1.0/copilot/users/${licensed.id}/interactionHistory/getAllEnterpriseInteractions`, GRAPH);
    conforms('interactions', ints.value as Json[], items('inventory/graph-copilot-interactions.json'));
    conforms(
      'interactionsEnvelope',
      [envelope(ints)],
      pages('inventory/graph-copilot-interactions.json').map((p) => envelope(p)),
    );
  });

  it('ARM Cognitive Services accounts, deployments and projects', async () => {
    const subs = await call('/arm/subscriptions?api-version=2022-12-01', ARM);
    const sub = String((subs.value as Json[])[0]!.subscriptionId);
    const accounts = await call(`/arm/subscriptions/${sub}/providers/Microsoft.CognitiveServices/accounts?api-version=2025-06-01`, ARM);
    conforms('accounts', accounts.value as Json[], [...items('inventory/arm-cognitive-accounts-list.json'), load('inventory/arm-cognitive-account-cmk.json')]);
    const foundry = (accounts.value as Json[]).find((a) => a.kind === 'AIServices')!;
    const deps = await call(`/arm${String(foundry.id)}/deployments?api-version=2025-06-01`, ARM);
    conforms('deployments', deps.value as Json[], [load('inventory/arm-cognitive-deployment.json')]);
    const projs = await call(`/arm${String(foundry.id)}/projects?api-version=2025-06-01`, ARM);
    conforms('projects', projs.value as Json[], [load('inventory/arm-cognitive-project.json')], { maps: ['properties.endpoints'] });
    const withPolicies = tenant.azure!.accounts.find((a) => (a.raiPolicies ?? []).length > 0)!;
    const rai = await call(`/arm${withPolicies.id}/raiPolicies?api-version=2025-06-01`, ARM);
    conforms('raiPolicies', rai.value as Json[], items('inventory/arm-cognitive-raipolicies-list.json'));
    const logged = tenant.azure!.accounts.find((a) => (a.diagnosticSettings ?? []).length > 0)!;
    const diag = await call(`/arm${logged.id}/providers/Microsoft.Insights/diagnosticSettings?api-version=2021-05-01-preview`, ARM);
    conforms('diagnosticSettings', diag.value as Json[], [load('inventory/arm-diagnostic-setting.json')]);
  });

  it('Power BI activity events page and the scanner (getInfo, scanStatus, scanResult, modified)', async () => {
    emu.control.setClock('2025-06-10T20:00:00Z');
    emu.control.configureFeed(tenant.id, { recordsPerHour: 2000 });
    const ev = await call(`/powerbi/v1.0/myorg/admin/activityevents?startDateTime='2025-06-10T08:00:00.000Z'&endDateTime='2025-06-10T09:00:00.000Z'`, PBI);
    const realPages = pages('inventory/powerbi-activityevents.json');
    conforms(
      'activityEventsEnvelope',
      [envelope(ev, 'activityEventEntities')],
      realPages.map((p) => envelope(p, 'activityEventEntities')),
    );
    const realEvents = [...realPages.flatMap((p) => p.activityEventEntities as Json[]), ...loadRecords('audit/powerbi-docs-activity-log.json')];
    conforms('audit20', ev.activityEventEntities as Json[], realEvents);
    const modified = await call('/powerbi/v1.0/myorg/admin/workspaces/modified', PBI);
    conforms('scannerModified', modified as unknown as unknown[], load('inventory/powerbi-scanner-modified.json') as unknown[]);
    const ids = (modified as unknown as { id: string }[]).slice(0, 4).map((w) => w.id);
    const scan = await call('/powerbi/v1.0/myorg/admin/workspaces/getInfo?lineage=true&datasourceDetails=true&getArtifactUsers=true', PBI, 'POST', {
      workspaces: ids,
    });
    conforms('scannerGetInfo', [scan], [load('inventory/powerbi-scanner-getinfo.json')]);
    let status = scan;
    for (let i = 0; i < 20 && status.status !== 'Succeeded'; i++)
      status = await call(`/powerbi/v1.0/myorg/admin/workspaces/scanStatus/${String(scan.id)}`, PBI);
    conforms('scannerStatus', [status], [load('inventory/powerbi-scanner-scanstatus.json')]);
    const result = await call(`/powerbi/v1.0/myorg/admin/workspaces/scanResult/${String(scan.id)}`, PBI);
    conforms('scannerResult', [result], [load('inventory/powerbi-scanner-scanresult.json')]);
  });

  it('Management Activity subscriptions list and content list', async () => {
    emu.control.setClock('2025-06-10T12:00:00Z');
    const root = `/manage/api/v1.0/${tenant.id}/activity/feed`;
    const started = await http.request('POST', `${root}/subscriptions/start?contentType=Audit.General`, { token: await token(MANAGE) });
    expect([200, 400]).toContain(started.status);
    const list = await call(`${root}/subscriptions/list`, MANAGE);
    conforms('subscriptions', list as unknown as unknown[], load('inventory/o365-subscriptions-list.json') as unknown[]);
    const content = await call(`${root}/subscriptions/content?contentType=Audit.General&startTime=2025-06-10T08:00&endTime=2025-06-10T10:00`, MANAGE);
    conforms('contentList', content as unknown as unknown[], load('inventory/o365-content-list.json') as unknown[]);
  });
});

describe('emulator conformance with the real corpus: generated audit records', () => {
  it('every generated record type with a real record has only real fields; the others are listed', () => {
    const clock = new EmulatedClock();
    clock.set('2025-06-10T12:00:00Z');
    const feed = new FeedStore(new TenantStore([tenant]), clock).feed(tenant.id) as TenantFeed;
    feed.configure({ recordsPerHour: 3000 });
    const generated = new Map<number, Json[]>();
    for (const ct of CONTENT_TYPES) {
      for (const b of feed.listContent(ct, Date.parse('2025-06-10T04:00:00Z'), Date.parse('2025-06-10T10:00:00Z'))) {
        const r = feed.blob(b.contentId);
        if (r.status !== 'ok') continue;
        for (const rec of JSON.parse(r.json) as Json[]) generated.set(rec.RecordType as number, [...(generated.get(rec.RecordType as number) ?? []), rec]);
      }
    }
    const real = new Map<number, Json[]>();
    for (const f of AUDIT_FILES) {
      for (const rec of loadRecords(f)) if (typeof rec.RecordType === 'number') real.set(rec.RecordType, [...(real.get(rec.RecordType) ?? []), rec]);
    }
    // Power BI activity events (the swagger's GetActivityEvents examples) are RecordType 20 records too.
    real.set(20, [...(real.get(20) ?? []), ...pages('inventory/powerbi-activityevents.json').flatMap((p) => p.activityEventEntities as Json[])]);
    // Azure AD records share one base schema (Management Activity schema, "Azure Active Directory base schema"):
    // directory (8), account logon (9) and STS logon (15) records are compared with their union.
    const azureAd = [8, 9, 15].flatMap((t) => real.get(t) ?? []);
    const without: number[] = [];
    for (const [rt, recs] of [...generated].sort((a, b) => a[0] - b[0])) {
      const samples = rt === 8 ? azureAd : real.get(rt);
      if (!samples) {
        without.push(rt);
        continue;
      }
      conforms(`audit${rt}`, recs, samples);
    }
    expect(without).toEqual(AUDIT_TYPES_WITHOUT_CORPUS);
  });
});
