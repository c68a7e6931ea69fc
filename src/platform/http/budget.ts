/**
 * Throttling budgets as Microsoft documents them: each upstream service has its own limits, each limit its own scope
 * (per app per tenant, per tenant for all apps, per app across all tenants, per Dataverse environment), and a request
 * draws on every limit of its service at once. The pipeline takes a request's units from all of them before sending
 * (waiting while any is spent) and, after a 429, slows the whole service for every worker sharing the store.
 *
 * Sources (figures as of the pages' current versions):
 * - Microsoft Graph `concepts/throttling-limits.md`: global 130,000 requests / 10 s per app across all tenants;
 *   identity and access 3,500 / 5,000 / 8,000 resource units (RU) per 10 s per app+tenant for tenants under 50,
 *   50–500 and over 500 users, 150,000 RU / 20 s per app across tenants, and the RU cost table (see
 *   {@link graphResourceUnits}); the resources each service's limits apply to (see {@link graphBudgetOf}); Microsoft Teams "GET team, channel, tab, installedApps, appCatalogs" 30 rps per app
 *   per tenant, 600 rps per app across all tenants. The generated Teams table (`throttling-teams-graphsvc.md`, "GET |
 *   600 per 10 s | 300 per 10 s | 6000 per 10 s | 3000 per 10 s": two configurations in one row) is stricter across
 *   tenants, 3,000 per 10 s: Vigil keeps to the stricter figures, 30 rps per app per tenant and 300 rps per app.
 * - Graph `concepts/json-batching.md`: the requests of a `$batch` are evaluated against the limits one by one.
 * - Dataverse `developer/data-platform/api-limits.md`: 6,000 requests per 5 min sliding window per user, per web
 *   server (environment).
 * - Power BI REST reference (Admin – WorkspaceInfo PostWorkspaceInfo 500 / h, GetScanStatus 10,000 / h,
 *   GetScanResult 500 / h, GetModifiedWorkspaces 30 / h, WidelySharedArtifacts 200 / h; Admin – Groups
 *   GetGroupsAsAdmin 50 / h, used for any other admin call); activity events 200 / h (unconfirmed: the figure peers
 *   use).
 * - Office 365 Management Activity API reference: 2,000 requests / min per tenant baseline, a dedicated 60,000 / min
 *   pool per publisher when every call carries `PublisherIdentifier`.
 * - Power Platform admin (BAP, Power Apps, Power Automate admin): no published figure; a conservative budget.
 */

/**
 * The throttled service a request belongs to (what it draws on), distinct from the API family of the link policy:
 * one Graph host serves the identity (`graphIdentity`), Teams (`graphTeams`) and other (`graph`) services.
 */
export type BudgetService =
  | 'graph'
  | 'graphIdentity'
  | 'graphTeams'
  | 'dataverse'
  | 'powerPlatform'
  | 'powerBiAdmin'
  | 'powerBiScanInfo'
  | 'powerBiScanStatus'
  | 'powerBiScanResult'
  | 'powerBiModified'
  | 'powerBiActivity'
  | 'powerBiWidelyShared'
  | 'managementActivity';

/**
 * Who shares a limit: `appTenant` — this app in one tenant; `tenant` — every app in one tenant; `app` — this app in
 * every tenant (keyed by the application (client) ID of {@link BudgetCharge.appId}: two app registrations have a
 * budget each, one registration used by integrations of several tenants shares one); `environment` — one Dataverse
 * environment (web server) of one tenant.
 */
type BudgetScope = 'appTenant' | 'tenant' | 'app' | 'environment';

/** One documented limit: `capacity` units per `windowSeconds`, refilled evenly (a token bucket). */
export interface BudgetLimit {
  capacity: number;
  windowSeconds: number;
}

/** One limit of a service with the scope it applies to; `name` is the stored budget name (≤ 32 characters). */
export interface ScopedLimit extends BudgetLimit {
  name: string;
  scope: BudgetScope;
}

