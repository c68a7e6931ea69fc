/**
 * Control interface of the running emulator, in process (`EmulatorControl`) and over HTTP under `/_emulator/` (JSON),
 * for tests and benchmarks: change tenants while they are served, inject faults, enforce the documented limits
 * (`setThrottling`, `throttling()`), read the request log, change the
 * token lifetime, mint tokens (e.g. a user token for BAP's adminApplications PUT).
 *
 * Errors are `ControlError` in process and `{"error":{"code","message"}}` with the same status over HTTP.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONTENT_TYPES, isContentType, type ContentType } from './auditrecords.ts';
import type { ClockState } from './clock.ts';
import { POWER_PLATFORM_ADMIN_ROLES, SYSTEM_ADMINISTRATOR } from './constants.ts';
import type { ServiceName } from './common.ts';
import type { DirectoryChanges } from './delta.ts';
import type {
  AddedContent,
  AuditGroundTruth,
  AuditGroundTruthOptions,
  FeedSettings,
  FeedSettingsPatch,
  FeedStore,
  FeedSubscription,
  PowerBiSettings,
  PublisherStats,
  TenantFeed,
} from './feed.ts';
import type { FaultConfig, FaultCounters, FaultInjector } from './faults.ts';
import type { Throttler, ThrottlingConfig, ThrottlingState } from './throttling.ts';
import type { ForeignLinkCounters, ForeignLinkRule, ForeignLinks } from './foreignlinks.ts';
import { generateTenant, groundTruth, type GenerateOptions, type GroundTruth } from './generate.ts';
import type { RequestLog, RequestLogEntry } from './log.ts';
import { ConsentError, consentServicePrincipal, revokeServicePrincipalRoles } from './managed.ts';
import { changePowerBiWorkspace, PowerBiChangeError, type PowerBiWorkspace, type PowerBiWorkspaceChange } from './powerbiinventory.ts';
import { approveDeviceCode, CONSENT_BEHAVIORS, type ConsentBehavior, type DeviceCodeEntry, type DeviceCodeSettings, type SignInState } from './signin.ts';
import {
  findApp,
  findUserByUpn,
  indexes,
  resolveMember,
  TenantConflictError,
  type AppRegistration,
  type AppUser,
  type Bot,
  type DataverseOrg,
  type Device,
  type DirectoryGroup,
  type DirectoryUser,
  type Environment,
  type ServicePrincipal,
  type SystemUser,
  type Tenant,
  type TenantStore,
} from './tenant.ts';
import type { TokenService } from './tokens.ts';
import {
  CopilotStudioError,
  CopilotStudioRuntime,
  type AnalyzeOptions,
  type AnalyzeOutcome,
  type AnalyzeToolExecutionRequest,
  type FederatedCredential,
  type ProtectionScenario,
  type ReplayOptions,
  type ReplayResult,
  type ThreatDetectionSettings,
  type ThreatDetectionState,
} from './copilotstudio.ts';
import { protectionScenarios, type ProtectionScenarioOptions, type ProtectionScenarioSet } from './protectionscenarios.ts';
import { findBot, quarantineOf, setQuarantine, type BotQuarantineStatus } from './quarantine.ts';

/**
 * Model kinds the control interface edits. Ids per kind: users/groups/servicePrincipals/devices → object id;
 * apps → appId; environments → BAP name (GUID); bots → botid; systemusers → systemuserid;
 * memberships → `{groupId}/{memberId}`; appUsers → `{environment}/{appId}`.
 * Env-scoped kinds (bots, systemusers, appUsers) take `environment` in the added object: the environment's BAP name,
 * Dataverse uniqueName or display name.
 */
export type ModelKind = 'users' | 'groups' | 'memberships' | 'environments' | 'bots' | 'systemusers' | 'apps' | 'appUsers' | 'servicePrincipals' | 'devices';

/** Every `ModelKind`. */
export const MODEL_KINDS: readonly ModelKind[] = [
  'users',
  'groups',
  'memberships',
  'environments',
  'bots',
  'systemusers',
  'apps',
  'appUsers',
  'servicePrincipals',
  'devices',
];

/** A control-interface failure with the HTTP status it maps to (400 bad input, 404 unknown, 409 conflict). */
export class ControlError extends Error {
  readonly status: number;
  readonly code: string;

  /** @param status HTTP status; @param code stable machine code; @param message what is wrong. */
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ControlError';
    this.status = status;
    this.code = code;
  }
}

/** Options of `EmulatorControl.mintToken`. */
export interface MintTokenRequest {
  tenantId: string;
  /** Audience, e.g. `https://service.powerapps.com`. */
  resource: string;
  /** `user` (default) or `app`. */
  kind?: 'user' | 'app';
  /** For user tokens: the directory user (default: the first member user). */
  userId?: string;
  /** For app tokens: the app (default: `tenant.connectorAppId`, else the first app). */
  appId?: string;
  /** Override the `roles` claim. */
  roles?: string[];
  /** Seconds until expiry; negative gives an already expired token. Default: the current token lifetime. */
  expiresInSeconds?: number;
  /** For user tokens: `appid` (the client signed in with). Default Azure PowerShell. */
  clientId?: string;
  /** For user tokens: the `scp` claim (space-separated delegated permissions). Default `user_impersonation`. */
  scp?: string;
}

/** Emulator switches of an environment (see `EmulatorControl.setEnvironmentFlags`). */
export interface EnvironmentFlags {
  /** BAP `addAppUser` fails for this environment. */
  refuseAddAppUser?: boolean;
  /** Dataverse role association (`systemuserroles_association/$ref` POST) fails in this environment. */
  refuseRoleAssignment?: boolean;
}

/** A request-log entry whose path contains a credential (see `EmulatorControl.requestLogLeaks`). */
export interface LogLeak {
  /** `seq` of the log entry. */
  seq: number;
  method: string;
  path: string;
  /** What leaked, without the value: `password of {upn}`, `client secret {keyId} of app {appId}`, `values[{i}]`. */
  what: string;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Obj, k: string): string | undefined {
  return typeof o[k] === 'string' ? (o[k] as string) : undefined;
}

function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Dependencies of `EmulatorControl`. */
export interface ControlDeps {
  store: TenantStore;
  tokens: TokenService;
  faults: FaultInjector;
  /** The enforced limits (absent: the throttling methods throw ControlError 501). */
  throttling?: Throttler;
  log: RequestLog;
  signIn: SignInState;
  /** The audit feeds and the emulated clock (absent: the feed methods throw ControlError 501). */
  feeds?: FeedStore;
  /** Change log of users and groups behind Graph delta query (add/update/remove record into it). */
  changes: DirectoryChanges;
  /** Foreign-link rules (absent: the foreign-link methods throw ControlError 501). */
  foreignLinks?: ForeignLinks;
  /** `https://127.0.0.1:PORT` once listening (the issuer of minted ID tokens). */
  baseUrl?: () => string;
}

/** The score of `EmulatorControl.replayScenarios`. */
export interface ScenarioScore {
  environmentId: string;
  botId: string;
  /** Benign scenarios, and how many ran to their end. */
  benign: number;
  benignAllowed: number;
  /** Attack scenarios, and how many stopped at or before their attack step. */
  attacks: number;
  attacksStopped: number;
  /** One line per scenario: `decidedBy` and `latencyMs` per analysed step. */
  results: {
    scenarioId: string;
    label: 'benign' | 'attack';
    detector: string | null;
    attackStep: number | null;
    stoppedAt: number | null;
    expected: 'allow' | 'block';
    ok: boolean;
    decidedBy: ('provider' | 'timeout' | 'error')[];
    latencyMs: number[];
  }[];
}

/** Power BI activity events of a window, as `EmulatorControl.powerBiGroundTruth` counts them. */
export interface PowerBiGroundTruth {
  from: string;
  to: string;
  /** Events with CreationTime in [from, to) that have happened on the emulated clock. */
  count: number;
  ids: string[];
  /** Events per `Activity`. */
  byActivity: Record<string, number>;
}

/** In-process control of a running emulator. Every method is synchronous except `mintToken`. */
export class EmulatorControl {
  readonly #d: ControlDeps;
  readonly #studio: CopilotStudioRuntime;

  /** @param deps the running emulator's parts. */
  constructor(deps: ControlDeps) {
    this.#d = deps;
    this.#studio = new CopilotStudioRuntime({ store: deps.store, tokens: deps.tokens });
  }

  /** Releases what the control holds outside the server (pooled connections to threat-detection providers). */
  close(): void {
    this.#studio.close();
  }

  /** The served tenants (live objects: mutating them changes what is served). */
  tenants(): Tenant[] {
    return this.#d.store.list();
  }

  /** The live tenant object by id or domain. Throws ControlError 404. */
  tenant(tenantIdOrDomain: string): Tenant {
    const t = this.#d.store.resolve(tenantIdOrDomain);
    if (!t) throw new ControlError(404, 'TenantNotFound', `no served tenant '${tenantIdOrDomain}'`);
    return t;
  }

  /** Starts serving another tenant. Throws ControlError 409 when its id or a domain is already served. */
  addTenant(tenant: Tenant): Tenant {
    try {
      this.#d.store.add(tenant);
    } catch (e) {
      if (e instanceof TenantConflictError) throw new ControlError(409, 'TenantConflict', e.message);
      throw e;
    }
    return tenant;
  }

  /** Generates a tenant (see `generateTenant`) and serves it. */
  generateTenant(options: GenerateOptions): Tenant {
    let t: Tenant;
    try {
      t = generateTenant(options);
    } catch (e) {
      throw new ControlError(400, 'InvalidGenerateOptions', (e as Error).message);
    }
    return this.addTenant(t);
  }

  /** Stops serving a tenant. Throws ControlError 404. */
  removeTenant(tenantId: string): void {
    const t = this.tenant(tenantId);
    this.#d.store.remove(t.id);
  }

  /** Ground truth of a served tenant (see `groundTruth`). */
  groundTruth(tenantId: string, options: { appId?: string; now?: string } = {}): GroundTruth {
    return groundTruth(this.tenant(tenantId), options);
  }

  /** Drops cached indexes of a tenant after direct mutation that replaced ids in place. */
  invalidate(tenantId: string): void {
    this.#d.store.invalidate(this.tenant(tenantId));
  }

