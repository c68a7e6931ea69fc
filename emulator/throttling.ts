/**
 * The documented upstream limits, enforced (issue 18): token buckets keyed by the scope each limit has, so tests and
 * benchmarks see real throttling (429 + `Retry-After`, or the Management Activity API's AF429 as HTTP 403) instead of
 * random faults. Off unless turned on (`startEmulator({ throttling })`, `EmulatorControl.setThrottling`).
 *
 * Figures and scopes (defaults of `DEFAULT_LIMITS`; every one can be overridden, `scale` multiplies capacities):
 * - Graph, any request: 130,000 requests / 10 s per app across all tenants — microsoft-graph-docs-contrib
 *   `concepts/throttling-limits.md` (2025 text; the older snapshot said 2,000 requests/s).
 * - Graph identity & access (users, groups, members, delta, applications, servicePrincipals, directory objects…): token
 *   bucket of resource units (RU) per app + tenant, 3,500 / 5,000 / 8,000 RU per 10 s for tenants of S (< 50 users),
 *   M (50–500) and L (> 500 users); 150,000 RU / 20 s per app; writes 3,000 / 2 min 30 s per app + tenant, 70,000 / 5 min
 *   per app, 18,000 / 5 min per tenant. Costs from the same page's table: GET `users` 2, `applications` 2,
 *   `groups/{id}/members` 3, `groups/{id}/transitiveMembers` 5, `servicePrincipals/{id}/appRoleAssignments` 2,
 *   `oauth2PermissionGrants` 2, `subscribedSkus` 3, `contracts` 3, POST `directoryObjects/getByIds` 3, any other
 *   identity path 1 (write cost 1 for POST/PATCH/PUT/DELETE not listed); `$select` −1, `$expand` +1, `$top` < 20 −1,
 *   never below 1. UNCONFIRMED: whether `users/delta` and `groups/delta` count as the `users`/`groups` collections
 *   (the table lists neither; they are charged 1 here, as "not listed"). Headers: `x-ms-resource-unit` on every
 *   identity answer, `x-ms-throttle-limit-percentage` above 0.8 of the app + tenant bucket, and on 429
 *   `x-ms-throttle-scope` (`Tenant_Application/ReadWrite/{appId}/{tenantId}`) and `x-ms-throttle-information`
 *   (`ResourceUnitLimitExceeded` / `WriteLimitExceeded`).
 * - Graph Teams (`users/{id}/teamwork/installedApps`, `teams/…`, `appCatalogs/…`, `chats`): GET 300 / 10 s per app per
 *   tenant and 3,000 / 10 s per app across tenants — `concepts/throttling-teams-graphsvc.md` (generated table "GET |
 *   600 per 10 s | 300 per 10 s | 6000 per 10 s | 3000 per 10 s": two configurations in one row; the stricter one is
 *   the default here). The older `teams-throttling-limits.md` said GET installedApps 60 rps per app per tenant and
 *   600 rps across tenants. Non-GET Teams requests are not limited here.
 * - Graph `$batch`: "Requests in a batch are evaluated individually against throttling limits and if any request
 *   exceeds the limits, it fails with a status of 429" (`concepts/throttling.md`, Throttling and batching): each inner
 *   request is charged to its own service's buckets; an inner request over a limit gets an inner 429 with
 *   `Retry-After` while the outer `$batch` answers 200 (the outer POST itself is charged only to the global limit).
 * - Dataverse: 6,000 requests per user in a 5-minute sliding window, and 52 concurrent requests per user, per web
 *   server — powerapps-docs `developer/data-platform/api-limits.md`; 429 + `Retry-After` (seconds), bodies
 *   `0x80072322` "Number of requests exceeded the limit of 6000 over time window of 300 seconds." and `0x80072326`
 *   "Number of concurrent requests exceeded the limit of 52.". Keyed by environment (the Dataverse org, standing for
 *   the web server) + the token's `oid`. The 1,200 s execution-time limit is not modelled; the sliding window is
 *   approximated by a token bucket (burst of 6,000, refill 20/s).
 * - Office 365 Management Activity API: "All organizations are initially allocated a baseline of 2,000 requests per
 *   minute" per tenant (office-365-management-api `office-365-management-activity-api-reference.md`, API throttling);
 *   over it: HTTP 403 `{"error":{"code":"AF429","message":"Too many requests. Method={m}, PublisherId={p}"}}` and no
 *   `Retry-After` (the troubleshooting guide's observed answer; the reference's error table names AF429).
 * - Power BI admin, per tenant (learn.microsoft.com/rest/api/power-bi/admin, each operation's Limitations):
 *   `workspaces/getInfo` 500 / h, `workspaces/scanStatus` 10,000 / h, `workspaces/scanResult` 500 / h,
 *   `workspaces/modified` 30 / h, `widelySharedArtifacts/*` 200 / h, `admin/groups` 50 / h and 15 / min,
 *   `activityevents` 200 / h (UNCONFIRMED: no first-party figure found). 429 + `Retry-After`.
 * - BAP / Power Apps / Flow admin APIs: no published figures. Chosen, conservatively: 300 requests / 60 s per app per
 *   tenant (UNCONFIRMED; configurable), 429 + `Retry-After` as well-behaved clients expect
 *   (terraform-provider-power-platform retries 429 honouring `Retry-After`).
 *
 * Buckets start full and refill continuously (capacity / window per second). A request is admitted only when every
 * bucket it is charged to holds its cost; a throttled request consumes nothing ("Only the requests exceeding the
 * limits will be throttled"). `Retry-After` is the whole seconds until the emptiest bucket holds the cost (≥ 1).
 */
