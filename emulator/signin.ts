/**
 * Interactive sign-in state the emulator keeps between requests: per-tenant admin-consent behaviour, the tenant of the
 * administrator "signed in" at `/common/adminconsent`, pending device codes (user codes approved or declined through
 * the control API), device-code settings and auto-approval, issued refresh tokens, the account the browser is signed
 * in with per tenant (who answers `/authorize`), and issued authorization codes.
 *
 * Everything here is in memory and lost on restart, like the sessions of the real service would be to a client.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { findUserByUpn, type Tenant, type TenantStore } from './tenant.ts';

/** What the admin does on the consent page of a tenant: approve, cancel (`deny`), or the service refuses. */
export type ConsentBehavior = 'approve' | 'deny' | 'consent_required';

/** Every `ConsentBehavior`. */
export const CONSENT_BEHAVIORS: readonly ConsentBehavior[] = ['approve', 'deny', 'consent_required'];

/** Device-code flow settings: polling interval and code lifetime answered by `/devicecode`. */
export interface DeviceCodeSettings {
  /** `interval` (seconds, integer ≥ 1). @default 5 */
  intervalSeconds: number;
  /** `expires_in` (seconds, integer ≥ 1). @default 900 */
  expiresInSeconds: number;
}

/** One device-code sign-in in progress. Times are epoch milliseconds. */
export interface DeviceCodeEntry {
  deviceCode: string;
  userCode: string;
  /** Tenant id of the `/{tenant}/…/devicecode` path, or null for `common`/`organizations`. */
  tenantId: string | null;
  clientId: string;
  /** The requested `scope`, as sent. */
  scope: string;
  createdAt: number;
  expiresAt: number;
  status: 'pending' | 'approved' | 'declined' | 'redeemed';
  /** Set on approval: the signed-in user and their tenant. */
  approvedTenantId?: string;
  approvedUserId?: string;
}

/** A refresh token's subject. */
export interface RefreshGrant {
  tenantId: string;
  userId: string;
  clientId: string;
  expiresAt: number;
}

/**
 * An authorization code issued by `/authorize` (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow:
 * short-lived, single use, bound to the client, the redirect URI and the PKCE challenge). Times are epoch milliseconds.
 */
export interface AuthorizationCode {
  tenantId: string;
  userId: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  /** `S256` or `plain` (the default when a challenge is sent without a method). */
  codeChallengeMethod: 'S256' | 'plain';
  expiresAt: number;
  redeemed: boolean;
}

/** Lifetime of an authorization code, ms (Entra documents codes as short-lived, about 10 minutes). */
const AUTHORIZATION_CODE_LIFETIME_MS = 600_000;

const USER_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const MAX_ENTRIES = 10_000;

/** The in-memory sign-in state of one running emulator. */
export class SignInState {
  readonly #consent = new Map<string, ConsentBehavior>();
  readonly #autoApprove = new Map<string, string>();
  readonly #codes = new Map<string, DeviceCodeEntry>();
  readonly #byUserCode = new Map<string, DeviceCodeEntry>();
  readonly #refresh = new Map<string, RefreshGrant>();
  readonly #browserUser = new Map<string, string>();
  readonly #authCodes = new Map<string, AuthorizationCode>();
  #signedInAdminTenant: string | null = null;
  #settings: DeviceCodeSettings = { intervalSeconds: 5, expiresInSeconds: 900 };

  /** Consent behaviour of a tenant (by tenant id); `approve` unless set. */
  consentBehavior(tenantId: string): ConsentBehavior {
    return this.#consent.get(tenantId.toLowerCase()) ?? 'approve';
  }

  /** Sets the consent behaviour of a tenant (by tenant id). */
  setConsentBehavior(tenantId: string, behavior: ConsentBehavior): void {
    this.#consent.set(tenantId.toLowerCase(), behavior);
  }

  /** Tenant id of the administrator signed in for `/common|organizations/adminconsent`, or null. */
  get signedInAdminTenant(): string | null {
    return this.#signedInAdminTenant;
  }

  /** Sets (tenant id) or clears (null) the signed-in administrator's tenant. */
  setSignedInAdminTenant(tenantId: string | null): void {
    this.#signedInAdminTenant = tenantId;
  }

