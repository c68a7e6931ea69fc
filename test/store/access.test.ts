import { afterEach, describe, expect, it } from 'vitest';
import {
  addPortalUser,
  authenticateApiKey,
  authenticateSession,
  createApiKey,
  csrfMatches,
  DEFAULT_ACCESS_POLICY,
  ensureOrganization,
  listApiKeys,
  revokeApiKey,
  signIn,
  signOut,
} from '../../src/access/index.ts';
import { VigilError } from '../../src/core/errors.ts';
import { migrateTo, migrate } from '../../src/store/db.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';

const PASSWORD = 'correct horse battery staple';

/** Every text value in every row of the access tables, to look for plain secrets. */
async function storedText(store: TestStore): Promise<string> {
  const tables = ['organizations', 'portal_users', 'portal_sessions', 'api_keys'] as const;
  const rows = await Promise.all(tables.map((t) => store.db.selectFrom(t).selectAll().execute()));
  return JSON.stringify(rows);
}

async function rejection(p: Promise<unknown>): Promise<VigilError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VigilError);
  return e as VigilError;
}

describe.each(DIALECTS)('access on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('upgrading to 0010 puts existing integrations in the default organization', async () => {
    store = await freshStore(dialect, { migrate: false });
    await migrateTo(store.db, '0009_sink_outbox');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    await (store.db as any).insertInto('integrations').values({ id: 'int_old', name: 'old', mode: 'customer-app', tenant_id: 't', client_id: 'c', sp_object_id: null, secret_envelope: null, secret_expires_at: null, verification: null, verified_at: null, created_at: 'x', updated_at: 'x', credential_state: 'ok', credential_error: null, secret_rotated_at: null }).execute();
    await migrate(store.db);
    expect(await store.db.selectFrom('integrations').select(['id', 'organization_id']).execute()).toEqual([{ id: 'int_old', organization_id: 'org_default' }]);
    expect((await ensureOrganization(store.db)).id).toBe('org_default');
  });

  it('adds users with validated fields; signs in with a session and CSRF token that are never stored in plain text', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    expect((await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'not-an-email', password: PASSWORD, role: 'admin' }))).field).toBe('email');
    expect((await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: 'short', role: 'admin' }))).field).toBe('password');
    expect((await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'owner' }))).field).toBe('role');
    const ann = await addPortalUser(store.db, { organizationId: org.id, email: 'Ann@Contoso.com', password: PASSWORD, role: 'admin' });
    expect(ann).toMatchObject({ email: 'ann@contoso.com', role: 'admin', organizationId: org.id });
    // The answer for a taken address is one and the same in its own organization and in another: it names neither.
    const same = await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'viewer' }));
    const other = await rejection(addPortalUser(store.db, { organizationId: (await ensureOrganization(store.db, 'Fabrikam')).id, email: 'ANN@contoso.com', password: PASSWORD, role: 'viewer' }));
    expect(same.code).toBe('EMAIL_UNAVAILABLE');
    expect({ code: other.code, message: other.message, remediation: other.remediation, field: other.field }).toEqual({ code: same.code, message: same.message, remediation: same.remediation, field: same.field });
    expect(`${other.message} ${other.remediation}`).not.toMatch(/Contoso\b|usr_|org_/);

    const s = await signIn(store.db, 'ANN@contoso.com', PASSWORD);
    expect(s.user.id).toBe(ann.id);
    const principal = await authenticateSession(store.db, s.sessionToken);
    expect(principal).toMatchObject({ kind: 'user', userId: ann.id, organizationId: org.id, role: 'admin' });
    expect(csrfMatches(principal!, s.csrfToken)).toBe(true);
    expect(csrfMatches(principal!, undefined)).toBe(false);
    expect(csrfMatches(principal!, s.sessionToken)).toBe(false);

    const text = await storedText(store);
    for (const secret of [PASSWORD, s.sessionToken, s.csrfToken]) expect(text).not.toContain(secret);

    await signOut(store.db, s.sessionToken);
    expect(await authenticateSession(store.db, s.sessionToken)).toBeNull();
  });

  it('ends sessions at the idle and the absolute timeout', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'viewer' });
    const t0 = new Date('2026-11-21T08:00:00Z');
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    const idle = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, t0);
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(1700))).not.toBeNull();
    // Used at 1700 s: the idle clock restarts, so 3000 s is 1300 s idle.
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(3000))).not.toBeNull();
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(3000 + 1801))).toBeNull();
    // Gone for good once it timed out.
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(3000))).toBeNull();

    const busy = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, t0);
    let t = 0;
    for (; t < DEFAULT_ACCESS_POLICY.absoluteTimeoutSeconds - 600; t += 1200) expect(await authenticateSession(store.db, busy.sessionToken, DEFAULT_ACCESS_POLICY, at(t))).not.toBeNull();
    expect(await authenticateSession(store.db, busy.sessionToken, DEFAULT_ACCESS_POLICY, at(DEFAULT_ACCESS_POLICY.absoluteTimeoutSeconds))).toBeNull();
  });

  it('locks an account after five failures in a row, with the same answer as an unknown email', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'admin' });
    const t0 = new Date('2026-11-21T08:00:00Z');
    const unknown = await rejection(signIn(store.db, 'nobody@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, t0));
    for (let i = 0; i < 5; i++) {
      const wrong = await rejection(signIn(store.db, 'ann@contoso.com', `wrong password ${i}`, DEFAULT_ACCESS_POLICY, t0));
      expect([wrong.code, wrong.message]).toEqual([unknown.code, unknown.message]);
    }
    // Locked: the right password is refused too, until the lock-out ends.
    expect((await rejection(signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, new Date(t0.getTime() + 60_000)))).code).toBe('SIGN_IN_FAILED');
    const after = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, new Date(t0.getTime() + (DEFAULT_ACCESS_POLICY.lockoutSeconds + 1) * 1000));
    expect(after.user.lockedUntil).toBeNull();
  });

  it('API keys: shown once, stored hashed, scoped to their organization, revocable, expiring', async () => {
    store = await freshStore(dialect);
    const contoso = await ensureOrganization(store.db, 'Contoso');
    const fabrikam = await ensureOrganization(store.db, 'Fabrikam');
    expect((await rejection(createApiKey(store.db, { organizationId: contoso.id, name: '', role: 'viewer' }))).field).toBe('name');
    expect((await rejection(createApiKey(store.db, { organizationId: contoso.id, name: 'x', role: 'viewer', expiresAt: '2020-01-01' }))).field).toBe('expiresAt');
    const { key, apiKey } = await createApiKey(store.db, { organizationId: contoso.id, name: 'sentinel', role: 'viewer', createdBy: 'ann@contoso.com' });
    expect(key).toMatch(/^vgl_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(await listApiKeys(store.db, contoso.id))).not.toContain(key);
    expect(await storedText(store)).not.toContain(key);
    expect(await listApiKeys(store.db, fabrikam.id)).toEqual([]);

    expect(await authenticateApiKey(store.db, key)).toMatchObject({ kind: 'apiKey', keyId: apiKey.id, organizationId: contoso.id, role: 'viewer' });
    expect(await authenticateApiKey(store.db, `${key.slice(0, -1)}A`)).toBeNull();
    // Another organization cannot revoke it, and learns nothing from trying.
    expect((await rejection(revokeApiKey(store.db, fabrikam.id, apiKey.id))).kind).toBe('not-found');
    await revokeApiKey(store.db, contoso.id, apiKey.id);
    expect(await authenticateApiKey(store.db, key)).toBeNull();

    const now = new Date('2026-11-21T08:00:00Z');
    const expiring = await createApiKey(store.db, { organizationId: contoso.id, name: 'ci', role: 'admin', expiresAt: '2026-12-01T00:00:00Z' }, now);
    expect(await authenticateApiKey(store.db, expiring.key, now)).not.toBeNull();
    expect(await authenticateApiKey(store.db, expiring.key, new Date('2026-12-01T00:00:01Z'))).toBeNull();
  });
});
