/**
 * Multi-tenant managed applications (seed "Mode B"): one application object in an operator tenant, consented into
 * customer tenants, each consent creating a service principal with its own object id in the customer tenant.
 *
 * Model: the operator tenant's `apps` entry is the application (secrets, `requiredResourceAccess`, `redirectUris`,
 * `signInAudience: 'AzureADMultipleOrgs'`); a customer tenant's entry for the same appId is the service principal
 * (`homeTenantId` = operator tenant id, no secrets, `grantedRoles` = what consent granted). Client secrets are checked
 * against the application object (https://learn.microsoft.com/entra/identity-platform/app-objects-and-service-principals).
 */
import { randomUUID } from 'node:crypto';
import { generateTenant, permissionsToGrantedRoles, secretValue } from './generate.ts';
import { createRng } from './prng.ts';
import { findApp, indexes, isHomeEntry, resolveMember, type AppRegistration, type Tenant, type TenantStore } from './tenant.ts';

/** Options of `generateManagedApp`. */
export interface ManagedAppOptions {
  /** Seed of every random choice (ids, secret, the generated operator tenant). */
  seed: number | string;
  /** Registered redirect URIs; admin consent requires `redirect_uri` to equal one of them exactly. */
  redirectUris: string[];
  /**
   * Application permissions the app requests (`requiredResourceAccess`), as `GenerateOptions.permissions`.
   * Default `quick`: Graph GroupMember.Read.All, User.Read.All, ExternalConnection.Read.All,
   * TeamsAppInstallation.ReadForUser.All, AiEnterpriseInteraction.Read.All; Management Activity ActivityFeed.Read;
   * Power BI Tenant.Read.All.
   */
  permissions?: 'quick' | 'step-by-step' | string[];
  /** App display name. @default 'Vigil' */
  displayName?: string;
  /** Put the app into this existing tenant (mutated) instead of generating an operator tenant. */
  operatorTenant?: Tenant;
  /** Display name of the generated operator tenant. @default 'Vigil Operator' */
  operatorName?: string;
  /** Primary domain of the generated operator tenant. @default `vigiloperator{4 digits}.onmicrosoft.com` */
  operatorDomain?: string;
  /** ISO instant the secret's start date is (default: current time). */
  now?: string;
  /** End of the client secret (ISO; default 24 months after `now`). */
  secretEndDateTime?: string;
  /** "Allow public client flows" on the app (password/device-code grants without a secret). @default false */
  publicClient?: boolean;
  /**
   * App manifest `groupMembershipClaims`. Default `DirectoryRole`: the operator configures the managed app to emit
   * directory roles (`wids`) in ID tokens, which Vigil needs to see that the administrator who signs in may consent.
   */
  groupMembershipClaims?: AppRegistration['groupMembershipClaims'];
}

/** A generated managed application and where it lives. */
export interface ManagedApp {
  /** The operator (home) tenant; serve it (`startEmulator({ tenants })` or `control.addTenant`) to serve the app. */
  tenant: Tenant;
  /** The application object (the home entry in `tenant.apps`). */
  app: AppRegistration;
  /** Application (client) id. */
  appId: string;
  /** The client secret value (`app.secrets[0].value`). */
  clientSecret: string;
  /** The registered redirect URIs. */
  redirectUris: string[];
}

/** Why a consent or revocation could not be done; `code` is stable. */
export class ConsentError extends Error {
  /** `AppNotFound` (no application object for the id), `NotMultiTenant`, `NotConsented`. */
  readonly code: 'AppNotFound' | 'NotMultiTenant' | 'NotConsented';

  /** @param code machine code; @param message what is wrong. */
  constructor(code: ConsentError['code'], message: string) {
    super(message);
    this.name = 'ConsentError';
    this.code = code;
  }
}

const DAY_MS = 86_400_000;

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Generates a multi-tenant managed application (`signInAudience: 'AzureADMultipleOrgs'`) with one client secret, the
 * requested application permissions and redirect URIs, homed in a small generated operator tenant (4 members with
 * sign-in accounts, no environments, no other app) or in `options.operatorTenant`. Deterministic from the seed except
 * when `now` is absent (dates). The app's own service principal in the operator tenant holds no granted roles.
 */
export function generateManagedApp(options: ManagedAppOptions): ManagedApp {
  if (!Array.isArray(options.redirectUris) || options.redirectUris.some((u) => typeof u !== 'string' || u.length === 0)) {
    throw new TypeError('redirectUris must be an array of non-empty strings');
  }
  const nowMs = options.now ? Date.parse(options.now) : Date.now();
  if (Number.isNaN(nowMs)) throw new RangeError(`now is not an ISO date: ${String(options.now)}`);
  const rng = createRng(`${String(options.seed)}:managed-app`);
  let tenant = options.operatorTenant;
  if (!tenant) {
    tenant = generateTenant({
      seed: `${String(options.seed)}:operator`,
      sizes: { users: 4, guests: 0, groups: 1, environments: 0, agents: 0 },
      displayName: options.operatorName ?? 'Vigil Operator',
      domain: options.operatorDomain ?? `vigiloperator${rng.int(1000, 9999)}.onmicrosoft.com`,
      ...(options.now ? { now: options.now } : {}),
    });
    tenant.apps = [];
    delete tenant.connectorAppId;
  }
  const secret = secretValue(rng);
  const end = new Date(nowMs);
  end.setUTCMonth(end.getUTCMonth() + 24);
  let appId = rng.guid();
  while (findApp(tenant, appId)) appId = rng.guid();
  let spId = rng.guid();
  while (spId === appId || resolveMember(tenant, spId)) spId = rng.guid();
  const app: AppRegistration = {
    appId,
    displayName: options.displayName ?? 'Vigil',
    servicePrincipalObjectId: spId,
    secrets: [
      {
        keyId: rng.guid(),
        displayName: 'Vigil operator',
        hint: secret.slice(0, 3),
        value: secret,
        startDateTime: iso(nowMs - DAY_MS),
        endDateTime: options.secretEndDateTime ?? iso(end.getTime()),
      },
    ],
    grantedRoles: {},
    isManagementApp: false,
    homeTenantId: tenant.id,
    signInAudience: 'AzureADMultipleOrgs',
    requiredResourceAccess: permissionsToGrantedRoles(options.permissions ?? 'quick'),
    redirectUris: [...options.redirectUris],
    isFallbackPublicClient: options.publicClient ?? false,
    groupMembershipClaims: options.groupMembershipClaims ?? 'DirectoryRole',
  };
  tenant.apps.push(app);
  return { tenant, app, appId, clientSecret: secret, redirectUris: [...options.redirectUris] };
}