/** The three identity-and-access tiers (`throttling-limits.md`): S under 50 users, M 50–500, L above 500. */
const IDENTITY_TIERS = [
  { maxUsers: 49, ruPer10s: 3500 },
  { maxUsers: 500, ruPer10s: 5000 },
  { maxUsers: Infinity, ruPer10s: 8000 },
] as const;

/**
 * Resource units per 10 s per app+tenant for a tenant of `users` users (`throttling-limits.md`: S < 50 → 3,500,
 * M 50–500 → 5,000, L > 500 → 8,000). `undefined` (size not known yet) gives the smallest tier: too slow at worst,
 * never throttled for it.
 */
export function identityTier(users: number | undefined): number {
  if (users === undefined) return IDENTITY_TIERS[0].ruPer10s;
  return IDENTITY_TIERS.find((t) => users <= t.maxUsers)!.ruPer10s;
}

/** Settings that change the documented figures (from the configuration). */
export interface BudgetSettings {
  /** Replaces the identity tier for every tenant when set (resource units per 10 s). */
  identityRuPer10s?: number | undefined;
  /** Management Activity requests per minute per tenant. */
  managementPerMinute: number;
  /** Dataverse requests per 5 minutes per environment. */
  dataversePer5min: number;
  /**
   * Multiplies every capacity (windows unchanged): 1 keeps Microsoft's figures; more only against an emulator that
   * enforces none, or limits Microsoft raised for a tenant. @default 1
   */
  scale?: number | undefined;
}

/**
 * Power Platform admin (BAP, Power Apps and Power Automate admin APIs): Microsoft publishes no figure (unconfirmed), so a
 * conservative 300 requests per minute per tenant (5 per second sustained, a collection's whole burst at most); the
 * 429s it may still meet slow it further (see {@link ThrottleBudget}).
 */
const POWER_PLATFORM_PER_MINUTE = 300;

/**
 * The limits each service's requests draw on, in the order they are taken. `identityRuPer10s` is the app+tenant
 * identity limit for the tenant (see {@link identityTier}). Requests of the identity and Teams services are not also
 * charged to Graph's global 130,000 / 10 s: their own app-wide limits (7,500 RU/s, 300 rps) keep them far below it.
 */
export function limitsOf(service: BudgetService, settings: BudgetSettings, identityRuPer10s: number): ScopedLimit[] {
  const scale = settings.scale ?? 1;
  return documentedLimits(service, settings, identityRuPer10s).map((l) => (scale === 1 ? l : { ...l, capacity: l.capacity * scale }));
}

function documentedLimits(service: BudgetService, settings: BudgetSettings, identityRuPer10s: number): ScopedLimit[] {
  switch (service) {
    case 'graph':
      return [{ name: 'graph', scope: 'app', capacity: 130_000, windowSeconds: 10 }];
    case 'graphIdentity':
      return [
        { name: 'graphIdentity', scope: 'appTenant', capacity: settings.identityRuPer10s ?? identityRuPer10s, windowSeconds: 10 },
        { name: 'graphIdentity', scope: 'app', capacity: 150_000, windowSeconds: 20 },
      ];
    case 'graphTeams':
      // Per second: the limit is stated in requests per second, so a bucket of one second's worth never bursts above it.
      return [
        { name: 'graphTeams', scope: 'appTenant', capacity: 30, windowSeconds: 1 },
        { name: 'graphTeams', scope: 'app', capacity: 300, windowSeconds: 1 },
      ];
    case 'dataverse':
      return [{ name: 'dataverse', scope: 'environment', capacity: settings.dataversePer5min, windowSeconds: 300 }];
    case 'powerPlatform':
      return [{ name: 'powerPlatform', scope: 'tenant', capacity: POWER_PLATFORM_PER_MINUTE, windowSeconds: 60 }];
    case 'powerBiAdmin':
      return [{ name: 'powerBiAdmin', scope: 'tenant', capacity: 50, windowSeconds: 3600 }];
    case 'powerBiScanInfo':
      return [{ name: 'powerBiScanInfo', scope: 'tenant', capacity: 500, windowSeconds: 3600 }];
    case 'powerBiScanStatus':
      return [{ name: 'powerBiScanStatus', scope: 'tenant', capacity: 10_000, windowSeconds: 3600 }];
    case 'powerBiScanResult':
      return [{ name: 'powerBiScanResult', scope: 'tenant', capacity: 500, windowSeconds: 3600 }];
    case 'powerBiModified':
      return [{ name: 'powerBiModified', scope: 'tenant', capacity: 30, windowSeconds: 3600 }];
    case 'powerBiActivity':
      return [{ name: 'powerBiActivity', scope: 'tenant', capacity: 200, windowSeconds: 3600 }];
    case 'powerBiWidelyShared':
      return [{ name: 'powerBiWidelyShared', scope: 'tenant', capacity: 200, windowSeconds: 3600 }];
    case 'managementActivity':
      return [{ name: 'managementActivity', scope: 'tenant', capacity: settings.managementPerMinute, windowSeconds: 60 }];
  }
}