  /**
   * Adds an object of a kind; missing fields get defaults (ids are random GUIDs). Returns the stored object.
   * Memberships take `{groupId, memberId}`; env-scoped kinds take `environment`.
   * Throws ControlError 400 (bad object), 404 (unknown tenant, group, member or environment), 409 (duplicate id).
   */
  add(tenantId: string, kind: ModelKind, object: unknown): unknown {
    const t = this.tenant(tenantId);
    if (!isObj(object)) throw new ControlError(400, 'InvalidObject', `${kind}: the object must be a JSON object`);
    const o = { ...object };
    const result = this.#add(t, kind, o);
    this.#d.store.invalidate(t);
    if (kind === 'users' || kind === 'groups') this.#d.changes.record(t, kind, (result as { id: string }).id);
    if (kind === 'memberships') {
      const m = result as { groupId: string; memberId: string };
      this.#d.changes.recordMember(t, m.groupId, m.memberId, resolveMember(t, m.memberId)?.kind ?? null, false);
    }
    return result;
  }

  /**
   * Shallow-merges `patch` into the object (`environments`: a `dataverse` object is merged into the org, `null`
   * removes it). Returns the updated object. Throws ControlError 404 for an unknown id, 400 for memberships.
   */
  update(tenantId: string, kind: ModelKind, id: string, patch: unknown): unknown {
    const t = this.tenant(tenantId);
    if (!isObj(patch)) throw new ControlError(400, 'InvalidObject', `${kind}: the patch must be a JSON object`);
    const target = this.#find(t, kind, id);
    if (kind === 'memberships') throw new ControlError(400, 'NotUpdatable', 'memberships cannot be updated; remove and add instead');
    const obj = target.object as Obj;
    const idBefore = obj.id;
    if (kind === 'environments' && 'dataverse' in patch) {
      const { dataverse, ...rest } = patch;
      Object.assign(obj, rest);
      const env = obj as unknown as Environment;
      if (dataverse === null) env.dataverse = null;
      else if (isObj(dataverse)) env.dataverse = env.dataverse ? Object.assign(env.dataverse, dataverse) : this.#org(t, dataverse);
    } else {
      Object.assign(obj, patch);
    }
    this.#d.store.invalidate(t);
    if (kind === 'users' || kind === 'groups') {
      // A patched id reads, for delta query, as the old object removed and a new one added.
      if (typeof idBefore === 'string' && idBefore !== obj.id) this.#d.changes.record(t, kind, idBefore, true);
      this.#d.changes.record(t, kind, String(obj.id));
    }
    return obj;
  }

  /**
   * Removes an object. Removing a user, group, service principal or device also removes it from every group's
   * members (as Entra does); removing a group drops its member list. Throws ControlError 404 for an unknown id.
   */
  remove(tenantId: string, kind: ModelKind, id: string | { groupId: string; memberId: string }): void {
    const t = this.tenant(tenantId);
    const key = typeof id === 'string' ? id : `${id.groupId}/${id.memberId}`;
    const target = this.#find(t, kind, key);
    // Membership changes feed `groups/delta` rounds that select `members` (a removed object leaves its groups).
    const removedMember = kind === 'memberships' ? (target.object as { groupId: string; memberId: string }) : null;
    const removedKind = removedMember ? (resolveMember(t, removedMember.memberId)?.kind ?? null) : null;
    target.detach();
    if (removedMember) this.#d.changes.recordMember(t, removedMember.groupId, removedMember.memberId, removedKind, true);
    if (['users', 'groups', 'servicePrincipals', 'devices', 'apps'].includes(kind)) {
      const objectId = kind === 'apps' ? (target.object as AppRegistration).servicePrincipalObjectId : key;
      const memberKind = ({ users: 'user', groups: 'group', servicePrincipals: 'servicePrincipal', apps: 'servicePrincipal', devices: 'device' } as const)[
        kind as 'users'
      ];
      if (kind === 'groups') delete t.memberships[key];
      for (const [g, ids] of Object.entries(t.memberships)) {
        if (ids.includes(objectId)) {
          t.memberships[g] = ids.filter((m) => m !== objectId);
          this.#d.changes.recordMember(t, g, objectId, memberKind, true);
        }
      }
    }
    this.#d.store.invalidate(t);
    if (kind === 'users' || kind === 'groups') this.#d.changes.record(t, kind, (target.object as { id: string }).id, true);
  }

  /** Turns fault injection on with this configuration (see `FaultConfig`). Throws ControlError 400 on bad input. */
  setFaults(config: FaultConfig): void {
    try {
      this.#d.faults.set(config);
    } catch (e) {
      throw new ControlError(400, 'InvalidFaultConfig', (e as Error).message);
    }
  }

  /** Turns fault injection off. */
  clearFaults(): void {
    this.#d.faults.clear();
  }