  /**
   * UPN of the account the browser is signed in with at a tenant's `/authorize` endpoint (by tenant id), or undefined:
   * then the tenant's first enabled Global Administrator answers (the administrator who just consented).
   */
  browserUser(tenantId: string): string | undefined {
    return this.#browserUser.get(tenantId.toLowerCase());
  }

  /** Sets (UPN) or clears (null) the account signed in at a tenant's `/authorize` endpoint. */
  setBrowserUser(tenantId: string, upn: string | null): void {
    if (upn === null) this.#browserUser.delete(tenantId.toLowerCase());
    else this.#browserUser.set(tenantId.toLowerCase(), upn);
  }

  /** Issues a random authorization code for a sign-in, valid `AUTHORIZATION_CODE_LIFETIME_MS`. */
  issueAuthorizationCode(grant: Omit<AuthorizationCode, 'expiresAt' | 'redeemed'>): string {
    if (this.#authCodes.size >= MAX_ENTRIES) this.#authCodes.clear();
    const code = `1.AX${randomBytes(96).toString('base64url')}`;
    this.#authCodes.set(code, { ...grant, expiresAt: Date.now() + AUTHORIZATION_CODE_LIFETIME_MS, redeemed: false });
    return code;
  }

  /** The entry of an authorization code (redeemed or not), or undefined. */
  authorizationCode(code: string): AuthorizationCode | undefined {
    return this.#authCodes.get(code);
  }

  /** Current device-code settings (a copy). */
  get deviceCodeSettings(): DeviceCodeSettings {
    return { ...this.#settings };
  }

  /** Changes device-code settings; throws RangeError for a value that is not an integer ≥ 1. */
  setDeviceCodeSettings(settings: Partial<DeviceCodeSettings>): DeviceCodeSettings {
    for (const [k, v] of Object.entries(settings)) {
      if (v === undefined) continue;
      if (!Number.isInteger(v) || (v as number) < 1) throw new RangeError(`${k} must be an integer ≥ 1, got ${String(v)}`);
    }
    this.#settings = { ...this.#settings, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) };
    return this.deviceCodeSettings;
  }

  /** UPN auto-approving new device codes of a tenant (by tenant id), or undefined. */
  autoApproveUpn(tenantId: string): string | undefined {
    return this.#autoApprove.get(tenantId.toLowerCase());
  }

  /** Sets (UPN) or clears (null) device-code auto-approval for a tenant (by tenant id). */
  setAutoApprove(tenantId: string, upn: string | null): void {
    if (upn === null) this.#autoApprove.delete(tenantId.toLowerCase());
    else this.#autoApprove.set(tenantId.toLowerCase(), upn);
  }

  /** Tenant ids that have an auto-approving UPN, in insertion order. */
  autoApproveTenants(): string[] {
    return [...this.#autoApprove.keys()];
  }

  /** Creates a pending device code (random device code, 9-letter user code) with the current settings. */
  createDeviceCode(tenantId: string | null, clientId: string, scope: string): DeviceCodeEntry {
    this.#prune();
    let userCode: string;
    do {
      userCode = Array.from({ length: 9 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');
    } while (this.#byUserCode.has(userCode));
    const now = Date.now();
    const entry: DeviceCodeEntry = {
      deviceCode: `DAQABIQEAAAD${randomBytes(96).toString('base64url')}`,
      userCode,
      tenantId,
      clientId,
      scope,
      createdAt: now,
      expiresAt: now + this.#settings.expiresInSeconds * 1000,
      status: 'pending',
    };
    this.#codes.set(entry.deviceCode, entry);
    this.#byUserCode.set(userCode, entry);
    return entry;
  }

  /** The entry of a device code, or undefined. */
  byDeviceCode(deviceCode: string): DeviceCodeEntry | undefined {
    return this.#codes.get(deviceCode);
  }

  /** The entry of a user code (case-insensitive, dashes and spaces ignored), or undefined. */
  byUserCode(userCode: string): DeviceCodeEntry | undefined {
    return this.#byUserCode.get(userCode.toUpperCase().replace(/[\s-]/g, ''));
  }

  /** Every device code kept (pending or finished, until pruned an hour after expiry). */
  deviceCodes(): DeviceCodeEntry[] {
    return [...this.#codes.values()].map((e) => ({ ...e }));
  }

  /** Issues an opaque refresh token for a user and client (valid 90 days). */
  issueRefreshToken(grant: Omit<RefreshGrant, 'expiresAt'>): string {
    if (this.#refresh.size >= MAX_ENTRIES) this.#refresh.clear();
    const token = `1.AQ${randomBytes(120).toString('base64url')}`;
    this.#refresh.set(token, { ...grant, expiresAt: Date.now() + 90 * 86_400_000 });
    return token;
  }

  /** The subject of a refresh token still valid, or undefined. */
  refreshGrant(token: string): RefreshGrant | undefined {
    const g = this.#refresh.get(token);
    if (!g || g.expiresAt <= Date.now()) return undefined;
    return g;
  }

  /** Credentials issued by sign-ins (device codes and refresh tokens), each with a description naming no value. */
  credentials(): { value: string; what: string }[] {
    return [
      ...[...this.#codes.values()].map((e) => ({ value: e.deviceCode, what: `device code of user code ${e.userCode}` })),
      ...[...this.#refresh.entries()].map(([token, g], i) => ({ value: token, what: `refresh token #${i + 1} of user ${g.userId}` })),
      ...[...this.#authCodes.entries()].map(([code, g], i) => ({ value: code, what: `authorization code #${i + 1} of user ${g.userId}` })),
    ];
  }

  /** Forgets every device code and refresh token, and resets settings, consent behaviours and auto-approvals. */
  reset(): void {
    this.#consent.clear();
    this.#autoApprove.clear();
    this.#codes.clear();
    this.#byUserCode.clear();
    this.#refresh.clear();
    this.#browserUser.clear();
    this.#authCodes.clear();
    this.#signedInAdminTenant = null;
    this.#settings = { intervalSeconds: 5, expiresInSeconds: 900 };
  }

  #prune(): void {
    const cutoff = Date.now() - 3_600_000;
    if (this.#codes.size < MAX_ENTRIES) {
      for (const [k, e] of this.#codes) {
        if (e.expiresAt < cutoff) {
          this.#codes.delete(k);
          this.#byUserCode.delete(e.userCode);
        }
      }
      return;
    }
    this.#codes.clear();
    this.#byUserCode.clear();
  }
}

/** Outcome of `approveDeviceCode`: the updated entry, or why the approval was refused. */
export type ApproveResult =
  | { ok: true; entry: DeviceCodeEntry }
  | { ok: false; status: 404 | 409; code: 'UserNotFound' | 'DeviceCodeNotPending' | 'DeviceCodeExpired' | 'UserDisabled'; message: string };

/**
 * Signs `upn` in on the device-login page for a pending code: the user must exist in the code's tenant (for a
 * `common`/`organizations` code: in any served tenant, found by UPN) and be enabled; the code must be pending and not
 * expired. Conditional Access and MFA flags are not checked here (the token endpoint answers AADSTS53003 on redemption).
 */
export function approveDeviceCode(store: TenantStore, entry: DeviceCodeEntry, upn: string): ApproveResult {
  if (entry.status !== 'pending') return { ok: false, status: 409, code: 'DeviceCodeNotPending', message: `device code ${entry.userCode} is ${entry.status}` };
  if (Date.now() >= entry.expiresAt) return { ok: false, status: 409, code: 'DeviceCodeExpired', message: `device code ${entry.userCode} has expired` };
  const tenants = entry.tenantId ? [store.get(entry.tenantId)].filter((t): t is Tenant => t !== undefined) : store.list();
  for (const tenant of tenants) {
    const user = findUserByUpn(tenant, upn);
    if (!user) continue;
    if (!user.accountEnabled) return { ok: false, status: 409, code: 'UserDisabled', message: `user ${upn} is disabled` };
    entry.status = 'approved';
    entry.approvedTenantId = tenant.id;
    entry.approvedUserId = user.id;
    return { ok: true, entry };
  }
  return { ok: false, status: 404, code: 'UserNotFound', message: `no user '${upn}' in ${entry.tenantId ? `tenant ${entry.tenantId}` : 'any served tenant'}` };
}
