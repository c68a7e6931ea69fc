import { VigilError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, newToken, tokenHash, verifyPassword } from '../platform/crypto/passwords.ts';
import { inTransaction, type Executor } from '../store/db.ts';
import * as repo from '../store/repositories/access.ts';
import type { ApiKeysTable, OrganizationsTable } from '../store/schema.ts';

/**
 * Who may use the service and how they prove it (issue 7): organizations, portal users with passwords and sessions,
 * API keys. Every principal belongs to exactly one organization and holds one role: `admin` (manage integrations,
 * users and keys) or `viewer` (read). Passwords, session tokens, CSRF tokens and API keys are never stored or
 * returned after creation: the store keeps scrypt hashes (passwords) and SHA-256 hashes (tokens, keys).
 *
 * Sources: OWASP Session Management Cheat Sheet (idle and absolute timeouts, token entropy, renewal at sign-in),
 * OWASP Authentication Cheat Sheet (generic failure messages, account lock-out), NIST SP 800-63B §5.1.1.2
 * (length over composition rules; at least 8 characters, we require 12).
 */

export const ROLES = ['admin', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** The organization every integration made before organizations existed belongs to (migration 0010). */
const DEFAULT_ORGANIZATION = { id: 'org_default', name: 'Default' } as const;

/** Session and lock-out policy. Durations in seconds. */
export interface AccessPolicy {
  /** A session unused this long ends. @default 1800 (30 minutes) */
  idleTimeoutSeconds: number;
  /** A session ends this long after sign-in, used or not. @default 43200 (12 hours) */
  absoluteTimeoutSeconds: number;
  /** Failed sign-ins in a row that lock the account. @default 5 */
  maxFailedLogins: number;
  /** How long a locked account refuses sign-in. @default 900 (15 minutes) */
  lockoutSeconds: number;
}

export const DEFAULT_ACCESS_POLICY: AccessPolicy = { idleTimeoutSeconds: 1800, absoluteTimeoutSeconds: 43_200, maxFailedLogins: 5, lockoutSeconds: 900 };

/** A signed-in user or an API key: what every authorisation decision reads. */
export type Principal =
  | { kind: 'user'; userId: string; email: string; organizationId: string; role: Role; sessionId: string; csrfHash: string }
  | { kind: 'apiKey'; keyId: string; name: string; organizationId: string; role: Role };

/**
 * The operator at the command line (`vigil …` on the host, who holds the data directory and its master key): sees
 * every organization, or one when `--organization` names it, and may do what an admin may. `name` is who decides, for
 * history entries (`--by`, else the operating-system user).
 */
export interface Operator {
  kind: 'operator';
  name: string;
  /** The one organization the command is narrowed to, or null for all of them. */
  organizationId: string | null;
  role: 'admin';
}

/** An operator caller: every organization unless `organizationId` narrows it to one. */
export function operator(name: string, organizationId: string | null = null): Operator {
  return { kind: 'operator', name, organizationId, role: 'admin' };
}

/** Who calls a use case: a signed-in user or an API key (through the API), or the operator (through the CLI). */
export type Caller = Principal | Operator;

/** Who the caller is, for history entries (suppressions): the user's email, the API key's name or the operator's name. */
export function actorOf(c: Caller): string {
  return c.kind === 'user' ? c.email : c.kind === 'apiKey' ? `api-key:${c.name}` : c.name;
}

const PASSWORD_MIN = 12;
const PASSWORD_MAX = 256;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function roleFrom(value: string | undefined, field: string): Role {
  if (value && (ROLES as readonly string[]).includes(value)) return value as Role;
  throw new VigilError('INVALID_ROLE', `${field} must be one of ${ROLES.join(', ')}${value ? ` (got "${value}")` : ''}.`, {
    field,
  });
}

const ORGANIZATION_NAME_MAX = 200;

/** Trims an organization name and checks its length. @throws VigilError `invalid-input` (field `organization`). */
function organizationName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > ORGANIZATION_NAME_MAX)
    throw new VigilError('INVALID_ORGANIZATION', `organization must be 1 to ${ORGANIZATION_NAME_MAX} characters.`, {
      field: 'organization',
    });
  return trimmed;
}

