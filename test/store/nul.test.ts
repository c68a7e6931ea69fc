import { afterEach, describe, expect, it } from 'vitest';
import { withRaw } from '../../src/store/repositories/auditRaw.ts';
import { storeRecords } from '../../src/sync/audit.ts';
import { upsertRecords } from '../../src/store/repositories/inventory.ts';
import { decodeSegment } from '../../src/store/segments.ts';
import { NUL_REPLACEMENT } from '../../src/store/text.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

/**
 * Issue 14, point 6: a U+0000 in upstream data never fails a page or a blob on PostgreSQL (text cannot hold it). The
 * normalised columns store U+FFFD on both dialects; the raw records keep the original.
 */
const NUL = '\u0000';
const user = (id: string, displayName: string) => ({
  id,
  displayName,
  userPrincipalName: `${id}@contoso.com`,
  mail: null,
  accountEnabled: true,
  userType: 'Member',
  createdDateTime: null,
  raw: { id, displayName },
});

describe.each(DIALECTS)('U+0000 in stored data on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('a user whose display name holds U+0000 is stored with the other users of its page; the raw record keeps it', async () => {
    store = await freshStore(dialect);
    await insertTestIntegration(store.db, 'int_1');
    await upsertRecords(store.db, 'users', 'int_1', 'run_1', [user('u1', 'Ann'), user('u2', `Bob${NUL}Evil`), user('u3', 'Cy')], '2026-11-21T08:00:00.000Z');
    const rows = await store.db.selectFrom('directory_users').select(['id', 'display_name', 'raw']).orderBy('id').execute();
    expect(rows.map((r) => [r.id, r.display_name])).toEqual([
      ['u1', 'Ann'],
      ['u2', `Bob${NUL_REPLACEMENT}Evil`],
      ['u3', 'Cy'],
    ]);
    expect(JSON.parse(rows[1]!.raw)).toEqual({ id: 'u2', displayName: `Bob${NUL}Evil` });
    // Estate objects too: name and attributes.
    await upsertRecords(
      store.db,
      'powerApps',
      'int_1',
      'run_1',
      [{ sliceKey: 'env1', id: 'app1', name: `App${NUL}`, attrs: { owner: `x${NUL}y` }, raw: { name: `App${NUL}` } } as never],
      '2026-11-21T08:00:00.000Z',
    );
    const app = await store.db.selectFrom('estate_objects').select(['name', 'attrs', 'raw']).where('id', '=', 'app1').executeTakeFirstOrThrow();
    expect(app.name).toBe(`App${NUL_REPLACEMENT}`);
    expect(JSON.parse(app.attrs)).toEqual({ owner: `x${NUL}y` });
    expect(JSON.parse(app.raw)).toEqual({ name: `App${NUL}` });
  });

  it('an audit blob with one U+0000 record stores all its records; the raw segment holds the original bytes', async () => {
    store = await freshStore(dialect);
    await insertTestIntegration(store.db, 'int_1');
    const record = (i: number, userId = `user${i}@contoso.com`) => ({
      Id: `id-${i}`,
      CreationTime: '2026-11-21T08:00:00',
      Operation: 'FileAccessed',
      RecordType: 6,
      UserId: userId,
      ObjectId: `https://contoso.sharepoint.com/f${i}`,
    });
    const records = [record(1), record(2, `mallory${NUL}@contoso.com`), record(3)];
    expect(await storeRecords(store.db, 'int_1', 'Audit.General', records, '2026-11-21T09:00:00.000Z')).toBe(3);
    const rows = await store.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
    expect(rows.map((r) => r.user_id)).toEqual(['user1@contoso.com', `mallory${NUL_REPLACEMENT}@contoso.com`, 'user3@contoso.com']);
    expect((await withRaw(store.db, rows)).map((e) => e.raw)).toEqual(records);
    const segment = await store.db.selectFrom('audit_raw_segments').select(['codec', 'data']).executeTakeFirstOrThrow();
    expect(decodeSegment(segment.codec, segment.data)[1]!.UserId).toBe(`mallory${NUL}@contoso.com`);
    // Stored again (a duplicate blob), nothing is new: the key with U+FFFD is the same key.
    expect(await storeRecords(store.db, 'int_1', 'Audit.General', records, '2026-11-21T09:05:00.000Z')).toBe(0);
  });
});