  /** Active fault configuration (null when off) and counters of injected faults. */
  faults(): { config: FaultConfig | null; counters: FaultCounters } {
    return { config: this.#d.faults.config, counters: this.#d.faults.counters() };
  }

  /**
   * Turns the enforced limits on or off (`throttling.ts`): e.g. `{ enabled: true }` for the documented figures,
   * `{ enabled: true, scale: 0.01 }` for a hundredth of every capacity, `{ enabled: true, limits: { dataverseUser:
   * { capacity: 10, windowSeconds: 5 } } }` for one override. Buckets start full again; counters are kept. Throws
   * ControlError 400 on bad input.
   */
  setThrottling(config: ThrottlingConfig): ThrottlingState {
    const t = this.#throttling();
    try {
      t.set(config);
    } catch (e) {
      throw new ControlError(400, 'InvalidThrottlingConfig', (e as Error).message);
    }
    return t.state();
  }

  /** Whether limits are enforced, the effective limits, and per-bucket / per-service / per-limit requests and 429s. */
  throttling(): ThrottlingState {
    return this.#throttling().state();
  }

  /** Zeroes the throttling counters (buckets keep their levels). */
  resetThrottlingCounters(): void {
    this.#throttling().resetCounters();
  }

  #throttling(): Throttler {
    if (!this.#d.throttling) throw new ControlError(501, 'NotAvailable', 'this emulator was built without throttling');
    return this.#d.throttling;
  }

  /**
   * Makes answers carry links to another host (see `ForeignLinkRule`): e.g.
   * `{ service: 'graph', field: '@odata.deltaLink', origin: 'https://127.0.0.2:8443' }`. Replaces earlier rules.
   * Throws ControlError 400 on a bad rule.
   */
  setForeignLinks(rules: ForeignLinkRule[]): void {
    const links = this.#foreignLinks();
    try {
      links.set(rules);
    } catch (e) {
      throw new ControlError(400, 'InvalidForeignLinks', (e as Error).message);
    }
  }

  /** Stops rewriting links. */
  clearForeignLinks(): void {
    this.#foreignLinks().clear();
  }

  /** Active foreign-link rules and how many links were rewritten. */
  foreignLinks(): { rules: ForeignLinkRule[]; counters: ForeignLinkCounters } {
    const links = this.#foreignLinks();
    return { rules: links.rules, counters: links.counters() };
  }

  #foreignLinks(): ForeignLinks {
    if (!this.#d.foreignLinks) throw new ControlError(501, 'NotAvailable', 'this emulator was built without foreign-link rules');
    return this.#d.foreignLinks;
  }

  /** Zeroes the fault counters. */
  resetFaultCounters(): void {
    this.#d.faults.resetCounters();
  }

  /** The request log (oldest first), optionally one service only. Control API calls are not logged. */
  requests(filter: { service?: ServiceName } = {}): RequestLogEntry[] {
    return this.#d.log.list(filter);
  }

  /** Empties the request log. */
  resetLog(): void {
    this.#d.log.reset();
  }

  /** Lifetime of tokens issued from now on, seconds (integer ≥ 1; default 3599). Throws ControlError 400. */
  setTokenLifetime(seconds: number): void {
    try {
      this.#d.tokens.setLifetime(seconds);
    } catch (e) {
      throw new ControlError(400, 'InvalidTokenLifetime', (e as Error).message);
    }
  }

  /**
   * Mints an access token without the token endpoint: a user token (an administrator's, as from an interactive
   * sign-in) or an app token with chosen roles or lifetime. Throws ControlError 404 for an unknown tenant/user/app.
   */
  async mintToken(request: MintTokenRequest): Promise<{ access_token: string; expires_in: number }> {
    const t = this.tenant(request.tenantId);
    const resource = request.resource.replace(/\/+$/, '');
    const opts = {
      resource,
      ...(request.roles ? { roles: request.roles } : {}),
      ...(request.expiresInSeconds !== undefined ? { expiresInSeconds: request.expiresInSeconds } : {}),
    };
    if ((request.kind ?? 'user') === 'app') {
      const appId = request.appId ?? t.connectorAppId ?? t.apps[0]?.appId;
      const app = appId ? indexes.apps.get(t.apps, appId) : undefined;
      if (!app) throw new ControlError(404, 'AppNotFound', `no app '${String(appId)}' in tenant ${t.id}`);
      const r = await this.#d.tokens.issueAppToken(t, app, opts);
      return { access_token: r.token, expires_in: r.expiresIn };
    }
    const isAdmin = (u: DirectoryUser): boolean => (u.directoryRoles ?? []).some((r) => POWER_PLATFORM_ADMIN_ROLES.includes(r));
    const user = request.userId
      ? indexes.users.get(t.users, request.userId)
      : (t.users.find((u) => u.userType === 'Member' && isAdmin(u)) ?? t.users.find((u) => u.userType === 'Member'));
    if (!user) throw new ControlError(404, 'UserNotFound', `no user '${String(request.userId ?? '(first member)')}' in tenant ${t.id}`);
    const r = await this.#d.tokens.issueUserToken(t, user, {
      ...opts,
      ...(request.clientId ? { clientId: request.clientId } : {}),
      ...(request.scp ? { scp: request.scp } : {}),
    });
    return { access_token: r.token, expires_in: r.expiresIn };
  }

  /**
   * The Copilot Studio quarantine state of a bot (Power Platform API `botQuarantine`, see quarantine.ts), as the API
   * would answer it. Throws ControlError 404 for an unknown tenant, environment or bot.
   */
  botQuarantine(tenantIdOrDomain: string, environmentId: string, botId: string): BotQuarantineStatus {
    return { ...quarantineOf(this.#bot(tenantIdOrDomain, environmentId, botId)) };
  }

  /** Sets the quarantine state of a bot as an administrator would elsewhere. Throws ControlError 404 like `botQuarantine`. */
  setBotQuarantine(tenantIdOrDomain: string, environmentId: string, botId: string, quarantined: boolean): BotQuarantineStatus {
    return { ...setQuarantine(this.#bot(tenantIdOrDomain, environmentId, botId), quarantined) };
  }

  #bot(tenantIdOrDomain: string, environmentId: string, botId: string): Bot {
    const bot = findBot(this.tenant(tenantIdOrDomain), environmentId, botId);
    if (!bot) throw new ControlError(404, 'BotNotFound', `no bot '${botId}' in environment '${environmentId}'`);
    return bot;
  }

  // --- admin consent and managed applications ----------------------------------------------------------------------

  /**
   * What the administrator of a tenant does at `/adminconsent`: `approve` (default), `deny` (cancel) or
   * `consent_required` (the service refuses, AADSTS65004). Throws ControlError 404 (tenant) or 400 (behaviour).
   */
  setConsentBehavior(tenantIdOrDomain: string, behavior: ConsentBehavior): void {
    const t = this.tenant(tenantIdOrDomain);
    if (!CONSENT_BEHAVIORS.includes(behavior)) throw new ControlError(400, 'InvalidConsentBehavior', `behavior must be one of ${CONSENT_BEHAVIORS.join(', ')}`);
    this.#d.signIn.setConsentBehavior(t.id, behavior);
  }

  /** The consent behaviour of a tenant. Throws ControlError 404. */
  consentBehavior(tenantIdOrDomain: string): ConsentBehavior {
    return this.#d.signIn.consentBehavior(this.tenant(tenantIdOrDomain).id);
  }

  /**
   * The tenant of the administrator signed in at `/common/adminconsent` and `/organizations/adminconsent` (and the
   * first tenant tried for device-code auto-approval on those aliases); null signs out. Throws ControlError 404.
   */
  setSignedInAdminTenant(tenantIdOrDomain: string | null): void {
    this.#d.signIn.setSignedInAdminTenant(tenantIdOrDomain === null ? null : this.tenant(tenantIdOrDomain).id);
  }

  /**
   * Admin consent without the HTTP round trip (see `consentServicePrincipal`): creates or refreshes the app's service
   * principal in the tenant and returns it. Throws ControlError 404 (tenant or app) or 400 (single-tenant app).
   */
  grantAdminConsent(tenantIdOrDomain: string, appId: string): AppRegistration {
    const t = this.tenant(tenantIdOrDomain);
    try {
      return consentServicePrincipal(this.#d.store, t, appId).app;
    } catch (e) {
      if (e instanceof ConsentError) throw new ControlError(e.code === 'AppNotFound' ? 404 : 400, e.code, e.message);
      throw e;
    }
  }

  /** The app entry (application or consented service principal) of `appId` in a tenant. Throws ControlError 404. */
  servicePrincipal(tenantIdOrDomain: string, appId: string): AppRegistration {
    const t = this.tenant(tenantIdOrDomain);
    const app = findApp(t, appId);
    if (!app) throw new ControlError(404, 'NotConsented', `application '${appId}' has no service principal in tenant ${t.id}`);
    return app;
  }

  /**
   * Revokes granted application permissions of an app's service principal in one tenant (see
   * `revokeServicePrincipalRoles`); returns the remaining `grantedRoles`. Throws ControlError 404.
   */
  revokeServicePrincipalRoles(tenantIdOrDomain: string, appId: string, options: { resource?: string; roles?: string[] } = {}): Record<string, string[]> {
    const t = this.tenant(tenantIdOrDomain);
    try {
      return revokeServicePrincipalRoles(t, appId, options);
    } catch (e) {
      if (e instanceof ConsentError) throw new ControlError(404, e.code, e.message);
      throw e;
    }
  }

  // --- device-code flow ---------------------------------------------------------------------------------------------

  /** Device codes issued and not yet pruned (copies), newest last. */
  deviceCodes(): DeviceCodeEntry[] {
    return this.#d.signIn.deviceCodes();
  }

  #deviceCode(userCode: string): DeviceCodeEntry {
    const entry = this.#d.signIn.byUserCode(userCode);
    if (!entry) throw new ControlError(404, 'DeviceCodeNotFound', `no device code with user code '${userCode}'`);
    return entry;
  }

  /**
   * Signs `upn` in for a pending user code (the next poll gets tokens). Throws ControlError 404 (code or user), 409
   * (not pending, expired, user disabled).
   */
  approveDeviceCode(userCode: string, upn: string): DeviceCodeEntry {
    const result = approveDeviceCode(this.#d.store, this.#deviceCode(userCode), upn);
    if (!result.ok) throw new ControlError(result.status, result.code, result.message);
    return { ...result.entry };
  }

  /** Declines a pending user code (the next poll gets `authorization_declined`). Throws ControlError 404 / 409. */
  declineDeviceCode(userCode: string): DeviceCodeEntry {
    const entry = this.#deviceCode(userCode);
    if (entry.status !== 'pending') throw new ControlError(409, 'DeviceCodeNotPending', `device code ${entry.userCode} is ${entry.status}`);
    entry.status = 'declined';
    return { ...entry };
  }

  /** Makes a device code expire now (the next poll gets `expired_token`). Throws ControlError 404. */
  expireDeviceCode(userCode: string): DeviceCodeEntry {
    const entry = this.#deviceCode(userCode);
    entry.expiresAt = Date.now() - 1;
    return { ...entry };
  }

  /**
   * Approves every device code issued for the tenant from now on as `upn` (null turns it off). For codes requested on
   * `common`/`organizations`, the signed-in admin tenant's setting applies first, then any tenant's.
   * Throws ControlError 404 (tenant, or no such user in it).
   */
  setDeviceCodeAutoApprove(tenantIdOrDomain: string, upn: string | null): void {
    const t = this.tenant(tenantIdOrDomain);
    if (upn !== null && !findUserByUpn(t, upn)) throw new ControlError(404, 'UserNotFound', `no user '${upn}' in tenant ${t.id}`);
    this.#d.signIn.setAutoApprove(t.id, upn);
  }

  /**
   * The account signed in in the browser at a tenant's `/authorize` endpoint (null: the tenant's first enabled Global
   * Administrator). The UPN may belong to another tenant (then `/authorize` answers AADSTS50020, as Entra does for an
   * account that does not exist in the tenant). Throws ControlError 404 (tenant, or no such user in any tenant).
   */
  setBrowserUser(tenantIdOrDomain: string, upn: string | null): void {
    const t = this.tenant(tenantIdOrDomain);
    if (upn !== null && !this.#d.store.list().some((x) => findUserByUpn(x, upn)))
      throw new ControlError(404, 'UserNotFound', `no user '${upn}' in any served tenant`);
    this.#d.signIn.setBrowserUser(t.id, upn);
  }

  /**
   * Mints a v2.0 ID token as the token endpoint would for `clientId` (with `wids` when the user holds roles), for tests
   * that forge or replay what a browser delivers. `issuerTenantId` overrides the tenant in `iss` (default: the tenant).
   * Throws ControlError 404 for an unknown tenant or user.
   */
  async mintIdToken(request: { tenantId: string; userId?: string; clientId: string; nonce?: string; expiresInSeconds?: number }): Promise<string> {
    const t = this.tenant(request.tenantId);
    const user = request.userId
      ? indexes.users.get(t.users, request.userId)
      : t.users.find((u) => u.userType === 'Member' && (u.directoryRoles ?? []).length > 0);
    if (!user) throw new ControlError(404, 'UserNotFound', `no user '${String(request.userId ?? '(first member with a role)')}' in tenant ${t.id}`);
    return this.#d.tokens.issueIdToken(`${this.#d.baseUrl?.() ?? ''}/${t.id}/v2.0`, t, user, request.clientId, {
      nonce: request.nonce,
      wids: true,
      ...(request.expiresInSeconds !== undefined ? { expiresInSeconds: request.expiresInSeconds } : {}),
    });
  }

  /**
   * Polling interval and lifetime answered by `/devicecode` for codes issued from now on (integers ≥ 1; defaults
   * 5 and 900). Returns the settings in force. Throws ControlError 400.
   */
  setDeviceCodeSettings(settings: Partial<DeviceCodeSettings>): DeviceCodeSettings {
    try {
      return this.#d.signIn.setDeviceCodeSettings(settings);
    } catch (e) {
      throw new ControlError(400, 'InvalidDeviceCodeSettings', (e as Error).message);
    }
  }

  /** Forgets device codes and refresh tokens, and resets consent behaviours, auto-approvals and device-code settings. */
  resetSignInState(): void {
    this.#d.signIn.reset();
  }

  // --- Graph delta query ------------------------------------------------------------------------------------------

  /**
   * Makes Graph forget the delta sync state of a tenant: every `users/delta` and `groups/delta` token (deltaLink or
   * nextLink) issued before this call answers 410 `syncStateNotFound`; tokens issued afterwards work. The change log
   * itself is kept. Throws ControlError 404.
   */
  expireDeltaTokens(tenantIdOrDomain: string): void {
    this.#d.changes.expire(this.tenant(tenantIdOrDomain));
  }

  // --- environment switches -----------------------------------------------------------------------------------------

  /**
   * Sets emulator switches of an environment (by BAP name, Dataverse uniqueName or display name): `refuseAddAppUser`,
   * `refuseRoleAssignment` (`false` clears). Returns the environment. Throws ControlError 404.
   */
  setEnvironmentFlags(tenantIdOrDomain: string, environment: string, flags: EnvironmentFlags): Environment {
    const t = this.tenant(tenantIdOrDomain);
    const env = this.#env(t, environment);
    for (const key of ['refuseAddAppUser', 'refuseRoleAssignment'] as const) {
      const v = flags[key];
      if (v === undefined) continue;
      if (typeof v !== 'boolean') throw new ControlError(400, 'InvalidObject', `${key} must be a boolean`);
      if (v) env[key] = true;
      else delete env[key];
    }
    return env;
  }

  // --- audit feed and emulated clock ---------------------------------------------------------------------------------

  #feedStore(): FeedStore {
    if (!this.#d.feeds) throw new ControlError(501, 'FeedNotAvailable', 'this control has no audit feed (construct it with deps.feeds)');
    return this.#d.feeds;
  }

  #feed(tenantIdOrDomain: string): TenantFeed {
    const t = this.tenant(tenantIdOrDomain);
    return this.#feedStore().feed(t.id) as TenantFeed;
  }

  #contentType(value: unknown): ContentType {
    if (typeof value !== 'string' || !isContentType(value))
      throw new ControlError(400, 'InvalidContentType', `contentType must be one of ${CONTENT_TYPES.join(', ')}`);
    return value;
  }

  /** The emulated clock of the audit feed (Management Activity and Power BI only; tokens use real time). */
  clock(): ClockState {
    return this.#feedStore().clock.state();
  }

  /**
   * Freezes the feed clock at an ISO instant, or returns to real time with null. Throws ControlError 400 for an
   * unparsable instant.
   */
  setClock(iso: string | null): ClockState {
    try {
      this.#feedStore().clock.set(iso);
    } catch (e) {
      throw new ControlError(400, 'InvalidClock', (e as Error).message);
    }
    return this.clock();
  }

  /** Moves the feed clock by `seconds` (a frozen clock jumps; a real-time one gains an offset). ControlError 400 on NaN. */
  advanceClock(seconds: number): ClockState {
    try {
      this.#feedStore().clock.advance(seconds);
    } catch (e) {
      throw new ControlError(400, 'InvalidClock', (e as Error).message);
    }
    return this.clock();
  }

  /** The audit-feed settings of a tenant (see `FeedSettings`). Throws ControlError 404. */
  feedSettings(tenantIdOrDomain: string): FeedSettings {
    return this.#feed(tenantIdOrDomain).settings();
  }

  /**
   * Changes a tenant's audit-feed settings (rate, mix, delays, blob size, duplicate share, page size, unavailable
   * content types, …) and re-snapshots its users; returns the settings in force. Throws ControlError 400 / 404.
   */
  configureFeed(tenantIdOrDomain: string, patch: FeedSettingsPatch): FeedSettings {
    const feed = this.#feed(tenantIdOrDomain);
    try {
      return feed.configure(patch);
    } catch (e) {
      throw new ControlError(400, 'InvalidFeedSettings', (e as Error).message);
    }
  }

  /** The tenant's Management Activity subscriptions (ever started). Throws ControlError 404. */
  subscriptions(tenantIdOrDomain: string): FeedSubscription[] {
    return this.#feed(tenantIdOrDomain).subscriptions();
  }

  /**
   * Enables a subscription without HTTP (idempotent). Throws ControlError 400 for an unknown content type, 409 when the
   * content type is unavailable to the tenant, 404 for an unknown tenant.
   */
  startSubscription(tenantIdOrDomain: string, contentType: string): FeedSubscription {
    const feed = this.#feed(tenantIdOrDomain);
    const ct = this.#contentType(contentType);
    const r = feed.start(ct);
    if (r.outcome === 'unavailable') throw new ControlError(409, 'ContentTypeUnavailable', `${ct} is unavailable to the tenant (unavailableContentTypes)`);
    return feed.subscription(ct) as FeedSubscription;
  }

  /** Stops (disables) a subscription without HTTP. Throws ControlError 400 / 404 (404 also when never started). */
  stopSubscription(tenantIdOrDomain: string, contentType: string): void {
    const feed = this.#feed(tenantIdOrDomain);
    if (!feed.stop(this.#contentType(contentType))) throw new ControlError(404, 'SubscriptionNotFound', `no subscription for ${contentType}`);
  }

  /**
   * Plants audit records in new content blobs of a content type (for detection tests: a positive case and a near
   * miss). `contentCreated` (ISO) defaults to the emulated now; missing `Id`, `OrganizationId` and `CreationTime` are
   * filled in. Returns the blobs created. Throws ControlError 400 / 404.
   */
  addAuditRecords(
    tenantIdOrDomain: string,
    contentType: string,
    records: Record<string, unknown>[],
    options: { contentCreated?: string } = {},
  ): AddedContent[] {
    const feed = this.#feed(tenantIdOrDomain);
    const ct = this.#contentType(contentType);
    try {
      return feed.addRecords(ct, records, options);
    } catch (e) {
      throw new ControlError(400, 'InvalidRecords', (e as Error).message);
    }
  }

  /**
   * Ground truth of a tenant's feed over a window on the emulated clock (see `TenantFeed.groundTruth`): unique record
   * Ids per content type whose content is available, lost (expired) and pending counts, duplicates, and counts per
   * RecordType / Operation / scenario. Throws ControlError 400 / 404.
   */
  /**
   * Pre-renders the tenant's available content blobs created in [from, to) (ISO 8601; default: the 7 days of
   * retention) so serving them costs no rendering (see `TenantFeed.prerender`). Throws ControlError 404.
   */
  prerenderFeed(tenantIdOrDomain: string, window: { from?: string; to?: string } = {}): { blobs: number; bytes: number } {
    return this.#feed(tenantIdOrDomain).prerender(window.from ? Date.parse(window.from) : undefined, window.to ? Date.parse(window.to) : undefined);
  }

  auditGroundTruth(tenantIdOrDomain: string, options: AuditGroundTruthOptions): AuditGroundTruth {
    const feed = this.#feed(tenantIdOrDomain);
    try {
      return feed.groundTruth(options);
    } catch (e) {
      throw new ControlError(400, 'InvalidWindow', (e as Error).message);
    }
  }

  /**
   * The Power BI activity events of a window (CreationTime in [from, to), happened on the emulated clock): count, Ids
   * and counts per Activity — what a complete `activityevents` collection returns. Throws ControlError 400 / 404.
   */
  powerBiGroundTruth(tenantIdOrDomain: string, options: { from: string; to: string }): PowerBiGroundTruth {
    const feed = this.#feed(tenantIdOrDomain);
    const from = Date.parse(options.from);
    const to = Date.parse(options.to);
    if (Number.isNaN(from) || Number.isNaN(to) || to < from) throw new ControlError(400, 'InvalidWindow', 'from and to must be ISO instants with from ≤ to');
    const events = feed.powerBiEvents(from, to);
    const byActivity: Record<string, number> = {};
    for (const e of events) {
      const a = String(e.Activity ?? e.Operation);
      byActivity[a] = (byActivity[a] ?? 0) + 1;
    }
    return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), count: events.length, ids: events.map((e) => String(e.Id)), byActivity };
  }

  /** The Power BI tenant settings of a tenant (see `PowerBiSettings`). Throws ControlError 404. */
  powerBiSettings(tenantIdOrDomain: string): PowerBiSettings {
    return this.#feedStore().powerBi(this.tenant(tenantIdOrDomain).id);
  }

  /** Changes Power BI tenant settings (e.g. the read-only admin API switch for service principals). ControlError 400 / 404. */
  setPowerBiSettings(tenantIdOrDomain: string, patch: Partial<PowerBiSettings>): PowerBiSettings {
    const t = this.tenant(tenantIdOrDomain);
    try {
      return this.#feedStore().setPowerBi(t.id, patch);
    } catch (e) {
      throw new ControlError(400, 'InvalidPowerBiSettings', (e as Error).message);
    }
  }

  /** Shorthand: the tenant setting "Service principals can access read-only admin APIs" on or off. */
  setPowerBiAdminApiAccess(tenantIdOrDomain: string, enabled: boolean): PowerBiSettings {
    return this.setPowerBiSettings(tenantIdOrDomain, { servicePrincipalsCanUseReadOnlyAdminApis: enabled });
  }

  /**
   * Modifies a Power BI workspace (add a report, share with a guest, delete, rename; see `changePowerBiWorkspace`) and
   * bumps its modified time to the emulated clock's now. ControlError 400 (bad change) / 404 (unknown tenant or workspace).
   */
  changePowerBiWorkspace(tenantIdOrDomain: string, workspaceId: string, change: PowerBiWorkspaceChange): PowerBiWorkspace {
    const t = this.tenant(tenantIdOrDomain);
    try {
      return changePowerBiWorkspace(t, workspaceId, change, this.#feedStore().clock.now());
    } catch (e) {
      if (e instanceof PowerBiChangeError) throw new ControlError(e.status, e.status === 404 ? 'WorkspaceNotFound' : 'InvalidChange', e.message);
      throw e;
    }
  }

  /** How many Management Activity requests arrived without `PublisherIdentifier` (since start or the last reset). */
  feedRequestsWithoutPublisherIdentifier(): number {
    return this.#feedStore().publisherStats().withoutPublisherIdentifier;
  }

  /** Counts of Management Activity requests: total, without `PublisherIdentifier`, per value. */
  publisherStats(): PublisherStats {
    return this.#feedStore().publisherStats();
  }

  /** Zeroes the `PublisherIdentifier` counters. */
  resetPublisherStats(): void {
    this.#feedStore().resetPublisherStats();
  }

  // --- request-log hygiene ------------------------------------------------------------------------------------------

  /**
   * Request-log entries whose path (with query) contains a credential: every user password and client secret value of
   * the served tenants, every device code and refresh token issued, plus `values` (raw, percent-encoded or
   * form-encoded). The result names what leaked, never the
   * value. Empty = clean.
   */
  requestLogLeaks(values: string[] = []): LogLeak[] {
    const needles: { value: string; what: string }[] = [];
    for (const t of this.#d.store.list()) {
      for (const u of t.users) if (u.password) needles.push({ value: u.password, what: `password of ${u.userPrincipalName}` });
      for (const a of t.apps)
        for (const sec of a.secrets) if (sec.value) needles.push({ value: sec.value, what: `client secret ${sec.keyId} of app ${a.appId}` });
    }
    needles.push(...this.#d.signIn.credentials());
    values.forEach((v, i) => {
      if (typeof v === 'string' && v.length > 0) needles.push({ value: v, what: `values[${i}]` });
    });
    const forms = (v: string): string[] => [...new Set([v, encodeURIComponent(v), new URLSearchParams({ v }).toString().slice(2)])];
    const leaks: LogLeak[] = [];
    for (const entry of this.#d.log.list()) {
      for (const n of needles) {
        const hits = forms(n.value).filter((f) => entry.path.includes(f));
        if (hits.length > 0)
          leaks.push({ seq: entry.seq, method: entry.method, path: hits.reduce((p, f) => p.split(f).join('***'), entry.path), what: n.what });
      }
    }
    return leaks;
  }

  /** Throws ControlError 409 `SecretInRequestLog` when `requestLogLeaks(values)` is not empty. */
  assertNoSecretsInRequestLog(values: string[] = []): void {
    const leaks = this.requestLogLeaks(values);
    if (leaks.length > 0)
      throw new ControlError(409, 'SecretInRequestLog', `credentials in the request log: ${leaks.map((l) => `#${l.seq} ${l.method} (${l.what})`).join('; ')}`);
  }

  // --- Copilot Studio external threat detection (copilotstudio.ts) -------------------------------------------------

  /** Runs `fn`, turning a CopilotStudioError into a ControlError with its status and code. */
  async #studioCall<R>(fn: () => R | Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (e) {
      throw asControlError(e);
    }
  }

  /** `#studioCall` for synchronous operations. */
  #studioSync<R>(fn: () => R): R {
    try {
      return fn();
    } catch (e) {
      throw asControlError(e);
    }
  }

  /**
   * Registers the single-tenant Entra application an admin creates for a threat-detection provider (as Microsoft's
   * `Create-CopilotWebhookApp` does): joins the tenant's apps (tokens can be minted for it) with Application ID URI =
   * `baseUrl` and a federated credential (issuer `https://login.microsoftonline.com/{tid}/v2.0`, the documented subject
   * for `baseUrl`, audience `api://AzureADTokenExchange`). Throws ControlError 404 (tenant) or 400 (base URL).
   */
  registerThreatDetectionApp(
    tenantIdOrDomain: string,
    options: { baseUrl: string; displayName?: string },
  ): { appId: string; federatedCredential: FederatedCredential } {
    return this.#studioSync(() => this.#studio.registerThreatDetectionApp(tenantIdOrDomain, options));
  }

  /**
   * Sets up threat detection for an environment as the Power Platform admin center does: saving calls
   * `POST {base}/validate?api-version=2025-05-01`; the settings take effect only when it answers 200
   * `{isSuccessful: true}`; the outcome is recorded either way (`saved` says which). Throws ControlError 404 / 400.
   */
  setThreatDetection(tenantIdOrDomain: string, environment: string, settings: ThreatDetectionSettings): Promise<ThreatDetectionState & { saved: boolean }> {
    return this.#studioCall(() => this.#studio.setThreatDetection(tenantIdOrDomain, environment, settings));
  }

  /** An environment's threat-detection settings (never the CA) and last validation. Throws ControlError 404. */
  threatDetection(tenantIdOrDomain: string, environment: string): ThreatDetectionState {
    return this.#studioSync(() => this.#studio.threatDetection(tenantIdOrDomain, environment));
  }

  /** Turns threat detection off in an environment. Throws ControlError 404. */
  clearThreatDetection(tenantIdOrDomain: string, environment: string): void {
    this.#studioSync(() => this.#studio.clearThreatDetection(tenantIdOrDomain, environment));
  }

  /**
   * The benign and attack conversations of one agent (`protectionscenarios.ts`); installs the tools they call on the
   * agent (botcomponent rows, idempotent). Throws ControlError 404 (tenant, environment or agent not found).
   */
  protectionScenarios(tenantIdOrDomain: string, options: ProtectionScenarioOptions = {}): ProtectionScenarioSet {
    const t = this.tenant(tenantIdOrDomain);
    try {
      return protectionScenarios(t, options);
    } catch (e) {
      throw new ControlError(404, 'ScenarioAgentNotFound', (e as Error).message);
    }
  }

  /**
   * One `POST {base}/analyze-tool-execution` with Copilot Studio's rules (1,000 ms budget, error behaviour).
   * Throws ControlError 404 or 409 (threat detection not set up in the environment).
   */
  analyzeToolExecution(
    tenantIdOrDomain: string,
    environment: string,
    body: AnalyzeToolExecutionRequest,
    options: AnalyzeOptions = {},
  ): Promise<AnalyzeOutcome> {
    return this.#studioCall(() => this.#studio.analyzeToolExecution(tenantIdOrDomain, environment, body, options));
  }

  /**
   * Replays a conversation in an environment: `scenario` is a `ProtectionScenario` or the id of one of
   * `protectionScenarios(tenant, {environment, botId})`. Returns each step's request and outcome; a block stops it.
   * Throws ControlError 404 (tenant, environment, scenario id) or 409 (threat detection not set up).
   */
  replayConversation(
    tenantIdOrDomain: string,
    environment: string,
    scenario: ProtectionScenario | string,
    options: ReplayOptions & { botId?: string } = {},
  ): Promise<ReplayResult> {
    return this.#studioCall(() => {
      let s: ProtectionScenario | undefined;
      if (typeof scenario === 'string') {
        const set = this.protectionScenarios(tenantIdOrDomain, { environment, ...(options.botId ? { botId: options.botId } : {}) });
        s = set.scenarios.find((x) => x.id === scenario);
        if (!s) throw new ControlError(404, 'ScenarioNotFound', `no scenario '${scenario}'; one of ${set.scenarios.map((x) => x.id).join(', ')}`);
      } else s = scenario;
      const { botId: _botId, ...replay } = options;
      return this.#studio.replayConversation(tenantIdOrDomain, environment, s, replay);
    });
  }

  /**
   * Replays every scenario of one agent (`protectionScenarios`) one after the other, for demos and benchmarks, and
   * scores them: a benign scenario should run to its end, an attack should stop at or before its `attackStep`.
   * Throws as `replayConversation` does.
   */
  async replayScenarios(tenantIdOrDomain: string, environment: string, options: ReplayOptions & { botId?: string } = {}): Promise<ScenarioScore> {
    const set = this.protectionScenarios(tenantIdOrDomain, { environment, ...(options.botId ? { botId: options.botId } : {}) });
    const { botId: _botId, ...replay } = options;
    const results: ScenarioScore['results'] = [];
    for (const s of set.scenarios) {
      const r = await this.#studioCall(() => this.#studio.replayConversation(tenantIdOrDomain, environment, s, replay));
      const expected = s.label === 'attack' ? 'block' : 'allow';
      const ok = s.attackStep === null ? !r.blocked : r.stoppedAt !== null && r.stoppedAt <= s.attackStep;
      results.push({
        scenarioId: s.id,
        label: s.label,
        detector: s.detector,
        attackStep: s.attackStep,
        stoppedAt: r.stoppedAt,
        expected,
        ok,
        decidedBy: r.steps.map((x) => x.outcome.by),
        latencyMs: r.steps.map((x) => x.outcome.latencyMs),
      });
    }
    const count = (f: (x: ScenarioScore['results'][number]) => boolean): number => results.filter(f).length;
    return {
      environmentId: set.environmentId,
      botId: set.botId,
      benign: count((x) => x.label === 'benign'),
      benignAllowed: count((x) => x.label === 'benign' && x.ok),
      attacks: count((x) => x.label === 'attack'),
      attacksStopped: count((x) => x.label === 'attack' && x.ok),
      results,
    };
  }

  // ----------------------------------------------------------------------------------------------------------------

  #env(t: Tenant, ref: unknown): Environment {
    if (typeof ref !== 'string' || ref === '') throw new ControlError(400, 'InvalidObject', "the object must name its 'environment'");
    const key = ref.toLowerCase();
    const env = t.environments.find(
      (e) => e.name.toLowerCase() === key || e.dataverse?.uniqueName.toLowerCase() === key || e.displayName.toLowerCase() === key,
    );
    if (!env) throw new ControlError(404, 'EnvironmentNotFound', `no environment '${ref}' in tenant ${t.id}`);
    return env;
  }

  #dv(t: Tenant, ref: unknown): DataverseOrg {
    const env = this.#env(t, ref);
    if (!env.dataverse) throw new ControlError(400, 'NoDataverse', `environment '${env.displayName}' has no Dataverse`);
    return env.dataverse;
  }

  #org(t: Tenant, o: Obj): DataverseOrg {
    const uniqueName = str(o, 'uniqueName') ?? `unq${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    for (const other of this.#d.store.list()) {
      if (other.environments.some((e) => e.dataverse?.uniqueName.toLowerCase() === uniqueName.toLowerCase())) {
        throw new ControlError(409, 'Conflict', `Dataverse uniqueName '${uniqueName}' is already served`);
      }
    }
    return {
      uniqueName,
      domainName: str(o, 'domainName') ?? uniqueName,
      version: str(o, 'version') ?? '9.2.25011.00150',
      instanceState: o.instanceState === 'NotReady' ? 'NotReady' : 'Ready',
      businessUnitId: str(o, 'businessUnitId') ?? randomUUID(),
      appUsers: Array.isArray(o.appUsers) ? (o.appUsers as AppUser[]) : [],
      systemusers: Array.isArray(o.systemusers) ? (o.systemusers as SystemUser[]) : [],
      bots: Array.isArray(o.bots) ? (o.bots as Bot[]) : [],
    };
  }

  #add(t: Tenant, kind: ModelKind, o: Obj): unknown {
    const conflict = (what: string): never => {
      throw new ControlError(409, 'Conflict', `${kind}: ${what} already exists in tenant ${t.id}`);
    };
    switch (kind) {
      case 'users': {
        const id = str(o, 'id') ?? randomUUID();
        if (indexes.users.get(t.users, id)) conflict(id);
        const upn = str(o, 'userPrincipalName');
        if (!upn) throw new ControlError(400, 'InvalidObject', 'users: userPrincipalName is required');
        const user: DirectoryUser = {
          id,
          displayName: str(o, 'displayName') ?? upn.split('@')[0] ?? upn,
          givenName: null,
          surname: null,
          userPrincipalName: upn,
          mail: null,
          jobTitle: null,
          department: null,
          accountEnabled: true,
          userType: upn.includes('#EXT#') ? 'Guest' : 'Member',
          createdDateTime: nowIso(),
          businessPhones: [],
          mobilePhone: null,
          officeLocation: null,
          preferredLanguage: null,
          ...(o as Partial<DirectoryUser>),
        };
        user.id = id;
        t.users.push(user);
        return user;
      }
      case 'groups': {
        const id = str(o, 'id') ?? randomUUID();
        if (indexes.groups.get(t.groups, id)) conflict(id);
        const displayName = str(o, 'displayName');
        if (!displayName) throw new ControlError(400, 'InvalidObject', 'groups: displayName is required');
        const group: DirectoryGroup = {
          id,
          displayName,
          description: null,
          mail: null,
          mailNickname: displayName.toLowerCase().replace(/[^a-z0-9]/g, '') || 'group',
          mailEnabled: false,
          securityEnabled: true,
          groupTypes: [],
          visibility: null,
          createdDateTime: nowIso(),
          ...(o as Partial<DirectoryGroup>),
        };
        group.id = id;
        t.groups.push(group);
        t.memberships[id] ??= [];
        return group;
      }
      case 'memberships': {
        const groupId = str(o, 'groupId');
        const memberId = str(o, 'memberId');
        if (!groupId || !memberId) throw new ControlError(400, 'InvalidObject', 'memberships: groupId and memberId are required');
        if (!indexes.groups.get(t.groups, groupId)) throw new ControlError(404, 'GroupNotFound', `no group '${groupId}'`);
        if (!resolveMember(t, memberId)) throw new ControlError(404, 'MemberNotFound', `no user, group, service principal or device '${memberId}'`);
        const ids = (t.memberships[groupId] ??= []);
        if (ids.includes(memberId)) conflict(`${groupId}/${memberId}`);
        ids.push(memberId);
        return { groupId, memberId };
      }
      case 'servicePrincipals': {
        const id = str(o, 'id') ?? randomUUID();
        if (resolveMember(t, id)) conflict(id);
        const sp: ServicePrincipal = {
          id,
          appId: randomUUID(),
          displayName: 'Enterprise app',
          servicePrincipalType: 'Application',
          ...(o as Partial<ServicePrincipal>),
        };
        sp.id = id;
        t.servicePrincipals.push(sp);
        return sp;
      }
      case 'devices': {
        const id = str(o, 'id') ?? randomUUID();
        if (resolveMember(t, id)) conflict(id);
        const device: Device = {
          id,
          deviceId: randomUUID(),
          displayName: 'DESKTOP-EMULATOR',
          operatingSystem: 'Windows',
          operatingSystemVersion: '10.0.22631.4460',
          accountEnabled: true,
          ...(o as Partial<Device>),
        };
        device.id = id;
        t.devices.push(device);
        return device;
      }
      case 'apps': {
        const appId = str(o, 'appId') ?? randomUUID();
        if (indexes.apps.get(t.apps, appId)) conflict(appId);
        let spId = str(o, 'servicePrincipalObjectId') ?? randomUUID();
        while (spId === appId) spId = randomUUID();
        const app: AppRegistration = {
          appId,
          displayName: 'Application',
          servicePrincipalObjectId: spId,
          secrets: [],
          grantedRoles: {},
          isManagementApp: false,
          ...(o as Partial<AppRegistration>),
        };
        app.appId = appId;
        app.servicePrincipalObjectId = spId;
        t.apps.push(app);
        return app;
      }
      case 'environments': {
        const name = str(o, 'name') ?? randomUUID();
        if (t.environments.some((e) => e.name.toLowerCase() === name.toLowerCase())) conflict(name);
        const displayName = str(o, 'displayName') ?? 'New environment';
        const { dataverse, ...rest } = o;
        const env: Environment = {
          name,
          displayName,
          location: 'unitedstates',
          azureRegion: 'westus',
          environmentSku: 'Sandbox',
          isDefault: false,
          createdTime: nowIso(),
          createdBy: { id: 'SYSTEM', displayName: 'SYSTEM', type: 'NotSpecified' },
          provisioningState: 'Succeeded',
          states: { management: { id: 'NotSpecified' }, runtime: { id: 'Enabled' } },
          ...(rest as Partial<Environment>),
          dataverse: null,
        };
        env.name = name;
        if (isObj(dataverse)) env.dataverse = this.#org(t, dataverse);
        t.environments.push(env);
        return env;
      }
      case 'bots': {
        const org = this.#dv(t, o.environment);
        const botid = str(o, 'botid') ?? randomUUID();
        if (org.bots.some((b) => b.botid === botid)) conflict(botid);
        const name = str(o, 'name') ?? 'New agent';
        const owner = str(o, '_ownerid_value') ?? org.systemusers.find((s) => s.fullname === 'SYSTEM')?.systemuserid ?? org.systemusers[0]?.systemuserid;
        if (!owner) throw new ControlError(400, 'InvalidObject', 'bots: _ownerid_value is required when the environment has no systemusers');
        const now = nowIso();
        const { environment: _env, ...rest } = o;
        void _env;
        const bot: Bot = {
          botid,
          name,
          schemaname: `cr000_${name.replace(/[^A-Za-z0-9]/g, '') || 'agent'}`,
          authenticationmode: 2,
          authenticationtrigger: 0,
          accesscontrolpolicy: 1,
          authorizedsecuritygroupids: null,
          publishedon: now,
          _publishedby_value: owner,
          _ownerid_value: owner,
          owneridtype: 'systemuser',
          statecode: 0,
          statuscode: 1,
          language: 1033,
          runtimeprovider: 0,
          template: 'default-2.1.0',
          createdon: now,
          modifiedon: now,
          configuration: null,
          ...(rest as Partial<Bot>),
        };
        bot.botid = botid;
        org.bots.push(bot);
        return bot;
      }
      case 'systemusers': {
        const org = this.#dv(t, o.environment);
        const systemuserid = str(o, 'systemuserid') ?? randomUUID();
        if (org.systemusers.some((s) => s.systemuserid === systemuserid)) conflict(systemuserid);
        const { environment: _env, ...rest } = o;
        void _env;
        const su: SystemUser = {
          systemuserid,
          fullname: 'New user',
          domainname: '',
          internalemailaddress: null,
          azureactivedirectoryobjectid: null,
          applicationid: null,
          isdisabled: false,
          accessmode: 0,
          ...(rest as Partial<SystemUser>),
        };
        su.systemuserid = systemuserid;
        org.systemusers.push(su);
        return su;
      }
      case 'appUsers': {
        const org = this.#dv(t, o.environment);
        const appId = str(o, 'appId');
        if (!appId) throw new ControlError(400, 'InvalidObject', 'appUsers: appId is required');
        if (org.appUsers.some((a) => a.appId === appId)) conflict(appId);
        const app = indexes.apps.get(t.apps, appId);
        let systemuserid = str(o, 'systemuserid');
        if (!systemuserid) {
          const existing = org.systemusers.find((s) => s.applicationid === appId);
          if (existing) systemuserid = existing.systemuserid;
          else {
            systemuserid = randomUUID();
            org.systemusers.push({
              systemuserid,
              fullname: `# ${app?.displayName ?? appId}`,
              domainname: `${appId}@${t.domains[0] ?? 'emulator.local'}`,
              internalemailaddress: `${appId}@${t.domains[0] ?? 'emulator.local'}`,
              azureactivedirectoryobjectid: app?.servicePrincipalObjectId ?? null,
              applicationid: appId,
              isdisabled: false,
              accessmode: 4,
            });
          }
        }
        const roles = Array.isArray(o.roles) ? (o.roles as unknown[]).filter((r): r is string => typeof r === 'string') : [SYSTEM_ADMINISTRATOR];
        const appUser: AppUser = { appId, systemuserid, roles };
        org.appUsers.push(appUser);
        return appUser;
      }
    }
  }

  #find(t: Tenant, kind: ModelKind, id: string): { object: unknown; detach: () => void } {
    const notFound = (): never => {
      throw new ControlError(404, 'NotFound', `${kind}: no '${id}' in tenant ${t.id}`);
    };
    const inArray = <T>(arr: T[], match: (x: T) => boolean): { object: unknown; detach: () => void } => {
      const i = arr.findIndex(match);
      if (i < 0) return notFound();
      return { object: arr[i], detach: () => void arr.splice(arr.indexOf(arr[i] as T), 1) };
    };
    const lower = id.toLowerCase();
    switch (kind) {
      case 'users':
        return inArray(t.users, (u) => u.id.toLowerCase() === lower);
      case 'groups':
        return inArray(t.groups, (g) => g.id.toLowerCase() === lower);
      case 'servicePrincipals':
        return inArray(t.servicePrincipals, (s) => s.id.toLowerCase() === lower);
      case 'devices':
        return inArray(t.devices, (d) => d.id.toLowerCase() === lower);
      case 'apps':
        return inArray(t.apps, (a) => a.appId.toLowerCase() === lower);
      case 'environments':
        return inArray(t.environments, (e) => e.name.toLowerCase() === lower);
      case 'memberships': {
        const [groupId, memberId] = id.split('/');
        const ids = groupId ? t.memberships[groupId] : undefined;
        if (!ids || !memberId || !ids.includes(memberId)) return notFound();
        return { object: { groupId, memberId }, detach: () => void ids.splice(ids.indexOf(memberId), 1) };
      }
      case 'bots':
      case 'systemusers': {
        for (const env of t.environments) {
          const org = env.dataverse;
          if (!org) continue;
          if (kind === 'bots') {
            const i = org.bots.findIndex((b) => b.botid.toLowerCase() === lower);
            if (i >= 0) return { object: org.bots[i], detach: () => void org.bots.splice(i, 1) };
          } else {
            const i = org.systemusers.findIndex((s) => s.systemuserid.toLowerCase() === lower);
            if (i >= 0) return { object: org.systemusers[i], detach: () => void org.systemusers.splice(i, 1) };
          }
        }
        return notFound();
      }
      case 'appUsers': {
        const slash = id.lastIndexOf('/');
        if (slash < 0) throw new ControlError(400, 'InvalidId', "appUsers ids are '{environment}/{appId}'");
        const org = this.#dv(t, id.slice(0, slash));
        const appId = id.slice(slash + 1).toLowerCase();
        const i = org.appUsers.findIndex((a) => a.appId.toLowerCase() === appId);
        if (i < 0) return notFound();
        return { object: org.appUsers[i], detach: () => void org.appUsers.splice(i, 1) };
      }
    }
  }
}