/**
 * The default organization (`Default`, id `org_default`), created when missing: where integrations, users and keys go
 * when no organization is named. Only the default is ever created implicitly; every other organization is created
 * explicitly with {@link createOrganization}, so a typo never makes a new one.
 */
export async function ensureDefaultOrganization(db: Executor, at = new Date().toISOString()): Promise<OrganizationsTable> {
  return (await repo.findOrganizationByName(db, DEFAULT_ORGANIZATION.name)) ?? (await insertOrganization(db, DEFAULT_ORGANIZATION.name, at));
}

async function insertOrganization(db: Executor, name: string, at: string): Promise<OrganizationsTable> {
  const row = { id: name === DEFAULT_ORGANIZATION.name ? DEFAULT_ORGANIZATION.id : newId('org'), name, created_at: at };
  await repo.insertOrganization(db, row);
  return row;
}

/**
 * The organization of this name, created when missing. For set-up code and tests that build organizations on
 * purpose; the CLI and the API never call it with a name a person typed (they use {@link getOrganizationByName}).
 * @throws VigilError `invalid-input` for an empty or over-long name.
 */
export async function ensureOrganization(db: Executor, name: string = DEFAULT_ORGANIZATION.name, at = new Date().toISOString()): Promise<OrganizationsTable> {
  const trimmed = organizationName(name);
  return (await repo.findOrganizationByName(db, trimmed)) ?? (await insertOrganization(db, trimmed, at));
}

/**
 * Creates an organization (`vigil organizations create <name>`): a customer of a service provider, whose users and
 * API keys see only its own integrations.
 * @throws VigilError `invalid-input` for an empty or over-long name; `conflict` / `ORGANIZATION_EXISTS` when one of
 *   that name exists.
 */
export async function createOrganization(db: Executor, name: string, at = new Date().toISOString()): Promise<OrganizationsTable> {
  const trimmed = organizationName(name);
  if (await repo.findOrganizationByName(db, trimmed))
    throw new VigilError('ORGANIZATION_EXISTS', `An organization named "${trimmed}" exists already.`, {
      field: 'organization',
    });
  return insertOrganization(db, trimmed, at);
}

/** An organization as `vigil organizations list` shows it: what it holds, counted. */
export interface OrganizationView {
  id: string;
  name: string;
  createdAt: string;
  integrations: number;
  users: number;
  apiKeys: number;
}

/** Every organization, oldest first, with the default one always present. */
export async function listOrganizations(db: Executor): Promise<OrganizationView[]> {
  await ensureDefaultOrganization(db);
  const counts = await repo.organizationCounts(db);
  return (await repo.listOrganizations(db)).map((o) => ({
    id: o.id,
    name: o.name,
    createdAt: o.created_at,
    integrations: counts.integrations.get(o.id) ?? 0,
    users: counts.users.get(o.id) ?? 0,
    apiKeys: counts.apiKeys.get(o.id) ?? 0,
  }));
}

/**
 * An existing organization by name (`Default` always exists: it is created on first use). Nothing else is created:
 * an unknown name is an error that lists the organizations there are.
 * @throws VigilError `not-found` / `ORGANIZATION_NOT_FOUND` naming the existing organizations and
 *   `vigil organizations create <name>`.
 */
export async function getOrganizationByName(db: Executor, name: string): Promise<OrganizationsTable> {
  const trimmed = name.trim();
  if (trimmed === DEFAULT_ORGANIZATION.name) return ensureDefaultOrganization(db);
  const org = await repo.findOrganizationByName(db, trimmed);
  if (org) return org;
  const names = (await repo.listOrganizations(db)).map((o) => o.name);
  const known = names.length ? `The organizations are: ${names.map((n) => JSON.stringify(n)).join(', ')}.` : 'There are no organizations yet.';
  throw new VigilError('ORGANIZATION_NOT_FOUND', `No organization named "${name}". ${known}`, {
    field: 'organization',
    remediation: (_, act) => `Check the spelling, or create it first: ${act({ do: 'createOrganization', name: trimmed })}.`,
    detail: { organizations: names },
  });
}

