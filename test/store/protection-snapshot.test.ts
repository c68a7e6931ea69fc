import { afterEach, describe, expect, it } from 'vitest';
import { buildProtectionSnapshot, SnapshotCache } from '../../src/protection/snapshot.ts';
import type { ProtectionSnapshot } from '../../src/protection/types.ts';
import type { AgentComponentAttrs } from '../../src/sources/dataverse/streams/agentComponents.ts';
import type { DlpPolicyAttrs } from '../../src/sources/powerPlatform/streams/dlpPolicies.ts';
import { upsertRecords } from '../../src/store/repositories/inventory.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const NOW = '2026-01-01T00:00:00.000Z';
const BOT = 'AAAAAAAA-0000-4000-8000-000000000001';

function component(id: string, attrs: Partial<AgentComponentAttrs>) {
  const full: AgentComponentAttrs = {
    botId: BOT.toLowerCase(),
    parentComponentId: null,
    schemaName: null,
    componentType: 9,
    yamlKind: null,
    kind: 'topic',
    stateCode: 0,
    modifiedOn: null,
    dataUnparsed: false,
    ...attrs,
  } as AgentComponentAttrs;
  return { sliceKey: 'env-1', id, name: id, attrs: full, raw: {} };
}

function dlp(id: string, environmentType: string, environments: string[], business: string[]) {
  const attrs: DlpPolicyAttrs = {
    displayName: id,
    environmentType,
    environments,
    defaultConnectorsClassification: 'General',
    business,
    nonBusiness: [],
    blocked: [],
    connectorGroupsRead: true,
    createdTime: null,
    lastModifiedTime: null,
  };
  return { sliceKey: '*', id, name: id, attrs, raw: {} };
}

const env = (id: string) => ({ id, displayName: id, sku: 'Production', isDefault: false, region: 'europe', dataverseUrl: null, state: 'Enabled', raw: {} });
const user = (id: string, upn: string, mail: string | null, userType: string) => ({
  id,
  displayName: id,
  userPrincipalName: upn,
  mail,
  accountEnabled: true,
  userType,
  createdDateTime: null,
  raw: {},
});

