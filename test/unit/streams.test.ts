import { describe, expect, it } from 'vitest';
import { PERMISSION_CAPABILITIES } from '../../src/core/capabilities.ts';
import { InventoryParams } from '../../src/contract/inventory.ts';
import { INVENTORY, INVENTORY_KINDS, STREAM_RUN_ORDER, STREAMS, streamsGatedBy } from '../../src/sources/index.ts';
import { runOrder, type AnyStream } from '../../src/sources/stream.ts';
import { isEstateStream, listedTableOf } from '../../src/store/stream-tables.ts';
import { readAhead } from '../../src/sources/graph/delta.ts';

/** The order collection has always run in (before the names were derived from the registry). */
const RUN_ORDER = [
  'users',
  'groups',
  'memberships',
  'environments',
  'dataverseUsers',
  'agents',
  'agentComponents',
  'agentSettings',
  'foundryAccounts',
  'foundryProjects',
  'foundryDeployments',
  'foundryRaiPolicies',
  'foundryDiagnosticSettings',
  'copilotInteractions',
  'powerBiWorkspaces',
  'powerBiSharedLinks',
  'powerBiTenantSettings',
  'powerApps',
  'flows',
  'connectors',
  'connections',
  'dlpPolicies',
  'tenantSettings',
  'externalConnections',
  'teamsApps',
  'environmentSettings',
  'conversationTranscripts',
];

const registered = Object.entries(STREAMS) as [string, AnyStream][];

describe('the stream registry: each stream declares what the engine, the store and the API need', () => {
  it('registers every stream under its own name, with a primary key, a token resource and a reader', () => {
    for (const [key, stream] of registered) {
      expect(stream.name, `STREAMS.${key}`).toBe(key);
      expect(stream.primaryKey.length, `${key}: primaryKey`).toBeGreaterThan(0);
      expect(typeof stream.resource, `${key}: resource`).toBe('function');
      expect(typeof stream.read, `${key}: read`).toBe('function');
    }
  });

  it('gives every child stream a registered parent the store can list, and a way to slice it; root streams none', () => {
    const parents = new Set(['groups', 'environments', 'users', 'agents']);
    for (const [key, stream] of registered) {
      if (stream.parent === undefined) {
        expect(stream.slice ?? stream.slices, `${key}: a root stream has one slice`).toBeUndefined();
        continue;
      }
      expect(Object.keys(STREAMS), `${key}: parent`).toContain(stream.parent);
      expect(parents.has(stream.parent) || isEstateStream(stream.parent), `${key}: parent ${stream.parent} is listable`).toBe(true);
      expect(typeof (stream.slice ?? stream.slices), `${key}: slice or slices`).toBe('function');
    }
  });

  it('stores seven streams in their own tables and every other one in estate_objects', () => {
    expect(Object.keys(STREAMS).filter((s) => !isEstateStream(s))).toEqual([
      'users',
      'groups',
      'memberships',
      'environments',
      'dataverseUsers',
      'agents',
      'conversationTranscripts',
    ]);
  });
});

describe('inventory kinds, declared by the streams they list', () => {
  it('are the kinds of the API in the order the portal shows them, each with a unique position', () => {
    expect(INVENTORY_KINDS).toEqual([
      'agents',
      'apps',
      'flows',
      'connectors',
      'connections',
      'environments',
      'users',
      'groups',
      'powerbi-workspaces',
      'foundry-projects',
    ]);
    const positions = registered.flatMap(([, s]) => (s.inventory ? [s.inventory.position] : []));
    expect(new Set(positions).size).toBe(positions.length);
  });

  it('match the registry one for one: every declaration is listed once, under its stream', () => {
    const declared = registered.flatMap(([name, s]) =>
      s.inventory ? [{ kind: s.inventory.kind, stream: name, environment: s.inventory.environment ?? false }] : [],
    );
    expect([...INVENTORY].sort((a, b) => a.kind.localeCompare(b.kind))).toEqual(declared.sort((a, b) => a.kind.localeCompare(b.kind)));
    expect(InventoryParams.shape.kind.options).toEqual(INVENTORY_KINDS);
  });

  it('map onto the store as the API has always read them (table, name column, environment column)', () => {
    expect(Object.fromEntries(INVENTORY.map((e) => [e.kind, listedTableOf(e.stream, e.environment)]))).toEqual({
      agents: { table: 'agents', name: 'name', environment: 'environment_id' },
      apps: { table: 'estate_objects', stream: 'powerApps', name: 'name', environment: 'slice_key' },
      flows: { table: 'estate_objects', stream: 'flows', name: 'name', environment: 'slice_key' },
      connectors: { table: 'estate_objects', stream: 'connectors', name: 'name', environment: 'slice_key' },
      connections: { table: 'estate_objects', stream: 'connections', name: 'name', environment: 'slice_key' },
      environments: { table: 'environments', name: 'display_name' },
      users: { table: 'directory_users', name: 'display_name' },
      groups: { table: 'directory_groups', name: 'display_name' },
      'powerbi-workspaces': { table: 'estate_objects', stream: 'powerBiWorkspaces', name: 'name' },
      'foundry-projects': { table: 'estate_objects', stream: 'foundryProjects', name: 'name' },
    });
  });

  it('refuse a stream whose table cannot be listed', () => {
    expect(() => listedTableOf('memberships', false)).toThrow(/memberships cannot be listed/);
    expect(() => listedTableOf('users', true)).toThrow(/users cannot be filtered by environment/);
  });
});