/** A CopilotStudioError as the ControlError with the same status and code; anything else unchanged. */
function asControlError(e: unknown): unknown {
  return e instanceof CopilotStudioError ? new ControlError(e.status, e.code, e.message) : e;
}

function sendControlError(reply: FastifyReply, e: unknown): FastifyReply {
  if (e instanceof ControlError) return reply.code(e.status).send({ error: { code: e.code, message: e.message } });
  return reply.code(500).send({ error: { code: 'InternalError', message: (e as Error).message } });
}

/**
 * Registers the control API under the `/_emulator` prefix (JSON in and out):
 * - `GET /tenants` → `[{id, displayName, domains}]`; `POST /tenants` body a Tenant or `{"generate": GenerateOptions}` → 201;
 * - `GET /tenants/{tid}` → the Tenant; `DELETE /tenants/{tid}`; `GET /tenants/{tid}/ground-truth[?appId=&now=]`;
 * - `POST /tenants/{tid}/{kind}` body object → 201 stored object; `PATCH /tenants/{tid}/{kind}/{id}` body patch;
 *   `DELETE /tenants/{tid}/{kind}/{id}` → 204 (ids may contain `/`: memberships, appUsers);
 * - `GET|PUT|DELETE /faults` (PUT body FaultConfig); `GET /requests[?service=]`, `DELETE /requests`;
 * - `GET|PUT|DELETE /foreign-links` (PUT body ForeignLinkRule[]) → `{rules, counters}`;
 * - `GET /throttling` → ThrottlingState; `PUT /throttling` body ThrottlingConfig `{enabled, limits?, scale?}` → the
 *   state; `DELETE /throttling/counters` → 204;
 * - `PUT /token-lifetime` body `{"seconds": n}`; `POST /tokens` body MintTokenRequest → `{access_token, expires_in}`;
 * - `GET /endpoints` → the endpoints profile; `GET /ca.pem`;
 * - `PUT /consent-behavior` body `{tenant, behavior}`; `GET /consent-behavior/{tenant}` → `{behavior}`;
 *   `PUT /signed-in-admin` body `{tenant}` (null signs out); `POST /consent` body `{tenant, appId}` → the service
 *   principal; `POST /revoke-roles` body `{tenant, appId, resource?, roles?}` → `{grantedRoles}`;
 * - `GET /device-codes`; `POST /device-codes/{userCode}/approve` body `{upn}`; `POST /device-codes/{userCode}/decline`;
 *   `POST /device-codes/{userCode}/expire`; `PUT /device-codes/auto-approve` body `{tenant, upn}` (null turns it off);
 *   `PUT /device-codes/settings` body `{intervalSeconds?, expiresInSeconds?}`; `DELETE /sign-in-state`;
 * - `PUT /environment-flags` body `{tenant, environment, refuseAddAppUser?, refuseRoleAssignment?}` → the environment;
 * - Copilot Studio threat detection (copilotstudio.ts): `POST /copilot-studio/threat-detection-apps` body
 *   `{tenant, baseUrl, displayName?}` → 201 `{appId, federatedCredential}`; `PUT|GET|DELETE
 *   /copilot-studio/threat-detection/{tid}/{env}` (PUT body `{appId, baseUrl, errorBehavior?, ca?}`, validates first) →
 *   `{environmentId, settings, lastValidation, saved?}`; `GET /copilot-studio/scenarios/{tid}/{env}[?botId=]` →
 *   ProtectionScenarioSet; `POST /copilot-studio/replay` body `{tenant, environment, scenario, toolOutputsField?, botId?}`
 *   → ReplayResult; `POST /copilot-studio/replay-all` body `{tenant, environment, botId?}` → ScenarioScore;
 * - `POST /delta-tokens/expire` body `{tenant}` → 204 (Graph delta tokens issued so far answer 410);
 * - `POST /requests/leaks` body `{values?: string[]}` → `LogLeak[]` (empty = no credential in logged paths);
 * - audit feed: `GET /clock`, `PUT /clock` body `{now: ISO | null}`, `POST /clock/advance` body `{seconds}`;
 *   `GET|PUT /feeds/{tid}/settings` (PUT body FeedSettingsPatch); `GET /feeds/{tid}/subscriptions`,
 *   `PUT /feeds/{tid}/subscriptions/{contentType}` body `{enabled?: boolean}`; `POST /feeds/{tid}/records` body
 *   `{contentType, records, contentCreated?}` → 201 AddedContent[]; `GET /feeds/{tid}/ground-truth?from=&to=[&basis=
 *   &includeIds=false]`; `GET /feeds/{tid}/powerbi-ground-truth?from=&to=`; `GET /powerbi-settings/{tid}`,
 *   `PUT /powerbi-settings` body `{tenant, servicePrincipalsCanUseReadOnlyAdminApis?, …}`; `GET /feed-requests` →
 *   PublisherStats, `DELETE /feed-requests`; `POST /powerbi-workspaces/{tid}/{workspaceId}/changes` body
 *   PowerBiWorkspaceChange → the workspace.
 */