/** A portal user as the API and CLI show it (no hash, no lock-out counters). */
export interface PortalUserView {
  id: string;
  organizationId: string;
  email: string;
  displayName: string | null;
  role: Role;
  createdAt: string;
  lastLoginAt: string | null;
  lockedUntil: string | null;
  disabled: boolean;
}

function userView(u: repo.PortalUserRow): PortalUserView {
  return {
    id: u.id,
    organizationId: u.organization_id,
    email: u.email,
    displayName: u.display_name,
    role: u.role as Role,
    createdAt: u.created_at,
    lastLoginAt: u.last_login_at,
    lockedUntil: u.locked_until,
    disabled: u.disabled_at !== null,
  };
}

/**
 * The one answer for an address that already has an account. An address signs in to one account on the deployment,
 * so a taken address cannot be hidden entirely; but the answer is the same whether the account is in the caller's
 * organization or another's, and names neither the organization nor the user (issue 14: no answer tells one
 * organization about another's users).
 */
function emailUnavailable(email: string): VigilError {
  return new VigilError('EMAIL_UNAVAILABLE', `The address ${email} cannot be used for a new account.`, {
    field: 'email',
  });
}

/**
 * Adds a portal user to an organization.
 * @param input.password at least 12 and at most 256 characters (NIST SP 800-63B: length, no composition rules).
 * @throws VigilError `invalid-input` naming the field (`email`, `password`, `role`); `conflict` / `EMAIL_UNAVAILABLE`
 *   when the address has an account, in this organization or another (see {@link emailUnavailable}).
 */
export async function addPortalUser(
  db: Executor,
  input: { organizationId: string; email?: string; password?: string; role?: string; displayName?: string },
  at = new Date().toISOString(),
): Promise<PortalUserView> {
  const email = (input.email ?? '').trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 320)
    throw new VigilError('INVALID_EMAIL', `email must be an address like ann@contoso.com${input.email ? ` (got "${input.email}")` : ''}.`, {
      field: 'email',
    });
  const password = input.password ?? '';
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new VigilError('WEAK_PASSWORD', `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (got ${password.length}).`, {
      field: 'password',
    });
  }
  const role = roleFrom(input.role, 'role');
  if (await repo.findPortalUserByEmail(db, email)) throw emailUnavailable(email);
  const row: repo.PortalUserRow = {
    id: newId('usr'),
    organization_id: input.organizationId,
    email,
    display_name: input.displayName?.trim() || null,
    role,
    password_hash: await hashPassword(password),
    failed_logins: 0,
    locked_until: null,
    last_login_at: null,
    created_at: at,
    disabled_at: null,
  };
  await repo.insertPortalUser(db, row);
  return userView(row);
}

/** The users of an organization. */
export async function listPortalUsers(db: Executor, organizationId: string): Promise<PortalUserView[]> {
  return (await repo.listPortalUsers(db, organizationId)).map(userView);
}

/** The one answer for a user the organization does not have (another organization's user included). */
function userNotFound(who: string): VigilError {
  return new VigilError('USER_NOT_FOUND', `No portal user ${who} in this organization.`, { field: 'userId' });
}

/**
 * The user of an organization named by its id or its address (any case), as the CLI's operator names people.
 * @throws VigilError `not-found` `USER_NOT_FOUND` when the organization has no such user.
 */
export async function findPortalUser(db: Executor, organizationId: string, idOrEmail: string): Promise<PortalUserView> {
  const who = idOrEmail.trim();
  const user = (await repo.getPortalUser(db, who)) ?? (await repo.findPortalUserByEmail(db, who.toLowerCase()));
  if (!user || user.organization_id !== organizationId) throw userNotFound(`"${who}"`);
  return userView(user);
}

/** What an admin may change of a portal user: the role, and whether the account is disabled. */
export interface PortalUserChange {
  role?: string | undefined;
  /** true disables the account (its sessions end at once, it cannot sign in); false enables it again. */
  disabled?: boolean | undefined;
}

