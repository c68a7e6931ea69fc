/**
 * Vigil's inventory parsers over real, recorded responses (`test/fixtures/real/inventory/`, sources in its
 * SOURCES.md): the functions and streams that turn API answers into stored rows give the ids, names and attributes a
 * person reading the response would, and never crash. Streams whose mapping is not exported are read through a
 * stand-in HTTP client that answers with the recorded pages.
 *
 * Wrong answers found on these responses (the DLP list without connector groups, issue 15 defect 1) are not asserted
 * here: they are fixed elsewhere and listed in test/fixtures/real/README.md.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PUBLIC_CLOUD } from '../../src/config/cloud.ts';
import { normaliseAccount } from '../../src/sources/arm/streams/foundryAccounts.ts';
import { foundryDeploymentsStream } from '../../src/sources/arm/streams/foundryDeployments.ts';
import { foundryProjectsStream } from '../../src/sources/arm/streams/foundryProjects.ts';
import { environmentGovernance, toEnvironment } from '../../src/sources/bap/streams/environments.ts';
import { foundryDiagnosticSettingsStream } from '../../src/sources/arm/streams/foundryDiagnosticSettings.ts';
import { foundryRaiPoliciesStream } from '../../src/sources/arm/streams/foundryRaiPolicies.ts';
import { agentsStream } from '../../src/sources/dataverse/streams/agents.ts';
import { dataverseUsersStream } from '../../src/sources/dataverse/streams/dataverseUsers.ts';
import { toInteraction } from '../../src/sources/graph/streams/copilotInteractions.ts';
import { groupsStream } from '../../src/sources/graph/streams/groups.ts';
import { membershipsStream } from '../../src/sources/graph/streams/memberships.ts';
import { toDirectoryUser } from '../../src/sources/graph/streams/users.ts';
import { toSharedLink } from '../../src/sources/powerBi/streams/powerBiSharedLinks.ts';
import { toWorkspace } from '../../src/sources/powerBi/streams/powerBiWorkspaces.ts';
import { toConnection } from '../../src/sources/powerPlatform/streams/connections.ts';
import { toConnector } from '../../src/sources/powerPlatform/streams/connectors.ts';
import { toDlpPolicy } from '../../src/sources/powerPlatform/streams/dlpPolicies.ts';
import { toFlow } from '../../src/sources/powerPlatform/streams/flows.ts';
import { toPowerApp } from '../../src/sources/powerPlatform/streams/powerApps.ts';
import { toTenantIsolation, toTenantSettings } from '../../src/sources/powerPlatform/streams/tenantSettings.ts';
import type { HttpClient, HttpRequest } from '../../src/platform/http/client.ts';
import type { Slice, Stream, StreamContext } from '../../src/sources/stream.ts';

type Json = Record<string, unknown>;

const REAL = new URL('../fixtures/real/inventory/', import.meta.url);
const load = <T = Json>(name: string): T => JSON.parse(readFileSync(new URL(name, REAL), 'utf8')) as T;
const pagesOf = (name: string): Json[] => {
  const j = load<unknown>(name);
  return Array.isArray(j) ? (j as Json[]) : [j as Json];
};
const itemsOf = (name: string): Json[] => pagesOf(name).flatMap((p) => (p.value as Json[] | undefined) ?? []);

/**
 * A stream context whose HTTP client answers every request with the next recorded page (links are all allowed: the
 * link policy is tested elsewhere), and records the URLs asked for.
 */
function recorded(pages: Json[]): { ctx: StreamContext; urls: string[] } {
  const urls: string[] = [];
  let i = 0;
  const http = {
    links: { check: (_api: string, url: string) => url },
    send: async (req: HttpRequest) => {
      urls.push(req.url);
      const body = pages[Math.min(i++, pages.length - 1)]!;
      // The recorded pages' next links point at the real hosts; the last page ends the read.
      const last = i >= pages.length;
      const { ['@odata.nextLink']: _n, nextLink: _m, ...rest } = body;
      const withLink = last ? rest : { ...rest, '@odata.nextLink': `${PUBLIC_CLOUD.graph.baseUrl}/v1.0/next?page=${i}` };
      return { status: 200, headers: {}, body: withLink, text: JSON.stringify(withLink) };
    },
  } as unknown as HttpClient;
  const tokens = { bearer: () => async () => 'token', roles: async () => [] };
  const logger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, child: () => logger } as unknown as StreamContext['logger'];
  return { ctx: { tenantId: '00000000-0000-0000-0000-000000000000', http, cloud: PUBLIC_CLOUD, tokens, logger }, urls };
}