function copyRoles(roles: Record<string, string[]> | undefined): Record<string, string[]> {
  return Object.fromEntries(Object.entries(roles ?? {}).map(([r, p]) => [r, [...p]]));
}

/**
 * Admin consent of `appId` in `tenant` (what `/adminconsent` does on approval): creates the app's service principal in
 * the tenant with a fresh object id (≠ appId, unique in the tenant) and grants every permission of the application's
 * `requiredResourceAccess`; when the service principal exists already, re-grants them (restoring revoked ones) and
 * keeps its object id. Consent in the home tenant grants on the home entry itself.
 * Throws ConsentError `AppNotFound` (no served application object) or `NotMultiTenant` (a single-tenant app and a
 * foreign tenant).
 */
export function consentServicePrincipal(store: TenantStore, tenant: Tenant, appId: string): { app: AppRegistration; created: boolean } {
  const home = store.findHomeApp(appId);
  if (!home) throw new ConsentError('AppNotFound', `Application with identifier '${appId}' was not found in any served tenant.`);
  const foreign = home.tenant.id.toLowerCase() !== tenant.id.toLowerCase();
  if (foreign && home.app.signInAudience !== 'AzureADMultipleOrgs') {
    throw new ConsentError('NotMultiTenant', `Application '${appId}' is not configured as a multi-tenant application.`);
  }
  const requested = copyRoles(home.app.requiredResourceAccess);
  const existing = findApp(tenant, appId);
  if (existing) {
    for (const [resource, perms] of Object.entries(requested)) {
      const list = (existing.grantedRoles[resource] ??= []);
      for (const p of perms) if (!list.includes(p)) list.push(p);
    }
    return { app: existing, created: false };
  }
  let spId = randomUUID();
  while (spId === appId || resolveMember(tenant, spId)) spId = randomUUID();
  const sp: AppRegistration = {
    appId: home.app.appId,
    displayName: home.app.displayName,
    servicePrincipalObjectId: spId,
    secrets: [],
    grantedRoles: requested,
    isManagementApp: false,
    homeTenantId: home.tenant.id,
    signInAudience: home.app.signInAudience ?? 'AzureADMyOrg',
  };
  tenant.apps.push(sp);
  indexes.apps.invalidate(tenant.apps);
  indexes.appsBySp.invalidate(tenant.apps);
  return { app: sp, created: true };
}

/**
 * Removes granted application permissions of an app's service principal in one tenant: `roles` of `resource`, all
 * roles of `resource` when `roles` is absent, everything when `resource` is absent. Tokens issued afterwards lack them.
 * Returns the remaining `grantedRoles`. Throws ConsentError `NotConsented` when the tenant has no entry for the app.
 */
export function revokeServicePrincipalRoles(tenant: Tenant, appId: string, options: { resource?: string; roles?: string[] } = {}): Record<string, string[]> {
  const app = findApp(tenant, appId);
  if (!app) throw new ConsentError('NotConsented', `Application '${appId}' has no service principal in tenant ${tenant.id}.`);
  const norm = (r: string): string => r.replace(/\/+$/, '').toLowerCase();
  for (const resource of Object.keys(app.grantedRoles)) {
    if (options.resource !== undefined && norm(resource) !== norm(options.resource)) continue;
    if (options.roles === undefined) {
      delete app.grantedRoles[resource];
      continue;
    }
    const left = (app.grantedRoles[resource] ?? []).filter((r) => !options.roles?.includes(r));
    if (left.length === 0) delete app.grantedRoles[resource];
    else app.grantedRoles[resource] = left;
  }
  return app.grantedRoles;
}

/** Whether the app (home entry or consented service principal) allows public client flows. */
export function allowsPublicClient(store: TenantStore, tenant: Tenant, app: AppRegistration): boolean {
  if (isHomeEntry(tenant, app)) return app.isFallbackPublicClient === true;
  return store.applicationOf(tenant, app)?.isFallbackPublicClient === true;
}

/** The client secrets valid for an app entry: its own for a home entry, the application object's for a consented SP. */
export function secretsOf(store: TenantStore, tenant: Tenant, app: AppRegistration): AppRegistration['secrets'] {
  return store.applicationOf(tenant, app)?.secrets ?? [];
}