import type { FastifyRequest } from 'fastify';
import { bearerToken, type ServiceName } from './common.ts';
import { faultBody } from './faults.ts';
import { af429Body } from './manage.ts';

/** A rate limit: `capacity` units per `windowSeconds` (token bucket: burst of `capacity`, refill capacity/window per s). */
interface RateLimit {
  capacity: number;
  windowSeconds: number;
}

/** A Graph identity limit that depends on the tenant's size: S < 50 users, M 50–500, L > 500. */
interface TieredRateLimit {
  small: number;
  medium: number;
  large: number;
  windowSeconds: number;
}

/** Every enforced limit (see the module docstring for figures and sources). */
export interface ThrottlingLimits {
  /** Graph, any request, per app across tenants. */
  graphGlobalApp: RateLimit;
  /** Graph identity & access resource units per app + tenant, by tenant size. */
  graphIdentityAppTenant: TieredRateLimit;
  /** Graph identity & access resource units per app across tenants. */
  graphIdentityApp: RateLimit;
  /** Graph identity & access writes per app + tenant. */
  graphIdentityWriteAppTenant: RateLimit;
  /** Graph identity & access writes per app across tenants. */
  graphIdentityWriteApp: RateLimit;
  /** Graph identity & access writes per tenant, all apps. */
  graphIdentityWriteTenant: RateLimit;
  /** Graph Teams GET per app per tenant. */
  teamsGetAppTenant: RateLimit;
  /** Graph Teams GET per app across tenants. */
  teamsGetApp: RateLimit;
  /** Dataverse requests per user per environment. */
  dataverseUser: RateLimit;
  /** Dataverse concurrent requests per user per environment. */
  dataverseConcurrency: number;
  /** Management Activity API requests per tenant. */
  managementActivityTenant: RateLimit;
  /** Power BI `admin/activityevents` per tenant. */
  powerBiActivityEvents: RateLimit;
  /** Power BI `admin/workspaces/modified` per tenant. */
  powerBiModifiedWorkspaces: RateLimit;
  /** Power BI `admin/workspaces/getInfo` per tenant. */
  powerBiGetInfo: RateLimit;
  /** Power BI `admin/workspaces/scanStatus/{id}` per tenant. */
  powerBiScanStatus: RateLimit;
  /** Power BI `admin/workspaces/scanResult/{id}` per tenant. */
  powerBiScanResult: RateLimit;
  /** Power BI `admin/widelySharedArtifacts/*` per tenant. */
  powerBiWidelyShared: RateLimit;
  /** Power BI `admin/groups` per tenant, hourly. */
  powerBiAdminGroupsHour: RateLimit;
  /** Power BI `admin/groups` per tenant, per minute. */
  powerBiAdminGroupsMinute: RateLimit;
  /** BAP, Power Apps and Flow admin APIs per app per tenant (undocumented; chosen). */
  powerPlatformAppTenant: RateLimit;
}