/**
 * Changes a portal user's role or disables / enables the account (an admin's "manage users"). A disabled account keeps
 * its history (who acknowledged or suppressed what) but cannot sign in, and every session it holds ends in the same
 * transaction; a role change applies to its open sessions at their next request (a session reads the user's role each
 * time, {@link authenticateSession}). The organization always keeps at least one enabled admin, so no change locks it
 * out of its own settings (the rule holds under concurrent changes: see `repo.updatePortalUser`).
 * Source of the model: OWASP Authorization Cheat Sheet (deny by default, least privilege; revoke access promptly).
 * @throws VigilError `invalid-input` `INVALID_ROLE` (field `role`) or `NO_CHANGE` (neither field given);
 *   `not-found` `USER_NOT_FOUND` when the organization has no such user (another organization's user included);
 *   `conflict` `LAST_ADMIN` (field `role` or `disabled`) when the change would leave no enabled admin.
 */
export async function updatePortalUser(
  db: Executor,
  organizationId: string,
  userId: string,
  change: PortalUserChange,
  at = new Date().toISOString(),
): Promise<PortalUserView> {
  if (change.role === undefined && change.disabled === undefined)
    throw new VigilError('NO_CHANGE', 'Give the new role, or whether the account is disabled.', { field: 'role' });
  const role = change.role === undefined ? undefined : roleFrom(change.role, 'role');
  return inTransaction(db, async (trx) => {
    const r = await repo.updatePortalUser(trx, organizationId, userId, { role, disabled: change.disabled, at });
    if (r.outcome === 'missing') throw userNotFound(userId);
    if (r.outcome === 'last-admin')
      throw new VigilError(
        'LAST_ADMIN',
        change.disabled
          ? 'This is the only enabled admin of the organization: disabling it would leave nobody to manage it.'
          : 'This is the only enabled admin of the organization: it cannot become a viewer.',
        { field: change.disabled ? 'disabled' : 'role' },
      );
    if (r.row.disabled_at !== null) await repo.deleteUserSessions(trx, userId);
    return userView(r.row);
  });
}

/** A new session: the cookie token and CSRF token are returned here once and never stored. */
export interface SignIn {
  sessionToken: string;
  csrfToken: string;
  /** Absolute end of the session, ISO 8601 UTC. */
  expiresAt: string;
  user: PortalUserView;
}

const SIGN_IN_FAILED = (policy: AccessPolicy) =>
  new VigilError('SIGN_IN_FAILED', 'Sign-in failed: the email or password is wrong, or the account is locked after repeated failures.', {
    remediation: `Check the address and password. After ${policy.maxFailedLogins} failures in a row the account is locked for ${Math.ceil(policy.lockoutSeconds / 60)} minute(s).`,
  });

/**
 * Signs a user in with email and password. Failure says nothing about which part was wrong or whether the account
 * exists; an unknown, disabled or locked account costs the same scrypt time as a known one. `maxFailedLogins` failures
 * in a row lock the account for `lockoutSeconds` (a correct password during the lock-out is refused too).
 *
 * Concurrency (issue 14, point 4): each attempt is counted atomically in the store *before* its password is checked
 * (`countSignInAttempt`), and the decision is made from the number that attempt was given, never from a row read
 * earlier. So a burst of any size from any number of addresses counts every attempt; the attempt numbered
 * `maxFailedLogins`, when wrong, locks the account; attempts numbered beyond it are refused without looking at the
 * password; and a correct password is accepted only when fewer than `maxFailedLogins` attempts came before it since the
 * last success or lock, and the account was not locked by them while its scrypt ran (`recordSignIn` is conditional).
 * @throws VigilError `authentication` / `SIGN_IN_FAILED`.
 */