/**
 * Resource units a Graph identity-and-access request costs (`throttling-limits.md` base cost table, the entries
 * Vigil's paths can hit: GET `users` 2, `applications` 2, `groups/{id}/members` 3, `groups/{id}/transitiveMembers`
 * 5, `subscribedSkus` 3, `oauth2PermissionGrants` 2, `servicePrincipals/{id}/appRoleAssignments` 2, any other 1;
 * `$select` −1, `$expand` +1, `$top` under 20 −1; never below 1). A delta path (`users/delta`) costs as its base
 * collection is not listed, so 1.
 */
function graphResourceUnits(url: string): number {
  const u = graphUrl(url);
  const path = u.pathname.replace(/^\/(v1\.0|beta)/, '');
  const base: [RegExp, number][] = [
    [/^\/groups\/[^/]+\/transitiveMembers$/, 5],
    [/^\/groups\/[^/]+\/members$/, 3],
    [/^\/subscribedSkus$/, 3],
    [/^\/(users|applications|oauth2PermissionGrants)$/, 2],
    [/^\/servicePrincipals\/[^/]+\/appRoleAssignments$/, 2],
  ];
  let cost = base.find(([re]) => re.test(path))?.[1] ?? 1;
  const q = decodeURIComponent(u.search);
  if (q.includes('$select=')) cost--;
  if (q.includes('$expand=')) cost++;
  const top = /\$top=(\d+)/.exec(q);
  if (top && Number(top[1]) < 20) cost--;
  return Math.max(1, cost);
}

/** A Graph URL, absolute or relative to the version as a `$batch` inner request names it (`/users/{id}/…`). */
function graphUrl(url: string): URL {
  return new URL(url, 'https://graph.invalid/v1.0/');
}

/**
 * Roots of the identity-and-access resources (`throttling-limits.md`, "Identity and access service limits", and the
 * resources it lists in `includes/throttling-identity-and-access.md`: application, contract, device, directoryObject,
 * directoryRole(Template), domain, extensionProperty, groupSetting(Template), group, the policies, licenseDetails,
 * oauth2PermissionGrant, organization, orgContact, servicePrincipal, subscribedSku, user), as path segments.
 */
const IDENTITY_ROOTS = new Set([
  'applications',
  'contacts',
  'contracts',
  'devices',
  'directoryObjects',
  'directoryRoles',
  'directoryRoleTemplates',
  'domains',
  'getObjectsById',
  'groups',
  'groupSettings',
  'groupSettingTemplates',
  'me',
  'oauth2PermissionGrants',
  'organization',
  'policies',
  'servicePrincipals',
  'subscribedSkus',
  'users',
]);
/**
 * Segments under a user, group or `me` that are still directory data (relationships and directory functions): any
 * other (`messages`, `drive`, `insights`, `teamwork`…) belongs to another workload's service.
 */
const IDENTITY_CHILDREN = new Set([
  'appRoleAssignments',
  'checkMemberGroups',
  'checkMemberObjects',
  'createdObjects',
  'delta',
  'directReports',
  'extensionProperties',
  'getMemberGroups',
  'getMemberObjects',
  'licenseDetails',
  'manager',
  'memberOf',
  'members',
  'oauth2PermissionGrants',
  'ownedDevices',
  'ownedObjects',
  'owners',
  'registeredDevices',
  'transitiveMemberOf',
  'transitiveMembers',
]);
/**
 * Teams resources (`throttling-limits.md`, "Microsoft Teams service limits": team, channel, tab, installedApps,
 * appCatalogs, chats): roots, and the segments that lead to them under a user or a group.
 */