/** Name of one limit. */
export type LimitName = keyof ThrottlingLimits;

const HOUR = 3600;

/** The documented figures (module docstring). */
export const DEFAULT_LIMITS: Readonly<ThrottlingLimits> = Object.freeze({
  graphGlobalApp: { capacity: 130_000, windowSeconds: 10 },
  graphIdentityAppTenant: { small: 3_500, medium: 5_000, large: 8_000, windowSeconds: 10 },
  graphIdentityApp: { capacity: 150_000, windowSeconds: 20 },
  graphIdentityWriteAppTenant: { capacity: 3_000, windowSeconds: 150 },
  graphIdentityWriteApp: { capacity: 70_000, windowSeconds: 300 },
  graphIdentityWriteTenant: { capacity: 18_000, windowSeconds: 300 },
  teamsGetAppTenant: { capacity: 300, windowSeconds: 10 },
  teamsGetApp: { capacity: 3_000, windowSeconds: 10 },
  dataverseUser: { capacity: 6_000, windowSeconds: 300 },
  dataverseConcurrency: 52,
  managementActivityTenant: { capacity: 2_000, windowSeconds: 60 },
  powerBiActivityEvents: { capacity: 200, windowSeconds: HOUR },
  powerBiModifiedWorkspaces: { capacity: 30, windowSeconds: HOUR },
  powerBiGetInfo: { capacity: 500, windowSeconds: HOUR },
  powerBiScanStatus: { capacity: 10_000, windowSeconds: HOUR },
  powerBiScanResult: { capacity: 500, windowSeconds: HOUR },
  powerBiWidelyShared: { capacity: 200, windowSeconds: HOUR },
  powerBiAdminGroupsHour: { capacity: 50, windowSeconds: HOUR },
  powerBiAdminGroupsMinute: { capacity: 15, windowSeconds: 60 },
  powerPlatformAppTenant: { capacity: 300, windowSeconds: 60 },
});

/** Throttling settings (`setThrottling`). */
export interface ThrottlingConfig {
  enabled: boolean;
  /** Per-limit overrides of `DEFAULT_LIMITS` (a whole limit object each). */
  limits?: Partial<ThrottlingLimits>;
  /**
   * Multiplies every rate capacity (and so its refill rate; windows unchanged; each capacity stays ≥ 1): 0.01 makes a
   * small tenant's identity bucket 35 RU per 10 s. Concurrency is not scaled. @default 1
   */
  scale?: number;
}

/** Requests evaluated against a limit and how many it throttled. */
export interface ThrottleCount {
  requests: number;
  throttled: number;
}

/** Counters of one bucket. */
export interface BucketCounters extends ThrottleCount {
  limit: LimitName;
  /** The scope: `{appId}/{tenantId}`, `{appId}`, `{tenantId}`, `{environment}/{userOid}`. */
  key: string;
}

/** The state `EmulatorControl.throttling()` answers. */
export interface ThrottlingState {
  enabled: boolean;
  scale: number;
  /** Effective limits (defaults merged with overrides, before `scale`). */
  limits: ThrottlingLimits;
  /** Every request evaluated (outer and `$batch` inner), and those throttled. */
  totals: ThrottleCount;
  byService: Partial<Record<ServiceName, ThrottleCount>>;
  byLimit: Partial<Record<LimitName, ThrottleCount>>;
  buckets: BucketCounters[];
}

