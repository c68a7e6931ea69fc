import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PUBLIC_CLOUD } from '../../src/config/cloud.ts';
import type { DirectoryGroup } from '../../src/sources/graph/streams/groups.ts';
import type { DirectoryUser } from '../../src/sources/graph/streams/users.ts';
import { UpstreamHttpError, type HttpClient } from '../../src/platform/http/client.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import type { StreamRecords } from '../../src/sources/index.ts';
import type { Slice, Stream, StreamContext, StreamPage } from '../../src/sources/stream.ts';
import { getDeltaLink, listCheckpoints } from '../../src/store/repositories/runs.ts';
import { collect, type CollectOptions } from '../../src/sync/engine.ts';
import { freshStore, type TestStore } from '../store/dialects.ts';
import { insertTestIntegration } from '../store/fixtures.ts';

/**
 * The sync engine's steps (collect → runStream → readSlice → storePage) on fake streams injected in place of the
 * registry, against a real SQLite store: what a crash, an upstream error or a delta round leaves in the database.
 */

const INTEGRATION = 'int_1';

const user = (id: string): DirectoryUser => ({
  id,
  displayName: id,
  userPrincipalName: `${id}@contoso.com`,
  mail: null,
  accountEnabled: true,
  userType: 'Member',
  createdDateTime: null,
  raw: { id },
});
const group = (id: string): DirectoryGroup => ({ id, displayName: id, mail: null, securityEnabled: true, mailEnabled: false, groupTypes: [], raw: { id } });

/** A page script: the page (or error) answered for each cursor (`''` = from the start), per slice key. */
type Script<R> = Record<string, Record<string, StreamPage<R> | Error>>;

/** A fake stream reading its pages from a script that a test changes between runs; records every read's cursor. */
function scripted<S extends 'users' | 'groups' | 'memberships'>(
  name: S,
  script: { current: Script<StreamRecords[S]> },
  extra: Partial<Stream<S, StreamRecords[S]>> = {},
): Stream<S, StreamRecords[S]> & { reads: { slice: string; cursor: string | null }[] } {
  const reads: { slice: string; cursor: string | null }[] = [];
  return {
    name,
    primaryKey: ['id'],
    resource: () => 'https://graph.microsoft.com',
    reads,
    async *read(_ctx: StreamContext, slice: Slice, from: string | null) {
      reads.push({ slice: slice.key, cursor: from });
      let cursor = from;
      for (;;) {
        const page = script.current[slice.key]?.[cursor ?? ''];
        if (page === undefined) throw new Error(`script: no page for ${slice.key} at ${cursor}`);
        if (page instanceof Error) throw page;
        yield page as never;
        if (page.nextCursor === null) return;
        cursor = page.nextCursor;
      }
    },
    ...extra,
  } as Stream<S, StreamRecords[S]> & { reads: { slice: string; cursor: string | null }[] };
}

/** Fails the next `times` checkpoint writes once armed (a crash between a page's records and its checkpoint). */
class FailCheckpoints implements KyselyPlugin {
  armed = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; into?: { table: { identifier: { name: string } } } };
    if (node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'checkpoints' && this.armed > 0) {
      this.armed--;
      throw new Error('disk full');
    }
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

let store: TestStore;
beforeEach(async () => {
  store = await freshStore('sqlite');
  await insertTestIntegration(store.db, INTEGRATION);
});
afterEach(async () => store?.drop());

const ctx: StreamContext = {
  tenantId: 't-int_1',
  http: { stats: new Map() } as unknown as HttpClient,
  cloud: PUBLIC_CLOUD,
  tokens: { bearer: () => async () => 'token', roles: async () => [] },
  logger: silentLogger(),
};
const run = (streams: CollectOptions['streams'], more: Partial<CollectOptions> = {}) =>
  collect({ db: store.db, integrationId: INTEGRATION, ctx, streams, ...more });

async function users(): Promise<{ id: string; deleted: boolean }[]> {
  const rows = await store.db.selectFrom('directory_users').select(['id', 'deleted_at']).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, deleted: r.deleted_at !== null }));
}

const twoPages: Script<DirectoryUser> = {
  '*': {
    '': { records: [user('u1'), user('u2')], nextCursor: 'c2' },
    c2: { records: [user('u3')], nextCursor: null, deltaLink: 'd1' },
  },
};