describe('stream run order, derived from parent links', () => {
  it('is the order collection has always run in (users … conversationTranscripts)', () => {
    expect([...STREAM_RUN_ORDER]).toEqual(RUN_ORDER);
  });

  it('puts every parent before its children, and every registered stream exactly once', () => {
    const position = new Map(STREAM_RUN_ORDER.map((name, i) => [name, i]));
    expect(position.size).toBe(Object.keys(STREAMS).length);
    for (const stream of Object.values(STREAMS)) {
      if (stream.parent) expect(position.get(stream.parent)!, `${stream.name} after ${stream.parent}`).toBeLessThan(position.get(stream.name)!);
    }
  });

  it('moves a child registered before its parent to after it, keeping the rest in registration order', () => {
    expect(runOrder([{ name: 'agents', parent: 'environments' }, { name: 'users' }, { name: 'environments' }, { name: 'teamsApps', parent: 'users' }])).toEqual(
      ['users', 'environments', 'agents', 'teamsApps'],
    );
  });

  it('refuses a parent that is not registered, and a cycle, naming the streams', () => {
    expect(() => runOrder([{ name: 'agents', parent: 'environments' }])).toThrow(/agents: parent environments is not registered/);
    expect(() =>
      runOrder([
        { name: 'a', parent: 'b' },
        { name: 'b', parent: 'a' },
      ]),
    ).toThrow(/cycle: a → b, b → a/);
  });
});

describe('permission capabilities, declared by the streams they gate', () => {
  it('gate the streams of the seed permission table, and the audit feed gates no inventory stream', () => {
    expect(Object.fromEntries(PERMISSION_CAPABILITIES.map((c) => [c.id, streamsGatedBy(c.id)]))).toEqual({
      'directory.users': ['users'],
      'directory.groups': ['groups', 'memberships'],
      'graph.externalConnections': ['externalConnections'],
      'teams.installedApps': ['teamsApps'],
      'copilot.interactions': ['copilotInteractions'],
      'audit.activityFeed': [],
      'powerBi.tenant': ['powerBiWorkspaces', 'powerBiSharedLinks', 'powerBiTenantSettings'],
    });
  });
});

describe('readAhead (delta rounds read the next page while a page is stored)', () => {
  /** A source that logs when each item is asked for and handed over, failing at `failAt` when given. */
  function source(log: string[], n: number, failAt?: number): AsyncGenerator<number> {
    return (async function* () {
      try {
        for (let i = 0; i < n; i++) {
          log.push(`fetch ${i}`);
          await new Promise((r) => setTimeout(r, 1));
          if (i === failAt) throw new Error(`page ${i} failed`);
          yield i;
        }
      } finally {
        log.push('closed');
      }
    })();
  }

  it('hands over the same items in order, the next one asked for before the caller is done with the current', async () => {
    const log: string[] = [];
    for await (const i of readAhead(source(log, 3))) {
      await new Promise((r) => setTimeout(r, 5));
      log.push(`stored ${i}`);
    }
    // The source's end is read ahead too, while the last item is stored.
    expect(log).toEqual(['fetch 0', 'fetch 1', 'stored 0', 'fetch 2', 'stored 1', 'closed', 'stored 2']);
  });

  it('throws a failed page only after the caller handled the pages before it', async () => {
    const log: string[] = [];
    await expect(
      (async () => {
        for await (const i of readAhead(source(log, 3, 1))) log.push(`stored ${i}`);
      })(),
    ).rejects.toThrow('page 1 failed');
    expect(log).toEqual(['fetch 0', 'fetch 1', 'stored 0', 'closed']);
  });

  it('a caller that stops early lets the request under way end and closes the source, with no error left unhandled', async () => {
    const log: string[] = [];
    for await (const i of readAhead(source(log, 5, 1))) {
      log.push(`stored ${i}`);
      break;
    }
    expect(log).toEqual(['fetch 0', 'fetch 1', 'stored 0', 'closed']);
    const quiet: string[] = [];
    for await (const i of readAhead(source(quiet, 5))) {
      quiet.push(`stored ${i}`);
      break;
    }
    expect(quiet).toEqual(['fetch 0', 'fetch 1', 'stored 0', 'closed']);
  });
});

describe('copilotInteractions slices', () => {
  const slice = STREAMS.copilotInteractions.slice!;
  const user = (id: string, licences: unknown) => ({ id, raw: JSON.stringify({ id, displayName: 'A', assignedLicenses: licences }) });
  it('reads the users holding a Copilot licence, whatever the letter case of its SKU id, and no one else', () => {
    expect(slice(user('u1', [{ skuId: '639dec6b-bb19-468b-871c-c5c441c4b0cb' }]))).toEqual({ key: 'u1', params: { userId: 'u1' } });
    expect(slice(user('u2', [{ skuId: '639DEC6B-BB19-468B-871C-C5C441C4B0CB' }, { skuId: 'x' }]))).toEqual({ key: 'u2', params: { userId: 'u2' } });
    expect(slice(user('u3', [{ skuId: '05e9a617-0261-4cee-bb44-138d3ef5d965' }]))).toBeNull();
    expect(slice(user('u4', []))).toBeNull();
    // The SKU id elsewhere in the user's JSON is not a licence.
    expect(slice({ id: 'u5', raw: JSON.stringify({ id: 'u5', jobTitle: '639dec6b-bb19-468b-871c-c5c441c4b0cb', assignedLicenses: [] }) })).toBeNull();
    expect(slice({ id: 'u6', raw: '{not json 639dec6b-bb19-468b-871c-c5c441c4b0cb' })).toBeNull();
    expect(slice({ id: 'u7' })).toBeNull();
  });
});
