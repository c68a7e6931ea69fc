import { describe, expect, it } from 'vitest';
import { PERMISSION_CAPABILITIES } from '../../src/core/capabilities.ts';
import { STREAM_NAMES } from '../../src/core/inventory.ts';
import { STREAM_RUN_ORDER, STREAMS, streamsGatedBy } from '../../src/sources/index.ts';
import { runOrder } from '../../src/sources/stream.ts';

describe('stream run order, derived from parent links', () => {
  it('is the order collection has always run in (users … environmentSettings)', () => {
    expect([...STREAM_RUN_ORDER]).toEqual([...STREAM_NAMES]);
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
      'powerBi.tenant': ['powerBiWorkspaces', 'powerBiSharedLinks'],
    });
  });
});