/** What the limiter needs to know about a request. */
export interface ThrottleRequest {
  service: ServiceName;
  method: string;
  /** Path with query, as received (`/graph/v1.0/users?$select=id`). */
  url: string;
  /** Claims of the bearer token (unverified), or null when there is none. */
  claims: TokenIdentity | null;
}

/** The token claims a limit is keyed by. */
export interface TokenIdentity {
  tid: string;
  /** Client application id (`appid`, else `azp`). */
  appId: string;
  oid: string;
}

/** A throttled request: the limit that refused it and the seconds to wait (null: the service sends no Retry-After). */
export interface ThrottleRefusal {
  limit: LimitName;
  key: string;
  retryAfterSeconds: number | null;
  /** Extra response headers (Graph's `x-ms-throttle-*`). */
  headers: Record<string, string>;
  /** The limit's capacity (after scale), for error messages. */
  capacity: number;
  windowSeconds: number;
}

/** An admitted request: headers to add and, for concurrency limits, the release to call when the answer is done. */
export interface ThrottleAdmission {
  headers: Record<string, string>;
  release?: () => void;
}

interface Charge {
  limit: LimitName;
  key: string;
  cost: number;
  capacity: number;
  windowSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Graph path roots served by the identity & access service. */
const IDENTITY_ROOTS = new Set([
  'users',
  'groups',
  'applications',
  'servicePrincipals',
  'directoryObjects',
  'devices',
  'organization',
  'domains',
  'oauth2PermissionGrants',
  'directoryRoles',
  'directoryRoleTemplates',
  'subscribedSkus',
  'contracts',
  'me',
  'getObjectsById',
  'isMemberOf',
  'invitations',
  'identity',
]);
/** Path segments that make a Graph request a Teams one. */
const TEAMS_SEGMENTS = new Set(['teamwork', 'installedApps', 'joinedTeams', 'chats', 'teams', 'appCatalogs']);

/** Base RU costs of the identity table (throttling-limits.md); `me/…` rows also apply to `users/{id}/…`. */
const RU_COSTS: readonly { method: string; path: RegExp; cost: number; write: number }[] = [
  { method: 'GET', path: /^applications$/, cost: 2, write: 0 },
  { method: 'GET', path: /^applications\/[^/]+\/extensionProperties$/, cost: 2, write: 0 },
  { method: 'GET', path: /^contracts$/, cost: 3, write: 0 },
  { method: 'POST', path: /^directoryObjects\/getByIds$/, cost: 3, write: 0 },
  { method: 'GET', path: /^domains\/[^/]+\/domainNameReferences$/, cost: 4, write: 0 },
  { method: 'POST', path: /^getObjectsById$/, cost: 3, write: 0 },
  { method: 'GET', path: /^groups\/[^/]+\/members$/, cost: 3, write: 0 },
  { method: 'GET', path: /^groups\/[^/]+\/transitiveMembers$/, cost: 5, write: 0 },
  { method: 'POST', path: /^isMemberOf$/, cost: 4, write: 0 },
  { method: 'POST', path: /^(me|users\/[^/]+)\/(checkMemberGroups|checkMemberObjects)$/, cost: 4, write: 0 },
  { method: 'POST', path: /^(me|users\/[^/]+)\/(getMemberGroups|getMemberObjects)$/, cost: 2, write: 0 },
  { method: 'GET', path: /^(me|users\/[^/]+)\/(licenseDetails|memberOf|ownedObjects|transitiveMemberOf)$/, cost: 2, write: 0 },
  { method: 'GET', path: /^oauth2PermissionGrants(\/[^/]+)?$/, cost: 2, write: 0 },
  { method: 'GET', path: /^servicePrincipals\/[^/]+\/appRoleAssignments$/, cost: 2, write: 0 },
  { method: 'GET', path: /^subscribedSkus$/, cost: 3, write: 0 },
  { method: 'GET', path: /^users$/, cost: 2, write: 0 },
];

/**
 * Resource units and write units of a Graph identity request (throttling-limits.md: base cost from the table, else 1;
 * `$select` −1, `$expand` +1, `$top` < 20 −1, at least 1; writes not in the table cost 1 write unit).
 * @param method HTTP method; @param path path after `/{version}/`, no query; @param query the query string.
 */
export function identityCost(method: string, path: string, query: URLSearchParams): { ru: number; write: number } {
  const m = method.toUpperCase();
  const row = RU_COSTS.find((r) => r.method === m && r.path.test(path));
  let ru = row?.cost ?? 1;
  const write = row ? row.write : m === 'GET' || m === 'HEAD' ? 0 : 1;
  if (query.has('$select')) ru -= 1;
  if (query.has('$expand')) ru += 1;
  const top = query.get('$top');
  if (top !== null && Number(top) < 20) ru -= 1;
  return { ru: Math.max(1, ru), write };
}

/** Which Graph service a path (after `/{version}/`) belongs to. */
function graphServiceOf(path: string): 'identity' | 'teams' | 'other' {
  const segments = path.split('/');
  if (segments.some((s) => TEAMS_SEGMENTS.has(s))) return 'teams';
  if (IDENTITY_ROOTS.has(segments[0] ?? '')) return 'identity';
  return 'other';
}

/** The (unverified) claims a limit is keyed by, from the request's bearer token; null without a decodable token. */
export function tokenIdentity(req: FastifyRequest): TokenIdentity | null {
  const token = bearerToken(req);
  const payload = token?.split('.')[1];
  if (!payload) return null;
  try {
    const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const appId = typeof c.appid === 'string' ? c.appid : typeof c.azp === 'string' ? c.azp : '';
    if (typeof c.tid !== 'string') return null;
    return { tid: c.tid.toLowerCase(), appId: appId.toLowerCase(), oid: typeof c.oid === 'string' ? c.oid.toLowerCase() : '' };
  } catch {
    return null;
  }
}

const zero = (): ThrottleCount => ({ requests: 0, throttled: 0 });

/**
 * Holds the buckets and counters and decides per request. `tenantUsers(tid)` gives the user count of a served tenant
 * (for the Graph identity tier); `now()` is in milliseconds (injectable for tests).
 */
export class Throttler {
  #enabled = false;
  #scale = 1;
  #limits: ThrottlingLimits = { ...DEFAULT_LIMITS };
  #buckets = new Map<string, Bucket>();
  #inFlight = new Map<string, number>();
  #counters = new Map<string, BucketCounters>();
  #totals = zero();
  #byService: Partial<Record<ServiceName, ThrottleCount>> = {};
  #byLimit: Partial<Record<LimitName, ThrottleCount>> = {};
  readonly #tenantUsers: (tid: string) => number | undefined;
  readonly #now: () => number;