export function registerControl(app: FastifyInstance, control: EmulatorControl, extras: { endpoints: () => unknown; caPem: () => string }): void {
  const wrap =
    <R>(fn: (req: R) => unknown | Promise<unknown>, status = 200) =>
    async (req: R, reply: FastifyReply): Promise<FastifyReply> => {
      try {
        const out = await fn(req);
        if (out === undefined) return reply.code(204).send();
        return reply.code(status).send(out);
      } catch (e) {
        return sendControlError(reply, e);
      }
    };
  const kindOf = (k: string): ModelKind => {
    if (!MODEL_KINDS.includes(k as ModelKind)) throw new ControlError(400, 'UnknownKind', `unknown kind '${k}'; one of ${MODEL_KINDS.join(', ')}`);
    return k as ModelKind;
  };

  app.get(
    '/tenants',
    wrap(() => control.tenants().map((t) => ({ id: t.id, displayName: t.displayName, domains: t.domains }))),
  );
  app.post<{ Body: unknown }>(
    '/tenants',
    { bodyLimit: 512 * 1024 * 1024 },
    wrap((req: { body: unknown }) => {
      const body = req.body;
      if (!isObj(body)) throw new ControlError(400, 'InvalidObject', 'body must be a Tenant or {"generate": options}');
      const t = isObj(body.generate) ? control.generateTenant(body.generate as unknown as GenerateOptions) : control.addTenant(body as unknown as Tenant);
      return { id: t.id, displayName: t.displayName, domains: t.domains, connectorAppId: t.connectorAppId ?? null };
    }, 201),
  );
  app.get<{ Params: { tid: string } }>(
    '/tenants/:tid',
    wrap((req: { params: { tid: string } }) => control.tenant(req.params.tid)),
  );
  app.delete<{ Params: { tid: string } }>(
    '/tenants/:tid',
    wrap((req: { params: { tid: string } }) => void control.removeTenant(req.params.tid)),
  );
  app.get<{ Params: { tid: string }; Querystring: { appId?: string; now?: string } }>(
    '/tenants/:tid/ground-truth',
    wrap((req: { params: { tid: string }; query: { appId?: string; now?: string } }) =>
      control.groundTruth(req.params.tid, { ...(req.query.appId ? { appId: req.query.appId } : {}), ...(req.query.now ? { now: req.query.now } : {}) }),
    ),
  );
  app.post<{ Params: { tid: string; kind: string }; Body: unknown }>(
    '/tenants/:tid/:kind',
    wrap((req: { params: { tid: string; kind: string }; body: unknown }) => control.add(req.params.tid, kindOf(req.params.kind), req.body), 201),
  );
  app.patch<{ Params: { tid: string; kind: string; '*': string }; Body: unknown }>(
    '/tenants/:tid/:kind/*',
    wrap((req: { params: { tid: string; kind: string; '*': string }; body: unknown }) =>
      control.update(req.params.tid, kindOf(req.params.kind), decodeURIComponent(req.params['*']), req.body),
    ),
  );
  app.delete<{ Params: { tid: string; kind: string; '*': string } }>(
    '/tenants/:tid/:kind/*',
    wrap(
      (req: { params: { tid: string; kind: string; '*': string } }) =>
        void control.remove(req.params.tid, kindOf(req.params.kind), decodeURIComponent(req.params['*'])),
    ),
  );

  app.get(
    '/faults',
    wrap(() => control.faults()),
  );
  app.put<{ Body: unknown }>(
    '/faults',
    wrap((req: { body: unknown }) => {
      if (!isObj(req.body)) throw new ControlError(400, 'InvalidObject', 'body must be a FaultConfig');
      control.setFaults(req.body as unknown as FaultConfig);
      return control.faults();
    }),
  );
  app.delete(
    '/faults',
    wrap(() => void control.clearFaults()),
  );

  app.get(
    '/throttling',
    wrap(() => control.throttling()),
  );
  app.put<{ Body: unknown }>(
    '/throttling',
    wrap((req: { body: unknown }) => {
      if (!isObj(req.body) || typeof req.body.enabled !== 'boolean')
        throw new ControlError(400, 'InvalidObject', 'body must be a ThrottlingConfig {enabled, limits?, scale?}');
      return control.setThrottling(req.body as unknown as ThrottlingConfig);
    }),
  );
  app.delete(
    '/throttling/counters',
    wrap(() => void control.resetThrottlingCounters()),
  );

  app.get(
    '/foreign-links',
    wrap(() => control.foreignLinks()),
  );
  app.put<{ Body: unknown }>(
    '/foreign-links',
    wrap((req: { body: unknown }) => {
      if (!Array.isArray(req.body)) throw new ControlError(400, 'InvalidObject', 'body must be an array of ForeignLinkRule');
      control.setForeignLinks(req.body as ForeignLinkRule[]);
      return control.foreignLinks();
    }),
  );
  app.delete(
    '/foreign-links',
    wrap(() => void control.clearForeignLinks()),
  );

  app.get<{ Querystring: { service?: string } }>(
    '/requests',
    wrap((req: { query: { service?: string } }) => control.requests(req.query.service ? { service: req.query.service as ServiceName } : {})),
  );
  app.delete(
    '/requests',
    wrap(() => void control.resetLog()),
  );

  app.put<{ Body: unknown }>(
    '/token-lifetime',
    wrap((req: { body: unknown }) => {
      const seconds = isObj(req.body) ? req.body.seconds : undefined;
      control.setTokenLifetime(typeof seconds === 'number' ? seconds : NaN);
      return { seconds };
    }),
  );
  app.post<{ Body: unknown }>(
    '/tokens',
    wrap(async (req: { body: unknown }) => {
      if (!isObj(req.body) || typeof req.body.tenantId !== 'string' || typeof req.body.resource !== 'string') {
        throw new ControlError(400, 'InvalidObject', 'body must have tenantId and resource');
      }
      return control.mintToken(req.body as unknown as MintTokenRequest);
    }),
  );

  const body = (req: { body: unknown }): Obj => {
    if (!isObj(req.body)) throw new ControlError(400, 'InvalidObject', 'body must be a JSON object');
    return req.body;
  };
  const need = (o: Obj, k: string): string => {
    const v = str(o, k);
    if (!v) throw new ControlError(400, 'InvalidObject', `body must have a string '${k}'`);
    return v;
  };
  const strings = (v: unknown, k: string): string[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ControlError(400, 'InvalidObject', `'${k}' must be an array of strings`);
    return v as string[];
  };

  app.put<{ Body: unknown }>(
    '/consent-behavior',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      control.setConsentBehavior(need(o, 'tenant'), need(o, 'behavior') as ConsentBehavior);
      return { behavior: control.consentBehavior(need(o, 'tenant')) };
    }),
  );
  app.get<{ Params: { tid: string } }>(
    '/consent-behavior/:tid',
    wrap((req: { params: { tid: string } }) => ({ behavior: control.consentBehavior(req.params.tid) })),
  );
  app.put<{ Body: unknown }>(
    '/signed-in-admin',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      control.setSignedInAdminTenant(o.tenant === null ? null : need(o, 'tenant'));
      return { tenant: o.tenant === null ? null : control.tenant(need(o, 'tenant')).id };
    }),
  );
  app.post<{ Body: unknown }>(
    '/consent',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      return control.grantAdminConsent(need(o, 'tenant'), need(o, 'appId'));
    }),
  );
  app.post<{ Body: unknown }>(
    '/revoke-roles',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      const roles = strings(o.roles, 'roles');
      const resource = str(o, 'resource');
      return {
        grantedRoles: control.revokeServicePrincipalRoles(need(o, 'tenant'), need(o, 'appId'), {
          ...(resource ? { resource } : {}),
          ...(roles ? { roles } : {}),
        }),
      };
    }),
  );

  app.get(
    '/device-codes',
    wrap(() => control.deviceCodes()),
  );
  app.put<{ Body: unknown }>(
    '/device-codes/settings',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      const pick = (k: string): number | undefined => (o[k] === undefined ? undefined : typeof o[k] === 'number' ? (o[k] as number) : NaN);
      const intervalSeconds = pick('intervalSeconds');
      const expiresInSeconds = pick('expiresInSeconds');
      return control.setDeviceCodeSettings({
        ...(intervalSeconds !== undefined ? { intervalSeconds } : {}),
        ...(expiresInSeconds !== undefined ? { expiresInSeconds } : {}),
      });
    }),
  );
  app.put<{ Body: unknown }>(
    '/device-codes/auto-approve',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      control.setDeviceCodeAutoApprove(need(o, 'tenant'), o.upn === null ? null : need(o, 'upn'));
      return { tenant: control.tenant(need(o, 'tenant')).id, upn: o.upn ?? null };
    }),
  );
  app.post<{ Params: { code: string }; Body: unknown }>(
    '/device-codes/:code/approve',
    wrap((req: { params: { code: string }; body: unknown }) => control.approveDeviceCode(req.params.code, need(body(req), 'upn'))),
  );
  app.post<{ Params: { code: string } }>(
    '/device-codes/:code/decline',
    wrap((req: { params: { code: string } }) => control.declineDeviceCode(req.params.code)),
  );
  app.post<{ Params: { code: string } }>(
    '/device-codes/:code/expire',
    wrap((req: { params: { code: string } }) => control.expireDeviceCode(req.params.code)),
  );
  app.put<{ Body: unknown }>(
    '/browser-user',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      control.setBrowserUser(need(o, 'tenant'), o.upn === null ? null : need(o, 'upn'));
      return { tenant: control.tenant(need(o, 'tenant')).id, upn: o.upn ?? null };
    }),
  );
  app.delete(
    '/sign-in-state',
    wrap(() => void control.resetSignInState()),
  );

  app.put<{ Body: unknown }>(
    '/environment-flags',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      const flags: EnvironmentFlags = {};
      if (o.refuseAddAppUser !== undefined) flags.refuseAddAppUser = o.refuseAddAppUser as boolean;
      if (o.refuseRoleAssignment !== undefined) flags.refuseRoleAssignment = o.refuseRoleAssignment as boolean;
      return control.setEnvironmentFlags(need(o, 'tenant'), need(o, 'environment'), flags);
    }),
  );

  // Copilot Studio external threat detection (copilotstudio.ts, protectionscenarios.ts).
  app.post<{ Body: unknown }>(
    '/copilot-studio/threat-detection-apps',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      const displayName = str(o, 'displayName');
      return control.registerThreatDetectionApp(need(o, 'tenant'), { baseUrl: need(o, 'baseUrl'), ...(displayName ? { displayName } : {}) });
    }, 201),
  );
  app.put<{ Params: { tid: string; env: string }; Body: unknown }>(
    '/copilot-studio/threat-detection/:tid/:env',
    wrap((req: { params: { tid: string; env: string }; body: unknown }) => {
      const o = body(req);
      const ca = str(o, 'ca');
      return control.setThreatDetection(req.params.tid, req.params.env, {
        appId: need(o, 'appId'),
        baseUrl: need(o, 'baseUrl'),
        errorBehavior: (str(o, 'errorBehavior') ?? 'allow') as 'allow' | 'block',
        ...(ca ? { ca } : {}),
      });
    }),
  );
  app.get<{ Params: { tid: string; env: string } }>(
    '/copilot-studio/threat-detection/:tid/:env',
    wrap((req: { params: { tid: string; env: string } }) => control.threatDetection(req.params.tid, req.params.env)),
  );
  app.delete<{ Params: { tid: string; env: string } }>(
    '/copilot-studio/threat-detection/:tid/:env',
    wrap((req: { params: { tid: string; env: string } }) => void control.clearThreatDetection(req.params.tid, req.params.env)),
  );
  app.get<{ Params: { tid: string; env: string }; Querystring: { botId?: string } }>(
    '/copilot-studio/scenarios/:tid/:env',
    wrap((req: { params: { tid: string; env: string }; query: { botId?: string } }) =>
      control.protectionScenarios(req.params.tid, { environment: req.params.env, ...(req.query.botId ? { botId: req.query.botId } : {}) }),
    ),
  );
  app.post<{ Body: unknown }>(
    '/copilot-studio/replay-all',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      const botId = str(o, 'botId');
      return control.replayScenarios(need(o, 'tenant'), need(o, 'environment'), botId ? { botId } : {});
    }),
  );
  app.post<{ Body: unknown }>(
    '/copilot-studio/replay',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      const scenario = isObj(o.scenario) ? (o.scenario as unknown as ProtectionScenario) : need(o, 'scenario');
      const field = str(o, 'toolOutputsField');
      if (field !== undefined && field !== 'previousToolsOutputs' && field !== 'previousToolOutputs')
        throw new ControlError(400, 'InvalidObject', "toolOutputsField must be 'previousToolsOutputs' or 'previousToolOutputs'");
      const botId = str(o, 'botId');
      return control.replayConversation(need(o, 'tenant'), need(o, 'environment'), scenario, {
        ...(field ? { toolOutputsField: field } : {}),
        ...(botId ? { botId } : {}),
      });
    }),
  );

  app.post<{ Body: unknown }>(
    '/delta-tokens/expire',
    wrap((req: { body: unknown }) => void control.expireDeltaTokens(need(body(req), 'tenant'))),
  );

  app.post<{ Body: unknown }>(
    '/requests/leaks',
    wrap((req: { body: unknown }) => {
      const o = isObj(req.body) ? req.body : {};
      return control.requestLogLeaks(strings(o.values, 'values') ?? []);
    }),
  );

  app.get(
    '/clock',
    wrap(() => control.clock()),
  );
  app.put<{ Body: unknown }>(
    '/clock',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      if (o.now !== null && typeof o.now !== 'string') throw new ControlError(400, 'InvalidObject', 'body must be {"now": ISO string | null}');
      return control.setClock(o.now as string | null);
    }),
  );
  app.post<{ Body: unknown }>(
    '/clock/advance',
    wrap((req: { body: unknown }) => {
      const o = body(req);
      return control.advanceClock(typeof o.seconds === 'number' ? o.seconds : NaN);
    }),
  );
  app.get<{ Params: { tid: string } }>(
    '/feeds/:tid/settings',
    wrap((req: { params: { tid: string } }) => control.feedSettings(req.params.tid)),
  );
  app.put<{ Params: { tid: string }; Body: unknown }>(
    '/feeds/:tid/settings',
    wrap((req: { params: { tid: string }; body: unknown }) => control.configureFeed(req.params.tid, body(req) as FeedSettingsPatch)),
  );
  app.get<{ Params: { tid: string } }>(
    '/feeds/:tid/subscriptions',
    wrap((req: { params: { tid: string } }) => control.subscriptions(req.params.tid)),
  );
  app.put<{ Params: { tid: string; ct: string }; Body: unknown }>(
    '/feeds/:tid/subscriptions/:ct',
    wrap((req: { params: { tid: string; ct: string }; body: unknown }) => {
      const o = isObj(req.body) ? req.body : {};
      if (o.enabled === false) return void control.stopSubscription(req.params.tid, req.params.ct);
      return control.startSubscription(req.params.tid, req.params.ct);
    }),
  );
  app.post<{ Params: { tid: string }; Body: unknown }>(
    '/feeds/:tid/records',
    wrap((req: { params: { tid: string }; body: unknown }) => {
      const o = body(req);
      if (!Array.isArray(o.records)) throw new ControlError(400, 'InvalidObject', 'body must have records: object[]');
      const contentCreated = str(o, 'contentCreated');
      return control.addAuditRecords(req.params.tid, need(o, 'contentType'), o.records as Record<string, unknown>[], contentCreated ? { contentCreated } : {});
    }, 201),
  );
  app.get<{ Params: { tid: string }; Querystring: Record<string, string | undefined> }>(
    '/feeds/:tid/ground-truth',
    wrap((req: { params: { tid: string }; query: Record<string, string | undefined> }) => {
      const { from, to, basis, includeIds } = req.query;
      if (!from || !to) throw new ControlError(400, 'InvalidWindow', 'from and to are required');
      if (basis !== undefined && basis !== 'contentCreated' && basis !== 'creationTime')
        throw new ControlError(400, 'InvalidWindow', "basis must be 'contentCreated' or 'creationTime'");
      return control.auditGroundTruth(req.params.tid, { from, to, ...(basis ? { basis } : {}), includeIds: includeIds !== 'false' });
    }),
  );
  app.get<{ Params: { tid: string }; Querystring: Record<string, string | undefined> }>(
    '/feeds/:tid/powerbi-ground-truth',
    wrap((req: { params: { tid: string }; query: Record<string, string | undefined> }) => {
      if (!req.query.from || !req.query.to) throw new ControlError(400, 'InvalidWindow', 'from and to are required');
      return control.powerBiGroundTruth(req.params.tid, { from: req.query.from, to: req.query.to });
    }),
  );
  app.get<{ Params: { tid: string } }>(
    '/powerbi-settings/:tid',
    wrap((req: { params: { tid: string } }) => control.powerBiSettings(req.params.tid)),
  );
  app.put<{ Body: unknown }>(
    '/powerbi-settings',
    wrap((req: { body: unknown }) => {
      const { tenant, ...patch } = body(req);
      if (typeof tenant !== 'string') throw new ControlError(400, 'InvalidObject', "body must have a string 'tenant'");
      return control.setPowerBiSettings(tenant, patch as Partial<PowerBiSettings>);
    }),
  );
  app.post<{ Params: { tid: string; wid: string }; Body: unknown }>(
    '/powerbi-workspaces/:tid/:wid/changes',
    wrap((req: { params: { tid: string; wid: string }; body: unknown }) =>
      control.changePowerBiWorkspace(req.params.tid, req.params.wid, body(req) as unknown as PowerBiWorkspaceChange),
    ),
  );
  app.get(
    '/feed-requests',
    wrap(() => control.publisherStats()),
  );
  app.delete(
    '/feed-requests',
    wrap(() => void control.resetPublisherStats()),
  );

  app.get(
    '/endpoints',
    wrap(() => extras.endpoints()),
  );
  app.get('/ca.pem', async (_req, reply) => reply.type('application/x-pem-file').send(extras.caPem()));
}