async function readAll<R>(stream: Stream<string, R, string>, pages: Json[], slice: Slice): Promise<{ records: R[]; removed: string[] }> {
  const { ctx } = recorded(pages);
  const records: R[] = [];
  const removed: string[] = [];
  for await (const page of stream.read(ctx, slice, null)) {
    records.push(...page.records);
    removed.push(...(page.removed ?? []));
  }
  return { records, removed };
}

describe('Power Platform inventory parsers on recorded responses', () => {
  it('environments (BAP list, TF fixture; Power Apps environment list, cli mock): id, name, SKU, default, region, Dataverse URL, state', () => {
    const envs = [...itemsOf('bap-environments-list.json'), ...itemsOf('powerapps-environments-list.json')].map(toEnvironment);
    expect(envs.map((e) => [e.id, e.displayName, e.sku, e.isDefault, e.dataverseUrl, e.state])).toEqual([
      [
        '00000000-0000-0000-0000-000000000001',
        "Admin AdminOnMicrosoft's Environment",
        'Developer',
        false,
        'https://00000000-0000-0000-0000-000000000001.crm4.dynamics.com/',
        'Enabled',
      ],
      ['00000000-0000-0000-0000-000000000002', 'displayname', 'Sandbox', false, null, 'Enabled'],
      ['Default-2ca3eaa5-140f-4175-9563-2172edf9f447', 'Contoso (default) (contoso)', 'Default', true, 'https://contoso.crm4.dynamics.com/', 'Enabled'],
    ]);
    expect(envs[0]!.region).toBe('northeurope');
    expect(envs[1]!.region).toBe('westeurope');
    // No azureRegion on the Power Apps list: the location (a geography) is what the record says.
    expect(envs[2]!.region).toBe('europe');
  });

  it('admin apps (TF fixture): id, name, owner, sharing counts, no connection references', () => {
    const apps = itemsOf('powerapps-admin-apps-list.json').map((j) => toPowerApp('env-1', j));
    expect(apps.map((a) => [a.id, a.name, a.attrs.owner?.id ?? null, a.attrs.sharedUsersCount, a.attrs.sharedGroupsCount])).toEqual([
      ['00000000-0000-0000-0000-000000000001', 'Overview', 'f99f844b-ce3b-49ae-86f3-e374ecae789c', 0, 0],
      ['123', 'Dataverse Actions Page', 'f99f844b-ce3b-49ae-86f3-e374ecae789c', 0, 0],
    ]);
    for (const a of apps) {
      expect(a.attrs.environmentId).toBe('env-1');
      expect(a.attrs.connectionReferences).toEqual([]);
      expect(a.attrs.isBypassConsent).toBe(false);
      // The list was read without $expand=permissions: sharing with everyone is unknown, not "no".
      expect(a.attrs.sharedWithTenant).toBeNull();
    }
  });

  it('connectors (TF fixture): standard connectors with tier and publisher, no backend', () => {
    const cs = itemsOf('powerapps-apis-list.json').map((j) => toConnector('env-1', j));
    expect(cs.map((c) => [c.id, c.attrs.connectorId, c.name, c.attrs.isCustom, c.attrs.tier, c.attrs.publisher, c.attrs.backendHost])).toEqual([
      ['env-1/shared_sharepointonline', 'shared_sharepointonline', 'SharePoint', false, 'Standard', 'Microsoft', null],
      ['env-1/shared_onedriveforbusiness', 'shared_onedriveforbusiness', 'OneDrive for Business', false, 'Standard', 'Microsoft', null],
    ]);
  });

  it('connections (TF fixture): connector, status, authentication, owner-only sharing', () => {
    const cs = itemsOf('powerapps-connections-list.json').map((j) => toConnection('env-1', j));
    expect(
      cs.map((c) => [
        c.id,
        c.attrs.connectorId,
        c.name,
        c.attrs.statuses,
        c.attrs.isErrored,
        c.attrs.authenticationType,
        c.attrs.isShared,
        c.attrs.sharedWithTenant,
      ]),
    ).toEqual([
      ['env-1/00000000-0000-0000-0000-000000000001', 'shared_commondataserviceforapps', 'My CDS Connection', ['Connected'], false, 'oauth', false, false],
      ['env-1/00000000-0000-0000-0000-000000000002', 'shared_flowmanagement', 'My Flow Connection', ['Connected'], false, 'firstParty', false, false],
    ]);
    expect(cs[0]!.attrs.createdBy?.id).toBe('f99f844b-ce3b-49ae-86f3-e374ecae789c');
  });

  it('flows (cli mocks): list items and the single flow with its definition', () => {
    const flows = itemsOf('flow-admin-flows-list.json').map((j) => toFlow('env-1', j, null));
    expect(
      flows.map((f) => [f.id, f.name, f.attrs.state, f.attrs.creator.objectId, f.attrs.hasHttpTrigger, f.attrs.hasHttpAction, f.attrs.definitionRead]),
    ).toEqual([
      ['fc2d4ef5-4151-4e93-9aaa-1f380d7ed95d', 'Invoicing flow', 'Started', '9723d9b0-b8d6-48af-b381-fb4a9f0403e4', false, false, false],
      ['0eabab30-8e55-4100-911f-e7afd9ba8919', 'Invoicing flow 2', 'Started', '9723d9b0-b8d6-48af-b381-fb4a9f0403e4', false, false, false],
      ['1c6ee23a-a835-44bc-a4f5-462b658efc13', 'Send myself a reminder in 10 minutes', 'Started', 'da8f7aea-cf43-497f-ad62-c2feae89a194', false, false, false],
      [
        '3989cb59-ce1a-4a5c-bb78-257c5c39381d',
        'Get a daily digest of the top CNN news',
        'Started',
        'da8f7aea-cf43-497f-ad62-c2feae89a194',
        false,
        false,
        false,
      ],
    ]);
    // A button trigger is a Request trigger of kind Button, not an HTTP trigger.
    expect(flows[2]!.attrs.triggers).toEqual([{ type: 'Request', kind: 'Button', connectorId: null }]);
    expect(flows[3]!.attrs.actions.map((a) => a.type)).toEqual(['If', 'Query', 'ApiConnection', 'Foreach', 'ApiConnection', 'Compose']);
    const single = load('flow-get-with-definition.json');
    const f = toFlow('env-1', single, single);
    expect(f.id).toBe('a18e89d1-4c75-41e4-9517-e90aedc079be');
    expect(f.attrs.definitionRead).toBe(true);
    expect(f.attrs.httpTargets).toEqual([]);
  });

  it('DLP policy (TF fixture, single-policy GET): groups by classification, scope', () => {
    const p = toDlpPolicy(load('dlp-policy-single.json'));
    expect(p.id).toBe('00000000-0000-0000-0000-000000000002');
    expect(p.attrs.defaultConnectorsClassification).toBe('General');
    expect(p.attrs.environmentType).toBe('ExceptEnvironments');
    expect(p.attrs.business).toEqual(['shared_office365users', 'shared_azureblob']);
    expect(p.attrs.nonBusiness).toEqual(['shared_powerappsforappmakers', 'shared_microsoftspatialservices', 'shared_sql', 'shared_bttn']);
    expect(p.attrs.blocked).toEqual([]);
    expect(p.attrs.connectorGroupsRead).toBe(true);
    // The list items carry no groups (issue 15 defect 1): they say so, instead of looking as if they blocked nothing.
    expect(
      itemsOf('dlp-policies-list.json')
        .map(toDlpPolicy)
        .every((x) => x.attrs.connectorGroupsRead === false),
    ).toBe(true);
    expect(
      itemsOf('dlp-policies-list.json')
        .map(toDlpPolicy)
        .map((x) => [x.id, x.name, x.attrs.environmentType, x.attrs.environments]),
    ).toEqual([
      ['00000000-0000-0000-0000-000000000001', 'a1', 'AllEnvironments', []],
      ['00000000-0000-0000-0000-000000000002', 'a2', 'ExceptEnvironments', ['be0eb809-e58a-ec1b-8fce-ea40b0e53442']],
    ]);
  });

  it('tenant settings (TF fixture, cli mock) and tenant isolation (TF fixture)', () => {
    for (const name of ['bap-tenant-settings.json', 'bap-tenant-settings-cli.json']) {
      const s = toTenantSettings(load(name));
      expect(s.attrs.disableShareWithEveryone, name).toBe(false);
      expect(s.attrs.enableGuestsToMake, name).toBe(false);
      expect(s.attrs.disableEnvironmentCreationByNonAdminUsers, name).toBe(false);
    }
    const iso = toTenantIsolation(load('bap-tenant-isolation-policy.json'));
    expect(iso.attrs).toEqual({
      kind: 'tenantIsolation',
      exists: true,
      enabled: true,
      allowedTenants: [{ tenantId: '11111111-1111-1111-1111-111111111111', inbound: true, outbound: false }],
    });
  });

  it('Dataverse bots (cli mock) and systemusers (TF fixture), read through the streams', async () => {
    const slice = { key: 'env-1', params: { environmentId: 'env-1', instanceUrl: 'https://contoso-dev.crm4.dynamics.com' } };
    const { records: bots } = await readAll(agentsStream, pagesOf('dataverse-bots-list.json'), slice);
    expect(bots.map((b) => [b.id, b.name, b.schemaName, b.authenticationMode, b.accessControlPolicy, b.ownerId, b.publishedOn, b.stateCode])).toEqual([
      [
        '3a081d91-5ea8-40a7-8ac9-abbaa3fcb893',
        'CLI 365 Copilot',
        'new_bot_23f5f58697fd43d595eb451c9797a53d',
        1,
        0,
        '5fa787c1-1c4d-ed11-bba1-000d3a2caf7f',
        '2022-11-19T10:43:24Z',
        0,
      ],
    ]);
    const { records: users } = await readAll(dataverseUsersStream, pagesOf('dataverse-systemusers-list.json'), slice);
    const raw = itemsOf('dataverse-systemusers-list.json');
    expect(users).toHaveLength(raw.length);
    expect(users[0]).toMatchObject({
      environmentId: 'env-1',
      id: '00000000-0000-0000-0000-000000000002',
      aadObjectId: '00000000-0000-0000-0000-000000000002',
      applicationId: null,
      isDisabled: false,
    });
    expect(users[0]!.fullName).toBe(raw[0]!.fullname);
  });
});

