import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { getCursor } from '../../src/store/repositories/audit.ts';
import { decodeSegment } from '../../src/store/segments.ts';
import { NUL_REPLACEMENT } from '../../src/store/text.ts';
import { ingestAudit } from '../../src/sync/audit.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { apiWorld, type ApiWorld } from '../api/harness.ts';
import { freshStore, type TestStore } from '../store/dialects.ts';
import { world, type World } from './harness.ts';

/**
 * Issue 14, point 6, on real PostgreSQL (SQLite always coped): upstream data carrying U+0000 — a user's display name,
 * a field of one audit record — is stored with its neighbours; the raw audit record keeps it byte-exact.
 */
const T = Date.parse('2026-11-20T12:00:00Z');
const NUL = '\u0000';

describe('U+0000 from upstream on PostgreSQL', () => {
  let w: World;
  let pg: TestStore;
  beforeAll(async () => {
    w = await world({ seed: 'nul', sizes: { users: 12, guests: 1, groups: 2, environments: 1, agents: 2 } });
    w.emulator.control.setClock(new Date(T).toISOString());
    w.emulator.control.configureFeed(w.tenant.id, { recordsPerHour: 20, blobSize: 10, since: new Date(T - 24 * 3_600_000).toISOString() });
    pg = await freshStore('postgres', { migrate: false });
    await pg.db.destroy();
  });
  afterAll(async () => {
    await w?.close();
    await pg?.drop().catch(() => undefined);
  });

  it('a user whose display name holds U+0000: the users stream and its children succeed, every user stored', async () => {
    const victim = w.tenant.users.find((u) => u.userType === 'Member')!;
    w.emulator.control.update(w.tenant.id, 'users', victim.id, { displayName: `Eve${NUL}Evil` });
    const rt = await w.runtime(pg.dataDir, pg.env);
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const run = await collectIntegration(rt, integration.id);
    expect(run.errors.filter((e) => ['users', 'teamsApps', 'copilotInteractions', 'memberships'].includes(e.stream))).toEqual([]);
    expect(run.streams.users).toMatchObject({ records: w.truth.users, erroredSlices: 0 });
    expect(run.streams.teamsApps.erroredSlices).toBe(0);
    const stored = await rt.db.selectFrom('directory_users').select(['id', 'display_name', 'raw']).where('id', '=', victim.id).executeTakeFirstOrThrow();
    expect(stored.display_name).toBe(`Eve${NUL_REPLACEMENT}Evil`);
    expect((JSON.parse(stored.raw) as { displayName: string }).displayName).toBe(`Eve${NUL}Evil`);
  }, 120_000);

  it('an audit blob with one U+0000 record among clean ones: all are stored, the cursor moves, the raw segment keeps the bytes', async () => {
    const rt = await w.runtime(pg.dataDir, pg.env);
    const integration = (await rt.db.selectFrom('integrations').select('id').executeTakeFirstOrThrow()).id;
    const [planted] = w.emulator.control.addAuditRecords(
      w.tenant.id,
      'Audit.General',
      [
        { Operation: 'FileAccessed', RecordType: 6, UserId: 'ann@contoso.test' },
        { Operation: `File${NUL}Accessed`, RecordType: 6, UserId: `mallory${NUL}@contoso.test`, ObjectId: `https://contoso.sharepoint.com/${NUL}` },
        { Operation: 'FileAccessed', RecordType: 6, UserId: 'bob@contoso.test' },
      ],
      { contentCreated: new Date(T - 60 * 60_000).toISOString() },
    );
    const r = await ingestAudit(rt, integration, { now: new Date(T), initialLookbackHours: 3, contentTypes: ['Audit.General'], powerBi: false });
    expect(r.contentTypes['Audit.General']!.status, JSON.stringify(r).slice(0, 600)).toBe('ok');
    const rows = await rt.db
      .selectFrom('audit_events')
      .select(['id', 'user_id', 'operation', 'raw_segment_id', 'raw_index'])
      .where('id', 'in', planted!.ids)
      .orderBy('raw_index')
      .execute();
    expect(rows.map((e) => e.id)).toEqual(planted!.ids);
    expect(rows[1]).toMatchObject({ user_id: `mallory${NUL_REPLACEMENT}@contoso.test`, operation: `File${NUL_REPLACEMENT}Accessed` });
    const cursor = await getCursor(rt.db, integration, 'Audit.General');
    expect(cursor!.last_error).toBeNull();
    expect(Date.parse(cursor!.cursor_time)).toBeGreaterThan(T - 60 * 60_000);
    const segment = await rt.db.selectFrom('audit_raw_segments').select(['codec', 'data']).where('id', '=', rows[1]!.raw_segment_id).executeTakeFirstOrThrow();
    expect(decodeSegment(segment.codec, segment.data)[rows[1]!.raw_index]).toMatchObject({
      UserId: `mallory${NUL}@contoso.test`,
      ObjectId: `https://contoso.sharepoint.com/${NUL}`,
    });
  }, 120_000);
});

describe('NUL in API input on PostgreSQL', () => {
  let api: ApiWorld;
  let pg: TestStore;
  beforeAll(async () => {
    pg = await freshStore('postgres', { migrate: false });
    await pg.db.destroy();
    api = await apiWorld(pg.env);
  });
  afterAll(async () => {
    await api?.close();
    await pg?.drop().catch(() => undefined);
  });

  it('sign-in with U+0000 in the email answers 400 naming the field, not 500', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: `admin@contoso.test${NUL}`, password: api.password } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'NUL_IN_INPUT', field: 'email' });
  });
});