export async function signIn(db: Executor, email: string, password: string, policy: AccessPolicy = DEFAULT_ACCESS_POLICY, now = new Date()): Promise<SignIn> {
  const at = now.toISOString();
  const user = await repo.countSignInAttempt(db, email.trim().toLowerCase(), at);
  const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_PASSWORD_HASH);
  if (!user || user.failed_logins > policy.maxFailedLogins) throw SIGN_IN_FAILED(policy);
  if (!ok) {
    if (user.failed_logins === policy.maxFailedLogins)
      await repo.lockPortalUser(db, user.id, new Date(now.getTime() + policy.lockoutSeconds * 1000).toISOString());
    throw SIGN_IN_FAILED(policy);
  }
  if (!(await repo.recordSignIn(db, user.id, at))) throw SIGN_IN_FAILED(policy);
  const sessionToken = newToken();
  const csrfToken = newToken();
  const expiresAt = new Date(now.getTime() + policy.absoluteTimeoutSeconds * 1000).toISOString();
  await repo.insertSession(db, {
    id: tokenHash(sessionToken),
    user_id: user.id,
    csrf_hash: tokenHash(csrfToken),
    created_at: at,
    last_seen_at: at,
    expires_at: expiresAt,
  });
  return { sessionToken, csrfToken, expiresAt, user: userView({ ...user, last_login_at: at, failed_logins: 0, locked_until: null }) };
}

/**
 * How often a session's activity is written, in seconds: at most once per this interval, so a busy portal does not
 * write on every request: min(60 s, idle timeout / 10). The last request is then at most this long after the recorded
 * `last_seen_at`, and the idle check allows for it (see {@link authenticateSession}).
 */
function activityIntervalSeconds(policy: AccessPolicy): number {
  return Math.min(60, policy.idleTimeoutSeconds / 10);
}

/**
 * When a session whose activity was last recorded at `lastSeenAt` passes its idle timeout (ISO 8601 UTC):
 * `lastSeenAt + idle + activity interval`. Activity is recorded at most once per interval, so the last request may be up
 * to one interval later than `lastSeenAt`; counting from the record alone signed out a user still at work (issue 14,
 * point 8: with a 60 s write interval and a 60 s idle timeout, requests every 50 s were signed out). A session thus ends
 * between `idle` and `idle + interval` after its last request, never before.
 */
function idleDeadline(lastSeenAt: string, policy: AccessPolicy): string {
  return new Date(Date.parse(lastSeenAt) + (policy.idleTimeoutSeconds + activityIntervalSeconds(policy)) * 1000).toISOString();
}

/**
 * The principal of a session token, or null when the session does not exist, has passed its absolute or idle
 * timeout (then it is deleted), or its user is disabled. Each use moves the idle clock (written at most once per
 * {@link activityIntervalSeconds}; the idle check allows for that, see {@link idleDeadline}).
 */
export async function authenticateSession(
  db: Executor,
  sessionToken: string,
  policy: AccessPolicy = DEFAULT_ACCESS_POLICY,
  now = new Date(),
): Promise<Principal | null> {
  const s = await repo.findSession(db, tokenHash(sessionToken));
  if (!s) return null;
  const at = now.toISOString();
  if (s.expires_at <= at || idleDeadline(s.last_seen_at, policy) < at || s.disabled_at) {
    await repo.deleteSession(db, s.id);
    return null;
  }
  if (now.getTime() - Date.parse(s.last_seen_at) >= activityIntervalSeconds(policy) * 1000) await repo.touchSession(db, s.id, at);
  return { kind: 'user', userId: s.user_id, email: s.email, organizationId: s.organization_id, role: s.role as Role, sessionId: s.id, csrfHash: s.csrf_hash };
}

/**
 * Deletes every session past its absolute timeout or its idle deadline ({@link idleDeadline}), so ended sessions do
 * not pile up in the store (`vigil serve` calls it periodically). @returns how many were deleted.
 */
export async function purgeStaleSessions(db: Executor, policy: AccessPolicy = DEFAULT_ACCESS_POLICY, now = new Date()): Promise<number> {
  const idleBefore = new Date(now.getTime() - (policy.idleTimeoutSeconds + activityIntervalSeconds(policy)) * 1000).toISOString();
  return repo.deleteStaleSessions(db, now.toISOString(), idleBefore);
}

