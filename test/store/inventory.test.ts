import { afterEach, describe, expect, it } from 'vitest';
import type { GroupMembership } from '../../src/sources/graph/streams/memberships.ts';
import type { DirectoryUser } from '../../src/sources/graph/streams/users.ts';
import type { Kysely } from 'kysely';
import { migrate, migrateTo, migrationStatus } from '../../src/store/db.ts';
import { withRaw } from '../../src/store/repositories/auditRaw.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { countLive, markUnseen, upsertRecords } from '../../src/store/repositories/inventory.ts';
import { findRunningRun, insertRun, listCheckpoints, saveCheckpoint } from '../../src/store/repositories/runs.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const user = (id: string, name = id) => ({
  id,
  displayName: name,
  userPrincipalName: `${id}@x`,
  mail: null,
  accountEnabled: true,
  userType: 'Member',
  createdDateTime: null,
  raw: { id, displayName: name },
});
const member = (groupId: string, memberId: string): GroupMembership => ({ groupId, memberId, memberType: 'user', raw: { id: memberId } });

describe.each(DIALECTS)('store on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('migrations are applied once and reported', async () => {
    store = await freshStore(dialect);
    expect(await migrate(store.db)).toEqual([]);
    expect((await migrationStatus(store.db)).map((m) => [m.name, m.executedAt instanceof Date])).toEqual([
      ['0001_initial', true],
      ['0002_schedules_budgets', true],
      ['0003_credential_state', true],
      ['0004_audit', true],
      ['0005_audit_segments', true],
      ['0006_finding_lifecycle', true],
      ['0007_stream_states', true],
      ['0008_estate_objects', true],
      ['0009_sink_outbox', true],
      ['0010_access', true],
      ['0011_slice_read_mode', true],
      ['0012_consent_binding', true],
      ['0013_budget_pace', true],
      ['0014_protection', true],
      ['0015_containment', true],
      ['0016_alert_history', true],
      ['0017_transcript_turns', true],
      ['0018_posture_days', true],
    ]);
  });

  it('upgrading from 0004 keeps every audit event with its raw record, and the IP history', async () => {
    store = await freshStore(dialect, { migrate: false });
    const db = store.db;
    await migrateTo(db, '0004_audit');
    await insertTestIntegration(db, 'int_1');
    const raws = Array.from({ length: 1203 }, (_, i) => ({
      Id: `id-${String(i).padStart(5, '0')}`,
      CreationTime: '2026-11-01T08:00:00',
      Operation: 'CopilotInteraction',
      UserId: i % 2 ? 'Ann@contoso.com' : 'bob@contoso.com',
      ClientIP: `203.0.113.${i % 3}`,
      Note: `é ${i}`,
    }));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const old = db as unknown as Kysely<any>;
    for (let i = 0; i < raws.length; i += 400) {
      await old
        .insertInto('audit_events')
        .values(
          raws.slice(i, i + 400).map((r) => ({
            integration_id: 'int_1',
            id: r.Id,
            content_type: 'Audit.General',
            record_type: 261,
            creation_time: '2026-11-01T08:00:00.000Z',
            operation: r.Operation,
            workload: null,
            user_id: r.UserId,
            user_type: 0,
            client_ip: r.ClientIP,
            object_id: null,
            organization_id: null,
            raw: JSON.stringify(r),
            ingested_at: '2026-11-01T09:00:00.000Z',
          })),
        )
        .execute();
    }
    expect(await migrate(db)).toEqual([
      '0005_audit_segments',
      '0006_finding_lifecycle',
      '0007_stream_states',
      '0008_estate_objects',
      '0009_sink_outbox',
      '0010_access',
      '0011_slice_read_mode',
      '0012_consent_binding',
      '0013_budget_pace',
      '0014_protection',
      '0015_containment',
      '0016_alert_history',
      '0017_transcript_turns',
      '0018_posture_days',
    ]);
    const events = await withRaw(db, await db.selectFrom('audit_events').selectAll().orderBy('id').execute());
    expect(events.map((e) => e.raw)).toEqual(raws);
    expect(await db.selectFrom('audit_user_ips').select(['user_key', 'client_ip']).orderBy('user_key').orderBy('client_ip').execute()).toEqual(
      ['ann@contoso.com', 'bob@contoso.com'].flatMap((u) => ['203.0.113.0', '203.0.113.1', '203.0.113.2'].map((ip) => ({ user_key: u, client_ip: ip }))),
    );
  });

  it('upserts idempotently, keeps first seen, dedupes within a batch, and marks unseen rows deleted', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    await upsertRecords(db, 'users', 'int_1', 'run1', [user('a'), user('b'), user('b', 'B twice')], '2026-01-01T00:00:00.000Z');
    await upsertRecords(db, 'users', 'int_1', 'run2', [user('a', 'A renamed')], '2026-01-02T00:00:00.000Z');
    expect(await markUnseen(db, 'users', 'int_1', 'run2', 'all', '2026-01-02T00:00:00.000Z')).toBe(1);
    const rows = await db.selectFrom('directory_users').selectAll().orderBy('id').execute();
    expect(rows.map((r) => [r.id, r.display_name, r.first_seen_at, r.deleted_at])).toEqual([
      ['a', 'A renamed', '2026-01-01T00:00:00.000Z', null],
      ['b', 'B twice', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'],
    ]);
    expect((await countLive(db, 'int_1', STREAM_RUN_ORDER)).users).toBe(1);
    // Seen again: alive again.
    await upsertRecords(db, 'users', 'int_1', 'run3', [user('b')], '2026-01-03T00:00:00.000Z');
    expect((await countLive(db, 'int_1', STREAM_RUN_ORDER)).users).toBe(2);
  });

  it('stores a 457-record page whole: every column, the last of repeated copies, first seen kept when stored again', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    // 457 records (statements of 200, 40, 8 and 1 rows), of which 12 repeat an earlier id with a new name.
    const page: DirectoryUser[] = Array.from({ length: 445 }, (_, i) => user(`u${String(i).padStart(3, '0')}`));
    for (let i = 0; i < 12; i++) page.splice(300 + i * 10, 0, user(`u${String(i * 25).padStart(3, '0')}`, `copy ${i}`));
    page[7] = { ...page[7]!, mail: 'm@x', accountEnabled: false, userType: 'Guest', createdDateTime: '2026-01-01T00:00:00Z' };
    await upsertRecords(db, 'users', 'int_1', 'run1', page, 't1');
    const read = () => db.selectFrom('directory_users').selectAll().where('integration_id', '=', 'int_1').orderBy('id').execute();
    const rows = await read();
    expect(rows).toHaveLength(445);
    expect(rows.filter((r) => r.display_name!.startsWith('copy ')).map((r) => [r.id, r.display_name])).toEqual(
      Array.from({ length: 12 }, (_, i) => [`u${String(i * 25).padStart(3, '0')}`, `copy ${i}`]),
    );
    expect(rows[7]).toMatchObject({
      id: 'u007',
      display_name: 'u007',
      user_principal_name: 'u007@x',
      mail: 'm@x',
      account_enabled: 0,
      user_type: 'Guest',
      created_date_time: '2026-01-01T00:00:00Z',
      first_seen_at: 't1',
      last_seen_at: 't1',
      last_seen_run: 'run1',
      deleted_at: null,
    });
    expect(JSON.parse(rows[444]!.raw)).toEqual({ id: 'u444', displayName: 'u444' });
    expect(await markUnseen(db, 'users', 'int_1', 'run2', 'all', 't2')).toBe(445);
    await upsertRecords(db, 'users', 'int_1', 'run2', page.slice(0, 250), 't3');
    const again = await read();
    expect(again.filter((r) => r.deleted_at === null)).toHaveLength(250);
    expect(again[0]).toMatchObject({ first_seen_at: 't1', last_seen_at: 't3', last_seen_run: 'run2', deleted_at: null });
    // Estate objects: keyed by stream and id, attrs as JSON.
    const flows = Array.from({ length: 203 }, (_, i) => ({ sliceKey: 'env-1', id: `f${i}`, name: `Flow ${i}`, attrs: { n: i } as never, raw: { i } }));
    await upsertRecords(db, 'flows', 'int_1', 'run1', [...flows, { ...flows[0]!, name: 'Renamed' }], 't1');
    const estate = await db.selectFrom('estate_objects').selectAll().where('stream', '=', 'flows').orderBy('name').execute();
    expect(estate).toHaveLength(203);
    expect(estate.find((o) => o.id === 'f0')).toMatchObject({ slice_key: 'env-1', name: 'Renamed', attrs: '{"n":0}', raw: '{"i":0}' });
  });

  it('marks child rows deleted only in completed slices, and orphans of deleted parents', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const groups = ['g1', 'g2', 'g3'].map((id) => ({ id, displayName: id, mail: null, securityEnabled: true, mailEnabled: false, groupTypes: [], raw: {} }));
    await upsertRecords(db, 'groups', 'int_1', 'run1', groups, 't1');
    await upsertRecords(db, 'memberships', 'int_1', 'run1', [member('g1', 'u1'), member('g1', 'u2'), member('g2', 'u1'), member('g3', 'u1')], 't1');
    // Run 2: g3 is gone; g1 completed without u2; g2 errored (not completed).
    await upsertRecords(db, 'groups', 'int_1', 'run2', groups.slice(0, 2), 't2');
    await markUnseen(db, 'groups', 'int_1', 'run2', 'all', 't2');
    await upsertRecords(db, 'memberships', 'int_1', 'run2', [member('g1', 'u1')], 't2');
    expect(await markUnseen(db, 'memberships', 'int_1', 'run2', ['g1'], 't2')).toBe(2);
    const live = await db
      .selectFrom('group_memberships')
      .select(['group_id', 'member_id'])
      .where('deleted_at', 'is', null)
      .orderBy('group_id')
      .orderBy('member_id')
      .execute();
    expect(live).toEqual([
      { group_id: 'g1', member_id: 'u1' },
      { group_id: 'g2', member_id: 'u1' },
    ]);
  });

  it('accumulates checkpoint record counts and finds the running run', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    await insertRun(db, { id: 'run1', integration_id: 'int_1', started_at: 't', owner_host: 'h', owner_pid: 1 });
    await saveCheckpoint(db, {
      runId: 'run1',
      stream: 'users',
      sliceKey: '*',
      status: 'in_progress',
      cursor: 'next1',
      readMode: 'delta',
      addRecords: 999,
      at: 't1',
    });
    expect(await listCheckpoints(db, 'run1')).toEqual([expect.objectContaining({ status: 'in_progress', read_mode: 'delta' })]);
    // A delta state lost upstream turns the round into a full one: the mode is replaced with the cursor.
    await saveCheckpoint(db, { runId: 'run1', stream: 'users', sliceKey: '*', status: 'done', cursor: null, readMode: 'full', addRecords: 5, at: 't2' });
    expect(await listCheckpoints(db, 'run1')).toEqual([expect.objectContaining({ status: 'done', cursor: null, records: 1004, read_mode: 'full' })]);
    expect((await findRunningRun(db, 'int_1'))?.id).toBe('run1');
  });
});