describe.each(DIALECTS)('protection snapshot from the store on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('holds agents with their tools and knowledge hosts, member domains and DLP business connectors per environment', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_a');
    expect((await buildProtectionSnapshot(db, 'int_a')).collectedAt).toBeNull();
    await upsertRecords(db, 'environments', 'int_a', 'run', [env('env-1'), env('env-2'), env('env-3')], NOW);
    await upsertRecords(
      db,
      'agents',
      'int_a',
      'run',
      [
        {
          environmentId: 'env-1',
          id: BOT,
          name: 'Helpdesk',
          schemaName: 'cra65_helpdesk',
          authenticationMode: null,
          authenticationTrigger: null,
          accessControlPolicy: null,
          ownerId: null,
          publishedOn: null,
          modifiedOn: null,
          createdOn: null,
          stateCode: 0,
          statusCode: 1,
          raw: {},
        },
      ],
      NOW,
    );
    await upsertRecords(
      db,
      'agentComponents',
      'int_a',
      'run',
      [
        component('c1', {
          kind: 'action',
          schemaName: 'cra65_helpdesk.action.SendEmail-SendEmail',
          tool: {
            actionKind: 'InvokeConnectorTaskAction',
            connectionReference: 'x',
            connectorId: 'shared_Office365',
            customConnector: false,
            connectionMode: 'maker',
            operationId: 'SendEmailV2',
            serverHost: null,
            httpHosts: ['API.Example.com'],
            httpOrigins: [],
          } as AgentComponentAttrs['tool'],
        }),
        component('c2', {
          kind: 'knowledge',
          knowledge: {
            sourceType: 'publicWebsite',
            sourceKind: 'x',
            url: 'https://Docs.Contoso.com/a',
            host: 'Docs.Contoso.com',
            connectionName: null,
          } as AgentComponentAttrs['knowledge'],
        }),
        component('c3', { kind: 'mcp', schemaName: 'inactive', stateCode: 1 }),
        component('c4', { kind: 'topic', schemaName: 'greeting' }),
        component('c5', { kind: 'action', schemaName: 'other-bot-tool', botId: 'someone-else' }),
      ],
      NOW,
    );
    await upsertRecords(
      db,
      'users',
      'int_a',
      'run',
      [
        user('u1', 'anna@Contoso.onmicrosoft.com', 'anna@contoso.com', 'Member'),
        user('u2', 'guest_fabrikam.com#EXT#@contoso.onmicrosoft.com', 'guest@fabrikam.com', 'Guest'),
      ],
      NOW,
    );
    await upsertRecords(
      db,
      'dlpPolicies',
      'int_a',
      'run',
      [
        dlp('all', 'AllEnvironments', [], ['shared_office365']),
        dlp('only', 'OnlyEnvironments', ['env-1'], ['shared_SharePointOnline']),
        dlp('except', 'ExceptEnvironments', ['env-1'], ['shared_teams']),
      ],
      NOW,
    );
    const s = await buildProtectionSnapshot(db, 'int_a');
    const agent = s.agents.get(BOT.toLowerCase())!;
    expect(agent).toMatchObject({ id: BOT.toLowerCase(), environmentId: 'env-1', name: 'Helpdesk', knowledgeHosts: ['docs.contoso.com'] });
    expect(agent.tools).toEqual([
      {
        schemaName: 'cra65_helpdesk.action.SendEmail-SendEmail',
        kind: 'action',
        actionKind: 'InvokeConnectorTaskAction',
        connectorId: 'shared_office365',
        customConnector: false,
        operationId: 'SendEmailV2',
        serverHost: null,
        httpHosts: ['api.example.com'],
      },
    ]);
    expect([...s.tenantDomains].sort()).toEqual(['contoso.com', 'contoso.onmicrosoft.com']);
    expect(Object.fromEntries([...s.businessConnectors].map(([k, v]) => [k, [...v].sort()]))).toEqual({
      '*': ['shared_office365'],
      'env-1': ['shared_sharepointonline'],
      'env-2': ['shared_teams'],
      'env-3': ['shared_teams'],
    });
  });
});

describe('SnapshotCache', () => {
  const snap = (n: number): ProtectionSnapshot => ({ collectedAt: String(n), agents: new Map(), tenantDomains: new Set(), businessConnectors: new Map() });

  it('waits for the first build only, then answers from the cache and rebuilds in the background once stale', async () => {
    let builds = 0;
    let now = 0;
    let release: () => void = () => undefined;
    const cache = new SnapshotCache({} as never, {
      now: () => now,
      maxAgeMs: 60_000,
      build: async () => {
        const n = ++builds;
        if (n > 1) await new Promise<void>((r) => (release = r));
        return snap(n);
      },
    });
    const [a, b] = await Promise.all([cache.get('i'), cache.get('i')]);
    expect([a.collectedAt, b.collectedAt, builds]).toEqual(['1', '1', 1]);
    now = 59_000;
    expect((await cache.get('i')).collectedAt).toBe('1');
    expect(builds).toBe(1);
    now = 61_000;
    // Stale: the old snapshot at once, one rebuild started, not awaited.
    expect((await cache.get('i')).collectedAt).toBe('1');
    expect((await cache.get('i')).collectedAt).toBe('1');
    expect(builds).toBe(2);
    release();
    await cache.settle();
    expect((await cache.get('i')).collectedAt).toBe('2');
  });

  it('keeps the previous snapshot when a rebuild fails', async () => {
    let now = 0;
    let fail = false;
    const cache = new SnapshotCache({} as never, {
      now: () => now,
      build: async () => {
        if (fail) throw new Error('store down');
        return snap(1);
      },
    });
    await cache.get('i');
    fail = true;
    now = 120_000;
    expect((await cache.get('i')).collectedAt).toBe('1');
    await cache.settle();
    expect((await cache.get('i')).collectedAt).toBe('1');
  });
});