const TEAMS_ROOTS = new Set(['teams', 'appCatalogs', 'chats', 'teamwork']);
const TEAMS_CHILDREN = new Set(['teamwork', 'joinedTeams', 'chats', 'team']);

/**
 * The throttled Graph service a request belongs to, from its path, and its units there — the one decision shared by
 * single requests (the pipeline charges a Graph request that names no service with it) and the inner requests of a
 * `$batch` (`sources/graph/batch.ts`):
 * - Teams (`graphTeams`, 1 request): `teams/…`, `appCatalogs/…`, `chats/…`, `teamwork/…`, and under a user or group its
 *   `teamwork`, `joinedTeams`, `chats` or `team` (`users/{id}/teamwork/installedApps`);
 * - identity and access (`graphIdentity`, {@link graphResourceUnits}): the directory roots of {@link IDENTITY_ROOTS}
 *   (`users`, `groups/delta`, `groups/{id}/members`, `servicePrincipals/{id}/appRoleAssignments`…), children of a
 *   user, group or `me` only when they are directory relationships or functions;
 * - any other path (`copilot/…`, `reports/…`, `security/…`, `external/connections`, a user's mail or files): Graph's
 *   global limit (`graph`, 1 request), the only one Vigil tracks for them.
 * `url` is absolute, or relative to the version (`/users/{id}/…`) as a `$batch` inner request names it.
 */
export function graphBudgetOf(url: string): { service: 'graph' | 'graphIdentity' | 'graphTeams'; cost: number } {
  const segments = graphUrl(url)
    .pathname.replace(/^\/(v1\.0|beta)(?=\/|$)/, '')
    .split('/')
    .filter((s) => s.length > 0);
  const [root = '', , child = ''] = segments;
  // `me/…` names the child one segment earlier than `users/{id}/…`.
  const sub = root === 'me' ? (segments[1] ?? '') : child;
  if (TEAMS_ROOTS.has(root) || ((root === 'users' || root === 'groups' || root === 'me') && TEAMS_CHILDREN.has(sub))) return { service: 'graphTeams', cost: 1 };
  const userOrGroup = root === 'users' || root === 'groups' || root === 'me';
  const directory = IDENTITY_ROOTS.has(root) && (!userOrGroup || sub === '' || IDENTITY_CHILDREN.has(sub));
  return directory ? { service: 'graphIdentity', cost: graphResourceUnits(url) } : { service: 'graph', cost: 1 };
}

/** What one request (or the requests inside one `$batch`) takes from a service's budgets. */
export interface BudgetCharge {
  service: BudgetService;
  tenantId: string;
  /** Units: resource units for `graphIdentity`, requests otherwise. */
  cost: number;
  /** The Dataverse environment's host (scope `environment`). */
  environment?: string;
  /**
   * The application (client) ID the request is sent as (scope `app`). Absent (a request sent outside an integration's
   * context), the app-wide limits are shared by every such request under one key.
   */
  appId?: string;
}

/**
 * The throttling-budget port of the HTTP pipeline. Before each request the pipeline takes the request's units from
 * every limit of its service, waiting while any is spent; after a 429 (outer, or inside a `$batch`) it penalizes the
 * service: no request before `Retry-After`, and the service's pace halved (multiplicative decrease), recovering
 * additively as requests go through — shared by every worker through the store.
 */
export interface ThrottleBudget {
  /** Waits until `charge.cost` units are available in every limit of the service, then takes them. */
  acquire(charge: BudgetCharge, signal?: AbortSignal): Promise<void>;
  /**
   * A 429 was seen: blocks the service's budget for `seconds` and halves its pace. Returns false when the service has
   * no budget to penalize (the caller then waits alone).
   */
  penalize(charge: BudgetCharge, seconds: number): Promise<boolean>;
}
