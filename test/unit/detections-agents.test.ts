import { describe, expect, it } from 'vitest';
import { type AuditEvent } from '../../src/core/audit.ts';
import { normalizeRecord } from '../../src/sources/managementActivity/records.ts';
import { loadDetections } from '../../src/detections/index.ts';
import type { OpenFinding } from '../../src/detections/types.ts';
import { detectionContext } from '../support/detections.ts';
import type { AgentComponentAttrs } from '../../src/sources/dataverse/streams/agentComponents.ts';

// Copilot Studio authoring records (RecordType 256) in the shape Microsoft Learn "Audit Copilot Studio activities in
// Microsoft Purview" lists and the existing agent rules read: PropertyCollection `powerplatform.analytics.resource.*`,
// changes in `bot.update_details.change`. The component keys (`bot_component.*`) are UNCONFIRMED (see views.ts).
let n = 0;
function bot(operation: string, extra: [string, string][] = [], over: Record<string, unknown> = {}): AuditEvent {
  n++;
  const r = {
    Id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    CreationTime: new Date(Date.UTC(2026, 10, 20, 8, 0, n)).toISOString().slice(0, 19),
    RecordType: 256,
    Operation: operation,
    UserId: 'ann@contoso.com',
    UserType: 0,
    ClientIP: '203.0.113.10',
    OrganizationId: 'tid',
    Workload: 'PowerPlatform',
    ObjectId: 'bot-1',
    PropertyCollection: [
      ['powerplatform.analytics.resource.type', 'Bot'],
      ['powerplatform.analytics.resource.bot.id', 'bot-1'],
      ['powerplatform.analytics.resource.bot.display_name', 'HR helper'],
      ['powerplatform.analytics.resource.environment.id', 'env-1'],
      ...extra,
    ].map(([Name, Value]) => ({ Name, Value })),
    ...over,
  };
  return normalizeRecord(r, 'Audit.General')!;
}
const change = (property: string, from: string, to: string): [string, string] => [
  'powerplatform.analytics.resource.bot.update_details.change',
  JSON.stringify([{ PropertyName: property, OldValue: from, NewValue: to }]),
];
const component = (id: string, type?: number): [string, string][] => [
  ['powerplatform.analytics.resource.bot_component.id', id],
  ...(type === undefined ? [] : ([['powerplatform.analytics.resource.bot_component.type', String(type)]] as [string, string][])),
];
/** A component as the `agentComponents` stream stores it. */
const inv = (over: Partial<AgentComponentAttrs>): AgentComponentAttrs => ({
  botId: 'bot-1',
  parentComponentId: null,
  schemaName: 'cr123_hr.topic.x',
  componentType: 9,
  yamlKind: null,
  kind: 'topic',
  stateCode: 0,
  modifiedOn: '2026-11-20T08:05:00Z',
  dataUnparsed: false,
  ...over,
});
const tool = (over: Partial<NonNullable<AgentComponentAttrs['tool']>> = {}): NonNullable<AgentComponentAttrs['tool']> => ({
  actionKind: 'InvokeConnectorTaskAction',
  connectionReference: 'cr123_hr.shared_office365.abc',
  connectorId: 'shared_office365',
  customConnector: false,
  connectionMode: 'maker',
  operationId: 'SendEmailV2',
  serverHost: null,
  httpHosts: [],
  httpOrigins: [],
  ...over,
});
const finding = (over: Partial<OpenFinding> = {}): OpenFinding => ({
  findingId: 'f-1',
  checkId: 'agent_no_authentication',
  severity: 'high',
  resourceType: 'agent',
  resourceId: 'bot-1',
  resourceName: 'HR helper',
  firstSeenAt: '2026-11-19T00:00:00Z',
  ...over,
});

const detections = Object.fromEntries(loadDetections().map((d) => [d.metadata.id, d]));
const run = async (id: string, events: AuditEvent[], components: Record<string, AgentComponentAttrs> = {}, findings: OpenFinding[] = []) =>
  detections[id]!.run(
    detectionContext({
      events: events.filter((e) => detections[id]!.metadata.recordTypes.includes(e.recordType!)),
      agentComponents: async (ids) => new Map(ids.flatMap((i) => (components[i] ? [[i, components[i]] as const] : []))),
      openFindings: async (ids) => findings.filter((f) => ids.includes(f.resourceId)),
    }),
  );

