import { dialectOf, type Executor } from '../db.ts';
import type { ApiKeysTable, OrganizationsTable, PortalSessionsTable, PortalUsersTable } from '../schema.ts';

/** Organizations, portal users, sessions and API keys (migration 0010). Tokens and keys appear only as SHA-256 hashes. */
export type PortalUserRow = PortalUsersTable;

export async function findOrganizationByName(db: Executor, name: string): Promise<OrganizationsTable | undefined> {
  return db.selectFrom('organizations').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function getOrganization(db: Executor, id: string): Promise<OrganizationsTable | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertOrganization(db: Executor, row: OrganizationsTable): Promise<void> {
  await db.insertInto('organizations').values(row).execute();
}

export async function listOrganizations(db: Executor): Promise<OrganizationsTable[]> {
  return db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Integrations, portal users and API keys (revoked ones excluded) per organization id. */
export async function organizationCounts(
  db: Executor,
): Promise<{ integrations: Map<string, number>; users: Map<string, number>; apiKeys: Map<string, number> }> {
  const count = async (table: 'integrations' | 'portal_users' | 'api_keys') => {
    let q = db
      .selectFrom(table)
      .select(['organization_id', db.fn.countAll<number>().as('n')])
      .groupBy('organization_id');
    if (table === 'api_keys') q = q.where('revoked_at', 'is', null);
    const rows = (await q.execute()) as { organization_id: string | null; n: number | string }[];
    return new Map(rows.filter((r) => r.organization_id !== null).map((r) => [r.organization_id!, Number(r.n)]));
  };
  return { integrations: await count('integrations'), users: await count('portal_users'), apiKeys: await count('api_keys') };
}

export async function insertPortalUser(db: Executor, row: PortalUsersTable): Promise<void> {
  await db.insertInto('portal_users').values(row).execute();
}

export async function findPortalUserByEmail(db: Executor, email: string): Promise<PortalUsersTable | undefined> {
  return db.selectFrom('portal_users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function getPortalUser(db: Executor, id: string): Promise<PortalUsersTable | undefined> {
  return db.selectFrom('portal_users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Users of one organization, by email. */
export async function listPortalUsers(db: Executor, organizationId: string): Promise<PortalUsersTable[]> {
  return db.selectFrom('portal_users').selectAll().where('organization_id', '=', organizationId).orderBy('email').execute();
}

/**
 * Changes a portal user's role and/or disabled state, within one organization, keeping at least one enabled admin:
 * the change is made only when, after it, the organization still has an enabled admin. On PostgreSQL the
 * organization's row is locked for the transaction (`SELECT … FOR UPDATE`), so two admins demoting or disabling each
 * other at once are taken one after the other and the second is refused (no write skew under READ COMMITTED); SQLite
 * serialises write transactions by itself. Run it inside a transaction.
 * @param set.disabled true disables (an account already disabled keeps its time), false enables, undefined leaves it.
 * @param set.at when the change is made, ISO 8601 UTC (a new `disabled_at`).
 * @returns `updated` with the new row; `missing` when the organization has no such user; `last-admin` when the change
 *   would leave no enabled admin (nothing written).
 */
export async function updatePortalUser(
  trx: Executor,
  organizationId: string,
  userId: string,
  set: { role?: string | undefined; disabled?: boolean | undefined; at: string },
): Promise<{ outcome: 'updated'; row: PortalUsersTable } | { outcome: 'missing' } | { outcome: 'last-admin' }> {
  if (dialectOf(trx) === 'postgres') await trx.selectFrom('organizations').select('id').where('id', '=', organizationId).forUpdate().execute();
  const user = await trx.selectFrom('portal_users').selectAll().where('id', '=', userId).where('organization_id', '=', organizationId).executeTakeFirst();
  if (!user) return { outcome: 'missing' };
  const next = {
    ...user,
    role: set.role ?? user.role,
    disabled_at: set.disabled === undefined ? user.disabled_at : set.disabled ? (user.disabled_at ?? set.at) : null,
  };
  const wasActiveAdmin = user.role === 'admin' && user.disabled_at === null;
  const staysActiveAdmin = next.role === 'admin' && next.disabled_at === null;
  if (wasActiveAdmin && !staysActiveAdmin) {
    const others = await trx
      .selectFrom('portal_users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'admin')
      .where('disabled_at', 'is', null)
      .where('id', '!=', userId)
      .executeTakeFirstOrThrow();
    if (Number(others.n) === 0) return { outcome: 'last-admin' };
  }
  await trx.updateTable('portal_users').set({ role: next.role, disabled_at: next.disabled_at }).where('id', '=', userId).execute();
  return { outcome: 'updated', row: next };
}

/** Ends every session of a user (they are disabled). @returns how many ended. */
export async function deleteUserSessions(db: Executor, userId: string): Promise<number> {
  const r = await db.deleteFrom('portal_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Counts one sign-in attempt of the user with this email, atomically, before its password is checked: one
 * `UPDATE … SET failed_logins = failed_logins + 1 … RETURNING` (SQLite ≥ 3.35 and PostgreSQL), so concurrent attempts
 * each get their own number and none is lost. Only a user who is enabled and not locked at `at` is counted.
 * @param at ISO 8601 UTC: a `locked_until` later than this means locked.
 * @returns the user with `failed_logins` as counted by this attempt (1 for the first attempt since the last success
 *   or lock), or undefined for an unknown, disabled or locked account.
 */
export async function countSignInAttempt(db: Executor, email: string, at: string): Promise<PortalUsersTable | undefined> {
  return db
    .updateTable('portal_users')
    .set((eb) => ({ failed_logins: eb('failed_logins', '+', 1) }))
    .where('email', '=', email)
    .where('disabled_at', 'is', null)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
    .returningAll()
    .executeTakeFirst();
}

/** Locks the user until `until` (ISO 8601 UTC) and starts the count again for after the lock-out. */
export async function lockPortalUser(db: Executor, id: string, until: string): Promise<void> {
  await db.updateTable('portal_users').set({ failed_logins: 0, locked_until: until }).where('id', '=', id).execute();
}

/**
 * Records a successful sign-in (count back to 0, last sign-in at `at`) unless the account was locked or disabled
 * meanwhile by attempts that ran beside this one.
 * @returns false when the account is locked or disabled at `at`: the sign-in must be refused.
 */
export async function recordSignIn(db: Executor, id: string, at: string): Promise<boolean> {
  const r = await db
    .updateTable('portal_users')
    .set({ failed_logins: 0, locked_until: null, last_login_at: at })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function insertSession(db: Executor, row: PortalSessionsTable): Promise<void> {
  await db.insertInto('portal_sessions').values(row).execute();
}

/** A session with its user, by the SHA-256 of its token. */
export async function findSession(db: Executor, tokenHash: string) {
  return db
    .selectFrom('portal_sessions')
    .innerJoin('portal_users', 'portal_users.id', 'portal_sessions.user_id')
    .select([
      'portal_sessions.id',
      'portal_sessions.csrf_hash',
      'portal_sessions.created_at',
      'portal_sessions.last_seen_at',
      'portal_sessions.expires_at',
      'portal_users.id as user_id',
      'portal_users.organization_id',
      'portal_users.email',
      'portal_users.display_name',
      'portal_users.role',
      'portal_users.disabled_at',
    ])
    .where('portal_sessions.id', '=', tokenHash)
    .executeTakeFirst();
}

export async function touchSession(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('portal_sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('portal_sessions').where('id', '=', id).execute();
}

/** Deletes sessions past their absolute expiry or idle since before `idleBefore`. @returns how many. */
export async function deleteStaleSessions(db: Executor, now: string, idleBefore: string): Promise<number> {
  const r = await db
    .deleteFrom('portal_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<', idleBefore)]))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function insertApiKey(db: Executor, row: ApiKeysTable): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function findApiKeyByHash(db: Executor, keyHash: string): Promise<ApiKeysTable | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** The API keys of one organization, newest first (hashes included: callers strip them). */
export async function listApiKeys(db: Executor, organizationId: string): Promise<ApiKeysTable[]> {
  return db.selectFrom('api_keys').selectAll().where('organization_id', '=', organizationId).orderBy('created_at', 'desc').orderBy('id').execute();
}

/** Revokes a key of the organization. @returns false when the organization has no such live key. */
export async function revokeApiKey(db: Executor, organizationId: string, id: string, at: string): Promise<boolean> {
  const r = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function touchApiKey(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