  /** @param tenantUsers users of a served tenant (undefined: unknown, treated as S); @param now clock in ms. */
  constructor(tenantUsers: (tid: string) => number | undefined, now: () => number = () => performance.now()) {
    this.#tenantUsers = tenantUsers;
    this.#now = now;
  }

  /** Whether limits are enforced. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /**
   * Replaces the configuration; buckets start full again (counters are kept). Throws RangeError for a scale ≤ 0, an
   * unknown limit name, or a capacity/window that is not a positive number.
   */
  set(config: ThrottlingConfig): void {
    const scale = config.scale ?? 1;
    if (!(typeof scale === 'number' && scale > 0 && Number.isFinite(scale))) throw new RangeError(`scale must be a positive number, got ${String(scale)}`);
    const limits: ThrottlingLimits = { ...DEFAULT_LIMITS };
    for (const [name, value] of Object.entries(config.limits ?? {})) {
      if (!(name in DEFAULT_LIMITS)) throw new RangeError(`unknown limit ${name}; one of ${Object.keys(DEFAULT_LIMITS).join(', ')}`);
      const ok = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n > 0;
      const v = value as unknown as Record<string, unknown>;
      const valid =
        name === 'dataverseConcurrency'
          ? ok(value)
          : name === 'graphIdentityAppTenant'
            ? ok(v.small) && ok(v.medium) && ok(v.large) && ok(v.windowSeconds)
            : ok(v.capacity) && ok(v.windowSeconds);
      if (!valid)
        throw new RangeError(`limit ${name} must be ${name === 'dataverseConcurrency' ? 'a positive number' : 'positive capacities and windowSeconds'}`);
      (limits as unknown as Record<string, unknown>)[name] = value;
    }
    this.#enabled = config.enabled === true;
    this.#scale = scale;
    this.#limits = limits;
    this.#buckets.clear();
  }