describe('agent lifecycle detections: each fires on its positive case and stays quiet on a near-miss', () => {
  it('every agent rule is registered with mappings, references and the record type it reads', () => {
    const ids = Object.keys(detections).filter((id) => id.startsWith('agent_'));
    expect(ids.length).toBeGreaterThanOrEqual(13);
    for (const id of ids) {
      const m = detections[id]!.metadata;
      expect(m.recordTypes).toEqual([256]);
      expect(Object.keys(m.frameworks).every((k) => ['owasp-llm-2025', 'mitre-atlas', 'mitre-attack'].includes(k))).toBe(true);
    }
  });

  it('agent_created: BotCreate; not a rename', async () => {
    expect(await run('agent_created', [bot('BotCreate')])).toHaveLength(1);
    expect(await run('agent_created', [bot('BotUpdateOperation-BotNameUpdate')])).toEqual([]);
  });

  it('agent_published: a publication; not an icon update', async () => {
    const [hit] = await run('agent_published', [bot('BotUpdateOperation-BotPublish')]);
    expect(hit).toMatchObject({ detail: { agentId: 'bot-1', agent: 'HR helper', environmentId: 'env-1' } });
    expect(await run('agent_published', [bot('BotUpdateOperation-BotIconUpdate')])).toEqual([]);
  });

  it('agent_deleted: BotDelete; not the clean-up record that follows it', async () => {
    expect(await run('agent_deleted', [bot('BotDelete')])).toHaveLength(1);
    expect(await run('agent_deleted', [bot('BotDeleteCleanup')])).toEqual([]);
  });

  it('agent_authentication_weakened: Microsoft to generic OAuth; not to None (the other rule), not strengthened', async () => {
    const weakened = bot('BotUpdateOperation-BotAuthUpdate', [change('AuthenticationMode', 'Integrated', 'Generic OAuth2')]);
    expect(await run('agent_authentication_weakened', [weakened])).toMatchObject([{ detail: { from: 'Integrated', to: 'Generic OAuth2' } }]);
    const toNone = bot('BotUpdateOperation-BotAuthUpdate', [change('AuthenticationMode', 'Integrated', 'None')]);
    const stronger = bot('BotUpdateOperation-BotAuthUpdate', [change('AuthenticationMode', 'Generic OAuth2', 'Custom Azure Active Directory')]);
    expect(await run('agent_authentication_weakened', [toNone, stronger])).toEqual([]);
    // A change to None raises exactly one alert, agent_authentication_none's.
    expect(await run('agent_authentication_none', [toNone])).toHaveLength(1);
  });

  it('agent_access_broadened: readers to Any, and to Any (multitenant); not to a security group, not narrowed', async () => {
    const open = bot('BotUpdateOperation-BotShare', [change('AccessControlPolicy', 'Copilot readers', 'Any')]);
    const multi = bot('BotUpdateOperation-BotShare', [change('AccessControlPolicy', 'Any', 'Any (multitenant)')]);
    const hits = await run('agent_access_broadened', [open, multi]);
    expect(hits.map((h) => h.title)).toEqual([expect.stringContaining('everyone in the organisation'), expect.stringContaining('any tenant')]);
    const group = bot('BotUpdateOperation-BotShare', [change('AccessControlPolicy', 'Copilot readers', 'Group membership')]);
    const narrowed = bot('BotUpdateOperation-BotShare', [change('AccessControlPolicy', 'Any', 'Group membership')]);
    const sharedWithUser = bot('BotUpdateOperation-BotShare');
    expect(await run('agent_access_broadened', [group, narrowed, sharedWithUser])).toEqual([]);
  });

  it('agent_app_insights_changed: BotAppInsightsUpdate; not a custom connector record', async () => {
    expect(await run('agent_app_insights_changed', [bot('BotAppInsightsUpdate')])).toHaveLength(1);
    const connector = bot('BotAppInsightsUpdate', [], {
      PropertyCollection: [{ Name: 'powerplatform.analytics.resource.type', Value: 'CustomConnector' }],
    });
    expect(await run('agent_app_insights_changed', [connector])).toEqual([]);
  });

  const website = inv({
    kind: 'knowledge',
    componentType: 16,
    knowledge: { sourceType: 'publicWebsite', sourceKind: 'PublicSiteSearchSource', url: 'https://example.org/faq', host: 'example.org', connectionName: null },
  });
  const sharePoint = inv({
    kind: 'knowledge',
    componentType: 16,
    knowledge: {
      sourceType: 'sharePoint',
      sourceKind: 'SharePointSearchSource',
      url: 'https://contoso.sharepoint.com/sites/hr',
      host: 'contoso.sharepoint.com',
      connectionName: null,
    },
  });

  it('agent_knowledge_public_website: a collected public-website source created or changed; not SharePoint, not a stale inventory', async () => {
    const created = bot('BotComponentCreate', component('c-web', 16));
    const updated = bot('BotComponentUpdate', component('c-web', 16));
    const hits = await run('agent_knowledge_public_website', [created, updated], { 'c-web': website });
    // Saving the same source twice is one alert (same dedupe key).
    expect(new Set(hits.map((h) => h.dedupeKey)).size).toBe(1);
    expect(hits[0]).toMatchObject({ detail: { host: 'example.org', url: 'https://example.org/faq' } });
    expect(await run('agent_knowledge_public_website', [bot('BotComponentCreate', component('c-sp', 16))], { 'c-sp': sharePoint })).toEqual([]);
    // The inventory predates the record by more than the clock-skew allowance: it may describe an older version.
    const stale = { ...website, modifiedOn: '2026-11-19T08:00:00Z' };
    expect(await run('agent_knowledge_public_website', [created], { 'c-web': stale })).toEqual([]);
  });

  it('agent_knowledge_added: SharePoint source, or a knowledge component not collected yet; not a public website (its own rule), not a topic', async () => {
    const sp = await run('agent_knowledge_added', [bot('BotComponentCreate', component('c-sp', 16))], { 'c-sp': sharePoint });
    expect(sp).toMatchObject([{ detail: { basis: 'inventory', sourceType: 'sharePoint' } }]);
    const uncollected = await run('agent_knowledge_added', [bot('BotComponentCreate', component('c-new', 16))]);
    expect(uncollected).toMatchObject([{ detail: { basis: 'record', sourceType: null } }]);
    expect(await run('agent_knowledge_added', [bot('BotComponentCreate', component('c-web', 16))], { 'c-web': website })).toEqual([]);
    expect(await run('agent_knowledge_added', [bot('BotComponentCreate', component('c-topic', 9))])).toEqual([]);
  });

  it('agent_tool_added: a connector tool; not a topic, not an MCP server, not an edit of a tool', async () => {
    const comps = {
      'c-tool': inv({ kind: 'action', tool: tool() }),
      'c-topic': inv({}),
      'c-mcp': inv({ kind: 'mcp', tool: tool({ actionKind: 'InvokeExternalAgentTaskAction' }) }),
    };
    expect(await run('agent_tool_added', [bot('BotComponentCreate', component('c-tool', 9))], comps)).toMatchObject([
      { detail: { connectorId: 'shared_office365', operationId: 'SendEmailV2', connectionMode: 'maker' } },
    ]);
    const misses = [
      bot('BotComponentCreate', component('c-topic', 9)),
      bot('BotComponentCreate', component('c-mcp', 9)),
      bot('BotComponentUpdate', component('c-tool', 9)),
    ];
    expect(await run('agent_tool_added', misses, comps)).toEqual([]);
  });

  it('agent_mcp_server_added: an MCP tool, found by the record ObjectId when the record has no component id; not a connector tool', async () => {
    const comps = {
      'c-mcp': inv({ kind: 'mcp', tool: tool({ actionKind: 'InvokeExternalAgentTaskAction', serverHost: 'mcp.example.net' }) }),
      'c-tool': inv({ kind: 'action', tool: tool() }),
    };
    const byObjectId = bot('BotComponentCreate', [], { ObjectId: 'c-mcp' });
    expect(await run('agent_mcp_server_added', [byObjectId], comps)).toMatchObject([{ detail: { serverHost: 'mcp.example.net' } }]);
    expect(await run('agent_mcp_server_added', [bot('BotComponentCreate', component('c-tool', 9))], comps)).toEqual([]);
  });

  it('agent_instructions_changed: edits of the instructions (one alert per user and hour); not their creation, not a topic edit', async () => {
    const edits = [bot('BotComponentUpdate', component('c-gpt', 15)), bot('BotComponentUpdate', component('c-gpt', 15))];
    const hits = await run('agent_instructions_changed', edits);
    expect(hits).toHaveLength(2);
    expect(new Set(hits.map((h) => h.dedupeKey)).size).toBe(1);
    expect(
      await run('agent_instructions_changed', [bot('BotComponentCreate', component('c-gpt', 15)), bot('BotComponentUpdate', component('c-topic', 9))]),
    ).toEqual([]);
  });

  it('agent_posture_runtime_issue: activity on an agent with an open finding is one issue; not for a low finding, another agent, or a finding opened long after', async () => {
    const events = [bot('BotUpdateOperation-BotPublish'), bot('BotComponentUpdate', component('c-gpt', 15))];
    const [issue, ...rest] = await run('agent_posture_runtime_issue', events, {}, [
      finding(),
      finding({ findingId: 'f-2', checkId: 'agent_public_website_knowledge', firstSeenAt: '2026-11-21T00:00:00Z' }),
    ]);
    expect(rest).toEqual([]);
    expect(issue!.eventIds).toEqual(events.map((e) => e.id));
    expect(issue!.detail).toMatchObject({ agentId: 'bot-1', operations: ['BotComponentUpdate', 'BotUpdateOperation-BotPublish'] });
    expect((issue!.detail.findings as unknown[]).length).toBe(2);
    const misses = [
      finding({ severity: 'low' }),
      finding({ resourceId: 'bot-2' }),
      finding({ firstSeenAt: '2026-12-20T00:00:00Z' }),
      finding({ resourceType: 'environment' }),
    ];
    expect(await run('agent_posture_runtime_issue', events, {}, misses)).toEqual([]);
  });
});