describe('sync engine on injected streams', () => {
  it('stores a page and its checkpoint in one transaction: when the checkpoint fails, the page’s records are not stored either', async () => {
    const plugin = new FailCheckpoints();
    const stream = scripted('users', { current: twoPages }, { delta: true });
    const result = await collect({
      db: store.db.withPlugin(plugin),
      integrationId: INTEGRATION,
      ctx,
      streams: { users: stream },
      // The second page's checkpoint fails (the first page's is written).
      afterPage: () => {
        plugin.armed = 1;
      },
    });
    expect((await users()).map((u) => u.id)).toEqual(['u1', 'u2']);
    expect(result.status).toBe('partial');
    expect(result.errors.map((e) => [e.stream, e.slice, e.message])).toEqual([['users', '*', 'disk full']]);
    const [cp] = await listCheckpoints(store.db, result.runId);
    // The slice's error keeps the cursor of the page not stored, so the round goes on from it.
    expect(cp).toMatchObject({ stream: 'users', slice_key: '*', status: 'error', cursor: 'c2', read_mode: 'full', records: 2 });
    // The round's end (and its delta link) was never stored.
    expect(await getDeltaLink(store.db, INTEGRATION, 'users', '*')).toBeUndefined();
  });

  it('a run stopped after a page resumes from its checkpoint: the next page is read, nothing is read or counted twice', async () => {
    const stream = scripted('users', { current: twoPages });
    const stop = new AbortController();
    const first = run({ users: stream }, { signal: stop.signal, afterPage: () => stop.abort(new Error('SIGTERM')) });
    await expect(first).rejects.toMatchObject({ code: 'COLLECTION_ABORTED' });
    expect((await users()).map((u) => u.id)).toEqual(['u1', 'u2']);

    const second = await run({ users: stream });
    expect(second.resumed).toBe(true);
    expect(stream.reads).toEqual([
      { slice: '*', cursor: null },
      { slice: '*', cursor: 'c2' },
    ]);
    expect(second.status).toBe('succeeded');
    expect(second.streams.users.records).toBe(3);
    expect((await users()).map((u) => u.id)).toEqual(['u1', 'u2', 'u3']);
    const [cp] = await listCheckpoints(store.db, second.runId);
    expect(cp).toMatchObject({ status: 'done', cursor: null, records: 3 });
  });

  it('records an errored slice apart from an empty one', async () => {
    const groups = scripted('groups', { current: { '*': { '': { records: [group('g1'), group('g2')], nextCursor: null } } } });
    const memberships = scripted(
      'memberships',
      {
        current: {
          g1: {
            '': new UpstreamHttpError(
              'graph',
              'GET',
              'https://graph.microsoft.com/v1.0/groups/g1/members',
              403,
              'Authorization_RequestDenied',
              'Insufficient privileges',
            ),
          },
          g2: { '': { records: [], nextCursor: null } },
        },
      },
      { parent: 'groups', slice: (row) => ({ key: row.id, params: {} }) },
    );
    const result = await run({ memberships, groups });
    expect(result.status).toBe('partial');
    expect(result.streams.memberships).toMatchObject({ slices: 2, erroredSlices: 1, records: 0 });
    expect(result.errors).toEqual([expect.objectContaining({ stream: 'memberships', slice: 'g1', code: 'Authorization_RequestDenied' })]);
    const cps = (await listCheckpoints(store.db, result.runId))
      .filter((c) => c.stream === 'memberships')
      .sort((a, b) => a.slice_key.localeCompare(b.slice_key));
    expect(cps.map((c) => [c.slice_key, c.status, c.error_code, c.records])).toEqual([
      ['g1', 'error', 'Authorization_RequestDenied', 0],
      ['g2', 'done', null, 0],
    ]);
  });

  it('marks objects deleted only after a complete full round, never after an errored or a delta round, and stores each slice’s read mode', async () => {
    const script = { current: { '*': { '': { records: [user('u1'), user('u2'), user('u3')], nextCursor: null, deltaLink: 'd1' } } } as Script<DirectoryUser> };
    const stream = scripted('users', script, { delta: true });
    const first = await run({ users: stream });
    expect((await listCheckpoints(store.db, first.runId))[0]).toMatchObject({ status: 'done', read_mode: 'full' });
    expect(await getDeltaLink(store.db, INTEGRATION, 'users', '*')).toBe('d1');

    // A delta round: only the changes come back. The removal it reports is applied; users it did not see stay.
    script.current = { '*': { d1: { records: [user('u1')], removed: ['u2'], nextCursor: null, deltaLink: 'd2' } } };
    const delta = await run({ users: stream });
    expect(stream.reads.at(-1)).toEqual({ slice: '*', cursor: 'd1' });
    expect((await listCheckpoints(store.db, delta.runId))[0]).toMatchObject({ status: 'done', read_mode: 'delta' });
    expect(delta.streams.users.incrementalSlices).toBe(1);
    expect(delta.markedDeleted).toBe(1);
    expect(await users()).toEqual([
      { id: 'u1', deleted: false },
      { id: 'u2', deleted: true },
      { id: 'u3', deleted: false },
    ]);

    // A full round (`--full`) stopped by an error after its first page: u3, not seen, is not marked deleted.
    script.current = { '*': { '': { records: [user('u1')], nextCursor: 'c2' }, c2: new Error('connection reset') } };
    const broken = await run({ users: stream }, { full: true });
    expect(broken.status).toBe('partial');
    expect(broken.markedDeleted).toBe(0);
    expect((await users()).find((u) => u.id === 'u3')).toEqual({ id: 'u3', deleted: false });

    // A complete full round: what it did not see (u3) is marked deleted.
    script.current = { '*': { '': { records: [user('u1')], nextCursor: null, deltaLink: 'd3' } } };
    const full = await run({ users: stream }, { full: true });
    expect((await listCheckpoints(store.db, full.runId))[0]).toMatchObject({ status: 'done', read_mode: 'full' });
    expect(full.markedDeleted).toBe(1);
    expect(await users()).toEqual([
      { id: 'u1', deleted: false },
      { id: 'u2', deleted: true },
      { id: 'u3', deleted: true },
    ]);
  });
});
