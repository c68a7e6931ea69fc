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
  purgeStaleSessions,
  revokeApiKey,
  signIn,
  signOut,
  updatePortalUser,
} from '../../src/access/index.ts';
import { VigilError } from '../../src/core/errors.ts';
import { migrateTo, migrate } from '../../src/store/db.ts';
import { countSignInAttempt, insertPortalUser, lockPortalUser } from '../../src/store/repositories/access.ts';
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
    await (store.db as any)
      .insertInto('integrations')
      .values({
        id: 'int_old',
        name: 'old',
        mode: 'customer-app',
        tenant_id: 't',
        client_id: 'c',
        sp_object_id: null,
        secret_envelope: null,
        secret_expires_at: null,
        verification: null,
        verified_at: null,
        created_at: 'x',
        updated_at: 'x',
        credential_state: 'ok',
        credential_error: null,
        secret_rotated_at: null,
      })
      .execute();
    await migrate(store.db);
    expect(await store.db.selectFrom('integrations').select(['id', 'organization_id']).execute()).toEqual([{ id: 'int_old', organization_id: 'org_default' }]);
    expect((await ensureOrganization(store.db)).id).toBe('org_default');
  });

  it('adds users with validated fields; signs in with a session and CSRF token that are never stored in plain text', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    expect((await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'not-an-email', password: PASSWORD, role: 'admin' }))).field).toBe(
      'email',
    );
    expect((await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: 'short', role: 'admin' }))).field).toBe(
      'password',
    );
    expect((await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'owner' }))).field).toBe(
      'role',
    );
    const ann = await addPortalUser(store.db, { organizationId: org.id, email: 'Ann@Contoso.com', password: PASSWORD, role: 'admin' });
    expect(ann).toMatchObject({ email: 'ann@contoso.com', role: 'admin', organizationId: org.id });
    // The answer for a taken address is one and the same in its own organization and in another: it names neither.
    const same = await rejection(addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'viewer' }));
    const other = await rejection(
      addPortalUser(store.db, {
        organizationId: (await ensureOrganization(store.db, 'Fabrikam')).id,
        email: 'ANN@contoso.com',
        password: PASSWORD,
        role: 'viewer',
      }),
    );
    expect(same.code).toBe('EMAIL_UNAVAILABLE');
    expect({ code: other.code, message: other.message, remediation: other.remediation, field: other.field }).toEqual({
      code: same.code,
      message: same.message,
      remediation: same.remediation,
      field: same.field,
    });
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

  it("an admin changes a user's role and disables the account: its sessions end at once, and the organization keeps one enabled admin", async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    const other = await ensureOrganization(store.db, 'Fabrikam');
    const ann = await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'admin' });
    const bob = await addPortalUser(store.db, { organizationId: org.id, email: 'bob@contoso.com', password: PASSWORD, role: 'viewer' });
    const eve = await addPortalUser(store.db, { organizationId: other.id, email: 'eve@fabrikam.com', password: PASSWORD, role: 'admin' });

    // The only admin can be neither demoted nor disabled; nothing changes.
    const demote = await rejection(updatePortalUser(store.db, org.id, ann.id, { role: 'viewer' }));
    expect({ code: demote.code, kind: demote.kind, field: demote.field }).toEqual({ code: 'LAST_ADMIN', kind: 'conflict', field: 'role' });
    expect((await rejection(updatePortalUser(store.db, org.id, ann.id, { disabled: true }))).field).toBe('disabled');
    expect((await rejection(updatePortalUser(store.db, org.id, ann.id, {}))).code).toBe('NO_CHANGE');
    expect((await rejection(updatePortalUser(store.db, org.id, bob.id, { role: 'owner' }))).field).toBe('role');
    // Another organization's user is as unknown as one that never existed, and stays as it was.
    const foreign = await rejection(updatePortalUser(store.db, org.id, eve.id, { disabled: true }));
    const never = await rejection(updatePortalUser(store.db, org.id, 'usr_never', { disabled: true }));
    expect([foreign.code, foreign.kind]).toEqual(['USER_NOT_FOUND', 'not-found']);
    expect(foreign.message.replace(eve.id, 'X')).toBe(never.message.replace('usr_never', 'X'));
    expect((await signIn(store.db, 'eve@fabrikam.com', PASSWORD)).user.disabled).toBe(false);

    // Bob signed in as a viewer becomes an admin: his open session carries the new role at its next request.
    const bobSession = await signIn(store.db, 'bob@contoso.com', PASSWORD);
    expect(await updatePortalUser(store.db, org.id, bob.id, { role: 'admin' })).toMatchObject({ id: bob.id, role: 'admin', disabled: false });
    expect(await authenticateSession(store.db, bobSession.sessionToken)).toMatchObject({ userId: bob.id, role: 'admin' });
    // With two admins, Ann may now step down; then Bob is the last one.
    expect(await updatePortalUser(store.db, org.id, ann.id, { role: 'viewer' })).toMatchObject({ role: 'viewer' });
    expect((await rejection(updatePortalUser(store.db, org.id, bob.id, { disabled: true }))).code).toBe('LAST_ADMIN');

    // Disabling Ann ends her session in the same step and refuses her sign-in; enabling her lets her in again.
    const annSession = await signIn(store.db, 'ann@contoso.com', PASSWORD);
    expect(await updatePortalUser(store.db, org.id, ann.id, { disabled: true })).toMatchObject({ disabled: true });
    expect(await store.db.selectFrom('portal_sessions').select('id').where('user_id', '=', ann.id).execute()).toEqual([]);
    expect(await authenticateSession(store.db, annSession.sessionToken)).toBeNull();
    expect((await rejection(signIn(store.db, 'ann@contoso.com', PASSWORD))).code).toBe('SIGN_IN_FAILED');
    // A disabled admin does not count as the organization's admin.
    await updatePortalUser(store.db, org.id, ann.id, { role: 'admin' });
    expect((await rejection(updatePortalUser(store.db, org.id, bob.id, { role: 'viewer' }))).code).toBe('LAST_ADMIN');
    expect(await updatePortalUser(store.db, org.id, ann.id, { disabled: false })).toMatchObject({ role: 'admin', disabled: false });
    expect((await signIn(store.db, 'ann@contoso.com', PASSWORD)).user.id).toBe(ann.id);
  });

  it('two admins disabling each other at once: one change is made, the other refused, and one enabled admin remains', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    // The users never sign in: their rows are written directly, without a password's scrypt each.
    const admin = async (email: string) => {
      const row = { id: `usr_${email.split('@')[0]}`, organization_id: org.id, email, display_name: null, role: 'admin', password_hash: 'x' };
      await insertPortalUser(store.db, {
        ...row,
        failed_logins: 0,
        locked_until: null,
        last_login_at: null,
        created_at: '2026-01-01T00:00:00.000Z',
        disabled_at: null,
      });
      return row;
    };
    for (let round = 0; round < 5; round++) {
      const a = await admin(`a${round}@contoso.com`);
      const b = await admin(`b${round}@contoso.com`);
      // Earlier rounds' admins are disabled, so a and b are the only enabled admins.
      const outcomes = await Promise.allSettled([
        updatePortalUser(store.db, org.id, a.id, { disabled: true }),
        updatePortalUser(store.db, org.id, b.id, { role: 'viewer' }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect((refused.reason as VigilError).code).toBe('LAST_ADMIN');
      const admins = await store.db
        .selectFrom('portal_users')
        .select('id')
        .where('organization_id', '=', org.id)
        .where('role', '=', 'admin')
        .where('disabled_at', 'is', null)
        .execute();
      expect(admins).toHaveLength(1);
      // Leave no enabled admin behind for the next round: disable the survivor through the store directly.
      await store.db.updateTable('portal_users').set({ disabled_at: '2026-01-01T00:00:00.000Z' }).where('id', '=', admins[0]!.id).execute();
    }
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
    // The idle timeout counts from the last request; activity is written at most once a minute, so the session ends
    // between 1800 s and 1860 s after it.
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(3000 + 1800))).not.toBeNull();
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(3000 + 1800 + 1800 + 61))).toBeNull();
    // Gone for good once it timed out.
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(3000))).toBeNull();

    const busy = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, t0);
    let t = 0;
    for (; t < DEFAULT_ACCESS_POLICY.absoluteTimeoutSeconds - 600; t += 1200)
      expect(await authenticateSession(store.db, busy.sessionToken, DEFAULT_ACCESS_POLICY, at(t))).not.toBeNull();
    expect(await authenticateSession(store.db, busy.sessionToken, DEFAULT_ACCESS_POLICY, at(DEFAULT_ACCESS_POLICY.absoluteTimeoutSeconds))).toBeNull();
  });

  it('a short idle timeout never signs out a user who keeps working, and ends the session once they stop', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'viewer' });
    const policy = { ...DEFAULT_ACCESS_POLICY, idleTimeoutSeconds: 60 };
    const t0 = new Date('2026-11-21T08:00:00Z');
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    const s = await signIn(store.db, 'ann@contoso.com', PASSWORD, policy, t0);
    // A request every 59 s for an hour: each one is within the idle timeout of the one before.
    let t = 0;
    for (; t <= 3600; t += 59) expect(await authenticateSession(store.db, s.sessionToken, policy, at(t)), `request at ${t} s`).not.toBeNull();
    const last = t - 59;
    // Then the user stops: still signed in 60 s after the last request, signed out once the timeout (and the at most
    // 6 s by which activity may be recorded late) has passed.
    expect(await authenticateSession(store.db, s.sessionToken, policy, at(last + 60))).not.toBeNull();
    expect(await authenticateSession(store.db, s.sessionToken, policy, at(last + 60 + 60 + 7))).toBeNull();
  });

  it('purges sessions past their idle or absolute timeout and keeps live ones', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'viewer' });
    const t0 = new Date('2026-11-21T08:00:00Z');
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    const idle = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, t0);
    const busy = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, t0);
    const old = await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, at(-DEFAULT_ACCESS_POLICY.absoluteTimeoutSeconds + 100));
    expect(await authenticateSession(store.db, busy.sessionToken, DEFAULT_ACCESS_POLICY, at(1000))).not.toBeNull();
    // `old` is used every 25 minutes for 12 hours: never idle, but past its absolute timeout at 100 s.
    for (let t = -DEFAULT_ACCESS_POLICY.absoluteTimeoutSeconds + 100; t <= 50; t += 1500)
      expect(await authenticateSession(store.db, old.sessionToken, DEFAULT_ACCESS_POLICY, at(t))).not.toBeNull();
    expect(await authenticateSession(store.db, old.sessionToken, DEFAULT_ACCESS_POLICY, at(99))).not.toBeNull();
    expect(await store.db.selectFrom('portal_sessions').select('id').execute()).toHaveLength(3);
    // At 1900 s: `idle` was last used 1900 s ago (past 1800 + 60), `old` passed its 12 hours, `busy` was used at 1000 s.
    expect(await purgeStaleSessions(store.db, DEFAULT_ACCESS_POLICY, at(1900))).toBe(2);
    expect(await store.db.selectFrom('portal_sessions').select('id').execute()).toHaveLength(1);
    expect(await authenticateSession(store.db, busy.sessionToken, DEFAULT_ACCESS_POLICY, at(1900))).not.toBeNull();
    expect(await authenticateSession(store.db, idle.sessionToken, DEFAULT_ACCESS_POLICY, at(0))).toBeNull();
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
    expect((await rejection(signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, new Date(t0.getTime() + 60_000)))).code).toBe(
      'SIGN_IN_FAILED',
    );
    const after = await signIn(
      store.db,
      'ann@contoso.com',
      PASSWORD,
      DEFAULT_ACCESS_POLICY,
      new Date(t0.getTime() + (DEFAULT_ACCESS_POLICY.lockoutSeconds + 1) * 1000),
    );
    expect(after.user.lockedUntil).toBeNull();
  });

  it('counts concurrent sign-in attempts atomically: 30 at once are numbered 1 to 30, none lost', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'admin' });
    const at = '2026-11-21T08:00:00.000Z';
    const counted = await Promise.all(Array.from({ length: 30 }, () => countSignInAttempt(store.db, 'ann@contoso.com', at)));
    expect(counted.map((u) => u!.failed_logins).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect((await store.db.selectFrom('portal_users').select('failed_logins').executeTakeFirstOrThrow()).failed_logins).toBe(30);
    // A locked account is not counted (and so never unlocked by attempts).
    await lockPortalUser(store.db, counted[0]!.id, '2026-11-21T08:15:00.000Z');
    expect(await countSignInAttempt(store.db, 'ann@contoso.com', at)).toBeUndefined();
    expect(await countSignInAttempt(store.db, 'ann@contoso.com', '2026-11-21T08:15:00.001Z')).toMatchObject({ failed_logins: 1 });
  });

  it('30 concurrent wrong passwords lock the account; the right password in the same burst and after it is refused until the lock-out ends', async () => {
    store = await freshStore(dialect);
    const org = await ensureOrganization(store.db, 'Contoso');
    await addPortalUser(store.db, { organizationId: org.id, email: 'ann@contoso.com', password: PASSWORD, role: 'admin' });
    const t0 = new Date('2026-11-21T08:00:00Z');
    // The right password is sent as the 11th attempt of the burst: it is counted after ten others, so it is refused
    // whatever their passwords turn out to be, even though its scrypt finishes before theirs lock the account.
    const burst = Array.from({ length: 31 }, (_, i) =>
      signIn(store.db, 'ann@contoso.com', i === 10 ? PASSWORD : `wrong password ${i}`, DEFAULT_ACCESS_POLICY, t0).then(
        () => 'signed in',
        (e: VigilError) => e.code,
      ),
    );
    expect(new Set(await Promise.all(burst))).toEqual(new Set(['SIGN_IN_FAILED']));
    const row = await store.db.selectFrom('portal_users').select(['locked_until']).executeTakeFirstOrThrow();
    expect(row.locked_until).toBe(new Date(t0.getTime() + DEFAULT_ACCESS_POLICY.lockoutSeconds * 1000).toISOString());
    expect((await rejection(signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, new Date(t0.getTime() + 60_000)))).code).toBe(
      'SIGN_IN_FAILED',
    );
    expect(
      (await signIn(store.db, 'ann@contoso.com', PASSWORD, DEFAULT_ACCESS_POLICY, new Date(t0.getTime() + (DEFAULT_ACCESS_POLICY.lockoutSeconds + 1) * 1000)))
        .user.email,
    ).toBe('ann@contoso.com');
  });

  it('API keys: shown once, stored hashed, scoped to their organization, revocable, expiring', async () => {
    store = await freshStore(dialect);
    const contoso = await ensureOrganization(store.db, 'Contoso');
    const fabrikam = await ensureOrganization(store.db, 'Fabrikam');
    expect((await rejection(createApiKey(store.db, { organizationId: contoso.id, name: '', role: 'viewer' }))).field).toBe('name');
    expect((await rejection(createApiKey(store.db, { organizationId: contoso.id, name: 'x', role: 'viewer', expiresAt: '2020-01-01' }))).field).toBe(
      'expiresAt',
    );
    const { key, apiKey } = await createApiKey(store.db, { organizationId: contoso.id, name: 'sentinel', role: 'viewer', createdBy: 'ann@contoso.com' });
    expect(key).toMatch(/^vgl_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(await listApiKeys(store.db, contoso.id))).not.toContain(key);
    expect(await storedText(store)).not.toContain(key);
    expect(await listApiKeys(store.db, fabrikam.id)).toEqual([]);

    expect(await authenticateApiKey(store.db, key)).toMatchObject({ kind: 'apiKey', keyId: apiKey.id, organizationId: contoso.id, role: 'viewer' });
    // One character changed (never to itself: a key ending in 'A' stays a different key).
    expect(await authenticateApiKey(store.db, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
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