  /** Current settings and counters. */
  state(): ThrottlingState {
    return {
      enabled: this.#enabled,
      scale: this.#scale,
      limits: structuredClone(this.#limits),
      totals: { ...this.#totals },
      byService: structuredClone(this.#byService),
      byLimit: structuredClone(this.#byLimit),
      buckets: [...this.#counters.values()].map((c) => ({ ...c })),
    };
  }

  /** Zeroes the counters (buckets are kept). */
  resetCounters(): void {
    this.#counters.clear();
    this.#totals = zero();
    this.#byService = {};
    this.#byLimit = {};
  }

  /**
   * Decides one request: null when throttling is off or the request is not limited; else an admission (consumes the
   * cost from every bucket) or a refusal (consumes nothing). Counts both.
   */
  admit(request: ThrottleRequest): ThrottleAdmission | ThrottleRefusal | null {
    if (!this.#enabled || !request.claims) return null;
    const plan = this.#plan(request, request.claims);
    if (!plan || (plan.charges.length === 0 && plan.concurrency === undefined)) return null;
    const now = this.#now();
    let refusal: ThrottleRefusal | null = null;
    let worst = 0;
    for (const c of plan.charges) {
      const b = this.#bucket(c, now);
      if (b.tokens >= c.cost) continue;
      const rate = c.capacity / c.windowSeconds;
      const wait = c.cost > c.capacity ? c.windowSeconds : (c.cost - b.tokens) / rate;
      if (refusal === null || wait > worst) {
        worst = wait;
        refusal = {
          limit: c.limit,
          key: c.key,
          retryAfterSeconds: Math.max(1, Math.ceil(wait)),
          headers: plan.refusalHeaders(c.limit),
          capacity: c.capacity,
          windowSeconds: c.windowSeconds,
        };
      }
    }
    const conc = plan.concurrency;
    if (!refusal && conc && (this.#inFlight.get(conc.key) ?? 0) >= conc.max) {
      refusal = { limit: 'dataverseConcurrency', key: conc.key, retryAfterSeconds: 1, headers: {}, capacity: conc.max, windowSeconds: 0 };
    }
    if (refusal && request.service === 'managementActivity') refusal.retryAfterSeconds = null;
    this.#count(request.service, plan, refusal);
    if (refusal) return refusal;
    for (const c of plan.charges) this.#bucket(c, now).tokens -= c.cost;
    const admission: ThrottleAdmission = { headers: plan.admitHeaders() };
    if (conc) {
      this.#inFlight.set(conc.key, (this.#inFlight.get(conc.key) ?? 0) + 1);
      let released = false;
      admission.release = () => {
        if (released) return;
        released = true;
        const n = (this.#inFlight.get(conc.key) ?? 1) - 1;
        if (n <= 0) this.#inFlight.delete(conc.key);
        else this.#inFlight.set(conc.key, n);
      };
    }
    return admission;
  }

  #count(service: ServiceName, plan: Plan, refusal: ThrottleRefusal | null): void {
    this.#totals.requests++;
    const s = (this.#byService[service] ??= zero());
    s.requests++;
    if (refusal) {
      this.#totals.throttled++;
      s.throttled++;
    }
    const scopes: { limit: LimitName; key: string }[] = [...plan.charges];
    if (plan.concurrency) scopes.push({ limit: 'dataverseConcurrency', key: plan.concurrency.key });
    for (const { limit, key } of scopes) {
      const id = `${limit}|${key}`;
      let c = this.#counters.get(id);
      if (!c) {
        c = { limit, key, requests: 0, throttled: 0 };
        this.#counters.set(id, c);
      }
      const l = (this.#byLimit[limit] ??= zero());
      c.requests++;
      l.requests++;
      if (refusal && refusal.limit === limit && refusal.key === key) {
        c.throttled++;
        l.throttled++;
      }
    }
  }

  #bucket(c: Charge, now: number): Bucket {
    const id = `${c.limit}|${c.key}`;
    let b = this.#buckets.get(id);
    if (!b) {
      b = { tokens: c.capacity, at: now };
      this.#buckets.set(id, b);
      return b;
    }
    b.tokens = Math.min(c.capacity, b.tokens + ((now - b.at) / 1000) * (c.capacity / c.windowSeconds));
    b.at = now;
    return b;
  }

  #rate(limit: LimitName, key: string, cost: number): Charge {
    const l = this.#limits[limit] as RateLimit;
    return { limit, key, cost, capacity: Math.max(1, Math.floor(l.capacity * this.#scale)), windowSeconds: l.windowSeconds };
  }

  #plan(request: ThrottleRequest, id: TokenIdentity): Plan | null {
    const [pathPart = '', queryPart = ''] = request.url.split('?', 2);
    const query = new URLSearchParams(queryPart);
    const method = request.method.toUpperCase();
    const appTenant = `${id.appId}/${id.tid}`;
    const none = () => ({});
    switch (request.service) {
      case 'graph': {
        const m = /^\/graph\/(?:v1\.0|beta)\/(.*)$/.exec(pathPart);
        if (!m) return null;
        const path = (m[1] ?? '').replace(/\/+$/, '');
        const charges: Charge[] = [this.#rate('graphGlobalApp', id.appId, 1)];
        if (path === '$batch') return { charges, refusalHeaders: none, admitHeaders: none };
        const kind = graphServiceOf(path);
        if (kind === 'teams' && method === 'GET') {
          charges.push(this.#rate('teamsGetAppTenant', appTenant, 1), this.#rate('teamsGetApp', id.appId, 1));
        }
        if (kind !== 'identity') return { charges, refusalHeaders: none, admitHeaders: none };
        const { ru, write } = identityCost(method, path, query);
        const tier = this.#limits.graphIdentityAppTenant;
        const users = this.#tenantUsers(id.tid) ?? 0;
        const capacity = users < 50 ? tier.small : users <= 500 ? tier.medium : tier.large;
        const ruCharge: Charge = {
          limit: 'graphIdentityAppTenant',
          key: appTenant,
          cost: ru,
          capacity: Math.max(1, Math.floor(capacity * this.#scale)),
          windowSeconds: tier.windowSeconds,
        };
        charges.push(ruCharge, this.#rate('graphIdentityApp', id.appId, ru));
        if (write > 0)
          charges.push(
            this.#rate('graphIdentityWriteAppTenant', appTenant, write),
            this.#rate('graphIdentityWriteApp', id.appId, write),
            this.#rate('graphIdentityWriteTenant', id.tid, write),
          );
        return {
          charges,
          refusalHeaders: (limit) => {
            const writeLimit = limit.startsWith('graphIdentityWrite');
            const scope = limit === 'graphIdentityWriteTenant' ? 'Tenant' : limit.endsWith('AppTenant') ? 'Tenant_Application' : 'Application';
            return {
              'x-ms-throttle-scope': `${scope}/${writeLimit ? 'Write' : 'ReadWrite'}/${id.appId}/${id.tid}`,
              'x-ms-throttle-information': writeLimit ? 'WriteLimitExceeded' : 'ResourceUnitLimitExceeded',
            };
          },
          admitHeaders: () => {
            const headers: Record<string, string> = { 'x-ms-resource-unit': String(ru) };
            const b = this.#buckets.get(`graphIdentityAppTenant|${appTenant}`);
            const used = b ? 1 - b.tokens / ruCharge.capacity : 0;
            if (used > 0.8) headers['x-ms-throttle-limit-percentage'] = used.toFixed(1);
            return headers;
          },
        };
      }
      case 'dataverse': {
        const m = /^\/dataverse\/([^/]+)\/api\/data\//.exec(pathPart);
        if (!m) return null;
        const key = `${(m[1] ?? '').toLowerCase()}/${id.oid}`;
        return {
          charges: [this.#rate('dataverseUser', key, 1)],
          concurrency: { key, max: this.#limits.dataverseConcurrency },
          refusalHeaders: none,
          admitHeaders: none,
        };
      }
      case 'managementActivity': {
        const m = /^\/manage\/api\/v1\.0\/([^/]+)\//.exec(pathPart);
        const tenant = (m?.[1] ?? id.tid).toLowerCase();
        return { charges: [this.#rate('managementActivityTenant', tenant, 1)], refusalHeaders: none, admitHeaders: none };
      }
      case 'powerBi': {
        const m = /^\/powerbi\/v1\.0\/myorg\/admin\/(.*)$/.exec(pathPart);
        if (!m) return null;
        const p = m[1] ?? '';
        const names: LimitName[] = p.startsWith('activityevents')
          ? ['powerBiActivityEvents']
          : p.startsWith('workspaces/modified')
            ? ['powerBiModifiedWorkspaces']
            : p.startsWith('workspaces/getInfo')
              ? ['powerBiGetInfo']
              : p.startsWith('workspaces/scanStatus/')
                ? ['powerBiScanStatus']
                : p.startsWith('workspaces/scanResult/')
                  ? ['powerBiScanResult']
                  : p.startsWith('widelySharedArtifacts/')
                    ? ['powerBiWidelyShared']
                    : p === 'groups'
                      ? ['powerBiAdminGroupsHour', 'powerBiAdminGroupsMinute']
                      : [];
        return { charges: names.map((n) => this.#rate(n, id.tid, 1)), refusalHeaders: none, admitHeaders: none };
      }
      case 'bap':
      case 'powerApps':
      case 'flow':
        return { charges: [this.#rate('powerPlatformAppTenant', appTenant, 1)], refusalHeaders: none, admitHeaders: none };
      default:
        return null;
    }
  }
}

interface Plan {
  charges: Charge[];
  concurrency?: { key: string; max: number };
  refusalHeaders: (limit: LimitName) => Record<string, string>;
  admitHeaders: () => Record<string, string>;
}

/** True for a refusal (as opposed to an admission). */
export function isRefusal(v: ThrottleAdmission | ThrottleRefusal): v is ThrottleRefusal {
  return 'limit' in v;
}

/**
 * The answer to a throttled request, as each service sends it: Graph 429 `TooManyRequests` with `Retry-After` and the
 * `x-ms-throttle-*` headers; Dataverse 429 `0x80072322` (requests) or `0x80072326` (concurrency) with `Retry-After`;
 * Management Activity 403 AF429 without `Retry-After`; Power BI and Power Platform 429 `TooManyRequests` with
 * `Retry-After`.
 * @param url the request path with query (the AF429 message names its method and PublisherIdentifier).
 */
export function refusalResponse(
  service: ServiceName,
  refusal: ThrottleRefusal,
  url: string,
  requestId: string,
): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const headers: Record<string, string> = { ...refusal.headers };
  if (refusal.retryAfterSeconds !== null) headers['retry-after'] = String(refusal.retryAfterSeconds);
  if (service === 'managementActivity') return { status: 403, headers, body: af429Body(url) };
  if (service === 'dataverse') {
    const error =
      refusal.limit === 'dataverseConcurrency'
        ? { code: '0x80072326', message: `Number of concurrent requests exceeded the limit of ${refusal.capacity}.` }
        : { code: '0x80072322', message: `Number of requests exceeded the limit of ${refusal.capacity} over time window of ${refusal.windowSeconds} seconds.` };
    return { status: 429, headers, body: { error } };
  }
  return { status: 429, headers, body: faultBody(service, 429, requestId) };
}