describe('Graph, ARM and Power BI parsers on recorded responses', () => {
  it('groups delta with members@delta (Graph docs): groups, memberships and removed members', async () => {
    const pages = pagesOf('graph-groups-delta-members.json');
    const { records: groups } = await readAll(groupsStream, pages, { key: '*', params: {} });
    expect(groups.map((g) => g.id)).toEqual([
      'c2f798fd-f95d-4623-8824-63aec21fffff',
      'ec22655c-8eb2-432a-b4ea-8b8a254bffff',
      '2e5807ce-58f3-4a94-9b37-ffff2e085957',
      '421e797f-9406-4934-b778-4908421e3505',
      'bed7f0d4-750e-4e7e-ffff-169002d06fc9',
      '421e797f-9406-ffff-b778-4908421e3505',
      '2e5807ce-58f3-4a94-9b37-ffff2e085957',
    ]);
    expect(groups[0]!.displayName).toBe('TestGroup1');
    const { records: members, removed } = await readAll(membershipsStream, pages, { key: '*', params: {} });
    expect(members.map((m) => `${m.groupId}/${m.memberId}/${m.memberType}`)).toEqual([
      'c2f798fd-f95d-4623-8824-63aec21fffff/693acd06-2877-4339-8ade-b704261fe7a0/user',
      'c2f798fd-f95d-4623-8824-63aec21fffff/49320844-be99-4164-8167-87ff5d047ace/user',
      '2e5807ce-58f3-4a94-9b37-ffff2e085957/632f6bb2-3ec8-4c1f-9073-0027a8c68593/user',
      '421e797f-9406-4934-b778-4908421e3505/3c8ac7c4-d365-4df9-abfa-356a9dd7763c/user',
      '421e797f-9406-4934-b778-4908421e3505/49320844-be99-4164-8167-87ff5d047ace/user',
      '2e5807ce-58f3-4a94-9b37-ffff2e085957/37de1ae3-408f-4702-8636-20824abda004/user',
    ]);
    expect(removed).toEqual(['2e5807ce-58f3-4a94-9b37-ffff2e085957/632f6bb2-3ec8-4c1f-9073-0027a8c6859']);
  });

  it('users delta (Graph docs): id, name, UPN, mail; fields not selected stay unknown', () => {
    const u = toDirectoryUser(itemsOf('graph-users-delta.json')[0]!);
    expect(u).toMatchObject({
      id: 'id-value',
      displayName: 'displayName-value',
      userPrincipalName: 'userPrincipalName-value',
      mail: 'mail-value',
      accountEnabled: null,
      userType: null,
    });
  });

  it('Copilot interaction history (Graph docs): prompt and response, who sent it, counts', () => {
    const [first, second] = pagesOf('graph-copilot-interactions.json').map((p) => p.value as Json[]);
    const teams = toInteraction('4db02e4b-d144-400e-b194-53253a34c5be', first![0]!);
    expect(teams.id).toBe('4db02e4b-d144-400e-b194-53253a34c5be/1731701801008');
    expect(teams.attrs).toMatchObject({
      interactionType: 'aiResponse',
      appClass: 'IPM.SkypeTeams.Message.Copilot.Teams',
      sessionId: '19:icg2t_AWPYJyJ2oDLB_CZyh29QXpZvbdpljKf7qKotk1@thread.v2',
      from: { type: 'application', id: 'fb8d773d-7ef8-4ec0-a117-179f88add510' },
      contexts: 1,
      attachments: 1,
      links: 0,
    });
    const prompt = toInteraction('4db02e4b-d144-400e-b194-53253a34c5be', second![1]!);
    expect(prompt.attrs).toMatchObject({
      interactionType: 'userPrompt',
      conversationType: 'bizchat',
      requestId: 'f128b7a9-657e-b420-201e-5602114a29f4',
      from: { type: 'user', id: '4db02e4b-d144-400e-b194-53253a34c5be' },
      bodyLength: 'What should be on my radar from emails last week?'.length,
    });
    const answer = toInteraction('4db02e4b-d144-400e-b194-53253a34c5be', second![0]!);
    expect(answer.attrs.links).toBe(2);
    expect(answer.attrs.requestId).toBe(prompt.attrs.requestId);
  });

  it('ARM Cognitive Services (REST spec examples): accounts, deployments, projects', async () => {
    const accounts = itemsOf('arm-cognitive-accounts-list.json').map(normaliseAccount);
    expect(accounts.map((a) => [a.name, a.attrs.kind, a.attrs.subscriptionId, a.attrs.resourceGroup, a.attrs.location, a.attrs.sku, a.attrs.endpoint])).toEqual(
      [
        ['bingSearch', 'Bing.Search', '00000000-1111-2222-3333-444444444444', 'bvttest', 'global', 'S1', 'https://api.cognitive.microsoft.com/bing/v5.0'],
        ['CrisProd', 'CRIS', '00000000-1111-2222-3333-444444444444', 'bvttest', 'westus', 'S0', 'https://westus.api.cognitive.microsoft.com/sts/v1.0'],
        ['rayrptest0308', 'Face', '00000000-1111-2222-3333-444444444444', 'bvttest', 'westus', 'S0', 'https://westus.api.cognitive.microsoft.com/face/v1.0'],
        ['raytest02', 'Emotion', '00000000-1111-2222-3333-444444444444', 'bvttest', 'westus', 'S0', 'https://westus.api.cognitive.microsoft.com/emotion/v1.0'],
      ],
    );
    // Not stated in these records: unknown, not "enabled".
    expect(accounts[0]!.attrs.publicNetworkAccess).toBeNull();
    expect(accounts[0]!.attrs.disableLocalAuth).toBeNull();
    const accountId =
      '/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/myResourceGroup/providers/Microsoft.CognitiveServices/accounts/myAccount';
    const slice = { key: accountId.toLowerCase(), params: { accountId, subscriptionId: '00000000-1111-2222-3333-444444444444' } };
    const { records: deps } = await readAll(foundryDeploymentsStream, [{ value: [load('arm-cognitive-deployment.json')] }], slice);
    expect(deps).toHaveLength(1);
    expect(deps[0]!.attrs).toMatchObject({
      modelFormat: 'OpenAI',
      modelName: 'ada',
      modelVersion: '1',
      sku: 'Standard',
      capacity: 1,
      raiPolicyName: null,
      contentFilterMissing: true,
      provisioningState: 'Succeeded',
    });
    const { records: projects } = await readAll(foundryProjectsStream, [{ value: [load('arm-cognitive-project.json')] }], slice);
    expect(projects[0]!.attrs).toMatchObject({ displayName: 'myProject', isDefault: false, location: 'westus', provisioningState: 'Succeeded' });
  });

  it('ARM (REST spec examples): customer-managed key and identity, content filters, diagnostic settings', async () => {
    const cmk = normaliseAccount(load('arm-cognitive-account-cmk.json'));
    expect(cmk.attrs).toMatchObject({
      encryptionKeySource: 'Microsoft.KeyVault',
      identityType: 'SystemAssigned',
      restrictOutboundNetworkAccess: null,
      allowedFqdnList: [],
    });
    // The 2017 list records carry neither: unknown key source and identity, which the checks fail as Microsoft-managed / none.
    expect(normaliseAccount(itemsOf('arm-cognitive-accounts-list.json')[0]!).attrs).toMatchObject({ encryptionKeySource: null, identityType: null });
    const accountId =
      '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/resourceGroupName/providers/Microsoft.CognitiveServices/accounts/accountName';
    const slice = { key: accountId.toLowerCase(), params: { accountId, subscriptionId: '00000000-0000-0000-0000-000000000000' } };
    const { records: policies } = await readAll(foundryRaiPoliciesStream, [load('arm-cognitive-raipolicies-list.json')], slice);
    expect(policies.map((p) => [p.name, p.attrs.basePolicyName, p.attrs.mode, p.attrs.contentFilters.length])).toEqual([
      ['raiPolicyName', 'Microsoft.Default', 'Asynchronous_filter', 12],
    ]);
    expect(policies[0]!.attrs.contentFilters[0]).toEqual({ name: 'Hate', source: 'Prompt', enabled: false, blocking: false, severityThreshold: 'High' });
    expect(policies[0]!.attrs.contentFilters.find((f) => f.name === 'Jailbreak')).toEqual({
      name: 'Jailbreak',
      source: 'Prompt',
      enabled: true,
      blocking: true,
      severityThreshold: null,
    });
    const { records: settings } = await readAll(foundryDiagnosticSettingsStream, [{ value: [load('arm-diagnostic-setting.json')] }], slice);
    // The recorded workspaceId is "" (no workspace): kept as sent; the check counts only non-empty destinations.
    expect(settings[0]!.attrs).toMatchObject({ workspaceId: '', enabledLogs: ['allLogs'], marketplacePartnerId: expect.stringContaining('Datadog') });
  });

  it('BAP Managed Environment (terraform provider record): governanceConfiguration', () => {
    expect(environmentGovernance(load('bap-environment-managed.json'))).toEqual({
      protectionLevel: 'Standard',
      managed: true,
      limitSharingMode: 'excludeSharingToSecurityGroups',
      maxLimitUserSharing: 10,
      groupSharingDisabled: false,
      solutionCheckerMode: 'none',
    });
    const basic = itemsOf('bap-environments-list.json').map(environmentGovernance);
    expect(basic.some((g) => g?.protectionLevel === 'Basic')).toBe(true);
    expect(basic.every((g) => g === null || (g.protectionLevel === 'Basic' && !g.managed && g.limitSharingMode === null))).toBe(true);
  });

  it('Power BI scan result and widely shared artifacts (swagger examples)', () => {
    const result = load('powerbi-scanner-scanresult.json');
    const sources = new Map((result.datasourceInstances as Json[]).map((d) => [String(d.datasourceId).toLowerCase(), d]));
    const ws = (result.workspaces as Json[]).map((w) => toWorkspace(w, sources, '2020-06-15T16:46:28Z'));
    expect(ws.map((w) => [w.id, w.name, w.attrs.type, w.attrs.state])).toEqual([['d507422c-8d6d-4361-ac7a-30074a8cd0a1', 'V2 shared', 'Workspace', 'Active']]);
    const ds = ws[0]!.attrs.datasets[0]!;
    expect(ds).toMatchObject({
      id: 'e7e8a355-e77b-4418-a7b8-ae5972fdaa03',
      name: 'ExportB',
      configuredBy: 'john@contoso.com',
      datasourceTypes: ['Sql'],
      servers: ['qlserver.database.windows.net'],
      gatewayIds: ['e820592e-f8cf-4a6f-b1ed-566799d29565'],
    });
    expect(ws[0]!.attrs.reports[0]).toMatchObject({ id: 'c6d072d1-ed20-4b60-8329-16c4b934203b', reportType: 'PaginatedReport', endorsement: 'Certified' });
    const link = toSharedLink('organizationLink', (load('powerbi-widelyshared-links.json').artifactAccessEntities as Json[])[0]!);
    expect(link?.attrs).toMatchObject({
      artifactId: '41ce06d1-d81b-4ea0-bc6d-2ce3dd2f8e87',
      artifactType: 'Report',
      shareType: 'Link',
      accessRight: 'ReadWrite',
      sharer: { emailAddress: 'john@contoso.com', graphId: '3fadb6e4-130c-4a8f-aeac-416e38b66756', principalType: 'User' },
    });
  });
});