/** True when `csrfToken` is the one issued with the principal's session (API keys carry no cookie: always true). */
export function csrfMatches(principal: Principal, csrfToken: string | undefined): boolean {
  if (principal.kind === 'apiKey') return true;
  return typeof csrfToken === 'string' && csrfToken.length > 0 && tokenHash(csrfToken) === principal.csrfHash;
}

/** Ends a session (sign-out). */
export async function signOut(db: Executor, sessionToken: string): Promise<void> {
  await repo.deleteSession(db, tokenHash(sessionToken));
}

/** An API key as listed (never the key or its hash). */
export interface ApiKeyView {
  id: string;
  organizationId: string;
  name: string;
  role: Role;
  createdBy: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

function keyView(k: ApiKeysTable): ApiKeyView {
  return {
    id: k.id,
    organizationId: k.organization_id,
    name: k.name,
    role: k.role as Role,
    createdBy: k.created_by,
    createdAt: k.created_at,
    expiresAt: k.expires_at,
    lastUsedAt: k.last_used_at,
    revokedAt: k.revoked_at,
  };
}

/** API keys start with this, so secret scanners and people recognise them. */
const API_KEY_PREFIX = 'vgl_';

/**
 * Creates an API key for an organization. The key is in the result once; only its SHA-256 is stored.
 * @param input.expiresAt ISO 8601 UTC in the future, or omitted for a key that lasts until revoked.
 * @throws VigilError `invalid-input` naming `name`, `role` or `expiresAt`.
 */
export async function createApiKey(
  db: Executor,
  input: { organizationId: string; name?: string; role?: string; createdBy?: string | null; expiresAt?: string | null },
  now = new Date(),
): Promise<{ key: string; apiKey: ApiKeyView }> {
  const name = (input.name ?? '').trim();
  if (!name || name.length > 200)
    throw new VigilError('INVALID_NAME', 'name must be 1 to 200 characters.', {
      field: 'name',
    });
  const role = roleFrom(input.role, 'role');
  let expiresAt: string | null = null;
  if (input.expiresAt) {
    const t = Date.parse(input.expiresAt);
    if (Number.isNaN(t) || t <= now.getTime())
      throw new VigilError('INVALID_EXPIRY', `expiresAt must be a future date (got "${input.expiresAt}").`, {
        field: 'expiresAt',
      });
    expiresAt = new Date(t).toISOString();
  }
  const key = newToken(API_KEY_PREFIX);
  const row: ApiKeysTable = {
    id: newId('key'),
    organization_id: input.organizationId,
    name,
    key_hash: tokenHash(key),
    role,
    created_by: input.createdBy ?? null,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    last_used_at: null,
    revoked_at: null,
  };
  await repo.insertApiKey(db, row);
  return { key, apiKey: keyView(row) };
}

/** The principal of an API key, or null when unknown, revoked or expired. Records its last use (at most once a minute). */
export async function authenticateApiKey(db: Executor, key: string, now = new Date()): Promise<Principal | null> {
  if (!key.startsWith(API_KEY_PREFIX)) return null;
  const k = await repo.findApiKeyByHash(db, tokenHash(key));
  const at = now.toISOString();
  if (!k || k.revoked_at || (k.expires_at && k.expires_at <= at)) return null;
  if (!k.last_used_at || now.getTime() - Date.parse(k.last_used_at) >= 60_000) await repo.touchApiKey(db, k.id, at);
  return { kind: 'apiKey', keyId: k.id, name: k.name, organizationId: k.organization_id, role: k.role as Role };
}

/** The API keys of an organization. */
export async function listApiKeys(db: Executor, organizationId: string): Promise<ApiKeyView[]> {
  return (await repo.listApiKeys(db, organizationId)).map(keyView);
}

/**
 * Revokes an API key of the organization; it stops working at once.
 * @throws VigilError `not-found` when the organization has no such live key (another organization's key included).
 */
export async function revokeApiKey(db: Executor, organizationId: string, keyId: string, at = new Date().toISOString()): Promise<void> {
  if (!(await repo.revokeApiKey(db, organizationId, keyId, at))) throw new VigilError('API_KEY_NOT_FOUND', `No active API key ${keyId}.`);
}
