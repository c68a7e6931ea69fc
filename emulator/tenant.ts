/**
 * Plain-data model of the Microsoft tenants the emulator serves, and the store that indexes them.
 *
 * The model is deliberately JSON-serialisable (no classes, no Maps) so tests can build it by hand, mutate it in place,
 * send it over the control API and compare it with what a client collected. Shapes follow the Microsoft resources they
 * stand for: Entra ID users/groups (Graph `user`, `group` resources), app registrations with client secrets
 * (Graph `application.passwordCredentials`), Power Platform environments (BAP `scopes/admin/environments`), Dataverse
 * `systemuser` and `bot` rows. Field names are the Microsoft wire names wherever the object is served as is.
 */

import type { BotComponent } from './agentcomponents.ts';
import type { ConversationTranscript } from './transcripts.ts';
import type { AzureEstate } from './arm.ts';
import type { PowerBiEstate } from './powerbiinventory.ts';
import type { CopilotModel } from './copilot.ts';
import type { PowerPlatformModel } from './powerplatform.ts';
import type { GraphEstate } from './graphestate.ts';
import type { OrganizationSettingsModel } from './organization.ts';

/**
 * An Entra ID user as Graph serves it (https://learn.microsoft.com/graph/api/resources/user).
 * Dates are ISO 8601 UTC strings. Guests have `userType: 'Guest'` and a UPN like `jane_contoso.com#EXT#@{domain}`.
 */
export interface DirectoryUser {
  id: string;
  displayName: string;
  givenName: string | null;
  surname: string | null;
  userPrincipalName: string;
  mail: string | null;
  jobTitle: string | null;
  department: string | null;
  accountEnabled: boolean;
  userType: 'Member' | 'Guest';
  createdDateTime: string;
  businessPhones: string[];
  mobilePhone: string | null;
  officeLocation: string | null;
  preferredLanguage: string | null;
  /**
   * Graph `assignedLicenses` (`[{disabledPlans, skuId}]`), served when `$select`ed; absent = none. The Microsoft 365
   * Copilot SKU (`COPILOT_SKU_ID` in copilot.ts) gives the user a Copilot interaction history.
   */
  assignedLicenses?: { disabledPlans: string[]; skuId: string }[];
  /**
   * Sign-in password for the password (ROPC) grant; absent = the user cannot sign in with a password (AADSTS50126).
   * Never served by Graph; the request log never sees it (form bodies are not logged).
   */
  password?: string;
  /** The password grant answers AADSTS50076 (`invalid_grant`, `suberror: basic_action`): MFA is required. */
  mfaRequired?: boolean;
  /** The password grant answers AADSTS50079 (`interaction_required`): the user must register for MFA. */
  mfaRegistrationRequired?: boolean;
  /** Conditional Access blocks token issuance for this user: AADSTS53003 (password and device-code grants). */
  conditionalAccessBlocked?: boolean;
  /**
   * Entra directory role template ids the user holds (`DIRECTORY_ROLES`), issued as the `wids` claim of user tokens.
   * Global Administrator or Power Platform Administrator make the user a Power Platform / Dataverse admin.
   */
  directoryRoles?: string[];
}

/**
 * An Entra ID group as Graph serves it (https://learn.microsoft.com/graph/api/resources/group).
 * Microsoft 365 groups have `groupTypes: ['Unified']`; security groups `[]` with `securityEnabled: true`.
 */
export interface DirectoryGroup {
  id: string;
  displayName: string;
  description: string | null;
  mail: string | null;
  mailNickname: string;
  mailEnabled: boolean;
  securityEnabled: boolean;
  groupTypes: string[];
  visibility: 'Public' | 'Private' | 'HiddenMembership' | null;
  createdDateTime: string;
}

/** A service principal that is not one of the tenant's `apps` (an enterprise app), usable as a group member. */
export interface ServicePrincipal {
  /** Object ID of the service principal. */
  id: string;
  /** Application (client) ID. */
  appId: string;
  displayName: string;
  servicePrincipalType: 'Application' | 'ManagedIdentity' | 'Legacy';
}

/** A registered device (https://learn.microsoft.com/graph/api/resources/device), usable as a group member. */
export interface Device {
  /** Object ID. */
  id: string;
  /** The device id reported by the device itself. */
  deviceId: string;
  displayName: string;
  operatingSystem: string;
  operatingSystemVersion: string;
  accountEnabled: boolean;
}

/**
 * A client secret (Graph `passwordCredential`). `value` is the secret text sent as `client_secret`; `hint` is its first
 * three characters as the Entra portal shows them. `endDateTime` ISO 8601: after it the token endpoint answers
 * AADSTS7000222.
 */
export interface ClientSecret {
  keyId: string;
  displayName: string;
  hint: string;
  value: string;
  startDateTime: string;
  endDateTime: string;
}

/**
 * An application registered in (or consented into) the tenant, together with its service principal.
 * `grantedRoles` maps a resource identifier (no trailing slash, e.g. `https://graph.microsoft.com`) to the application
 * permissions admin-consented for it; these become the token's `roles` claim for that resource.
 * `isManagementApp` mirrors the BAP `adminApplications` registration.
 */
export interface AppRegistration {
  /** Application (client) ID. */
  appId: string;
  displayName: string;
  /** Object ID of the service principal in this tenant (never equal to appId). */
  servicePrincipalObjectId: string;
  secrets: ClientSecret[];
  grantedRoles: Record<string, string[]>;
  isManagementApp: boolean;
  /**
   * Tenant that holds the application object (its secrets, redirect URIs, requested permissions). Absent or equal to
   * this tenant's id: the entry is the application itself. Another tenant: the entry is only a service principal created
   * by admin consent; `secrets` is empty and client secrets are checked against the home tenant's entry.
   */
  homeTenantId?: string;
  /** `AzureADMultipleOrgs` lets other tenants consent to the app (Mode B); absent = `AzureADMyOrg`. */
  signInAudience?: 'AzureADMyOrg' | 'AzureADMultipleOrgs';
  /**
   * Application permissions the app requests, resource (no trailing slash) → permission names (a simplified
   * `requiredResourceAccess`): what admin consent grants as `grantedRoles` in the consenting tenant.
   */
  requiredResourceAccess?: Record<string, string[]>;
  /** Registered redirect URIs (web platform); admin consent requires an exact match (else AADSTS50011). */
  redirectUris?: string[];
  /** "Allow public client flows": the password and device-code grants accept the app without a client secret. */
  isFallbackPublicClient?: boolean;
  /**
   * App manifest `groupMembershipClaims` (https://learn.microsoft.com/entra/identity-platform/reference-app-manifest):
   * with `DirectoryRole` or `All`, ID tokens issued to the app carry the user's directory roles as `wids`. Absent: `None`.
   */
  groupMembershipClaims?: 'None' | 'SecurityGroup' | 'DirectoryRole' | 'ApplicationGroup' | 'All';
  /** Application ID URIs (Graph `application.identifierUris`): tokens may be issued for them as audience. */
  identifierUris?: string[];
  /**
   * Federated identity credentials (Graph `federatedIdentityCredential`: name, issuer, subject, audiences), e.g. the one
   * Copilot Studio's threat detection presents (`copilotstudio.ts`).
   */
  federatedIdentityCredentials?: { name: string; issuer: string; subject: string; audiences: string[] }[];
}

/**
 * A Dataverse `systemuser` row (https://learn.microsoft.com/power-apps/developer/data-platform/reference/entities/systemuser).
 * People have `applicationid: null`; application users have the app id and `accessmode: 4` (non-interactive).
 */
export interface SystemUser {
  systemuserid: string;
  fullname: string;
  domainname: string;
  internalemailaddress: string | null;
  azureactivedirectoryobjectid: string | null;
  applicationid: string | null;
  isdisabled: boolean;
  /** 0 Read-Write, 1 Administrative, 2 Read, 3 Support User, 4 Non-interactive, 5 Delegated Admin. */
  accessmode: number;
}

/**
 * An application user's Dataverse presence: the `systemuser` it maps to and its security role names.
 * Reading bots/systemusers needs the `System Administrator` role.
 */
export interface AppUser {
  appId: string;
  systemuserid: string;
  roles: string[];
}

/** A Dataverse security role of the root business unit (`role` table: `roleid`, `name`). */
export interface SecurityRole {
  roleid: string;
  name: string;
}

/**
 * A Copilot Studio agent: a Dataverse `bot` row (https://learn.microsoft.com/power-apps/developer/data-platform/reference/entities/bot).
 * Option sets: authenticationmode 0 Unspecified, 1 None, 2 Integrated, 3 Custom Azure AD, 4 Generic OAuth2;
 * accesscontrolpolicy 0 Any, 1 Chatbot readers, 2 Group membership, 3 Any (multitenant; not generated); authenticationtrigger 0 As Needed, 1 Always;
 * statecode 0 Active, 1 Inactive; statuscode 1 Provisioned … 5 MissingLicense; runtimeprovider 0 PVA, 1 Nuance Mix.
 * `configuration` is a JSON document stored as a string (Memo column).
 */
export interface Bot {
  botid: string;
  name: string;
  schemaname: string;
  authenticationmode: number;
  authenticationtrigger: number;
  accesscontrolpolicy: number;
  /** Comma-separated group object ids (≤ 20) when accesscontrolpolicy is 2, else null. */
  authorizedsecuritygroupids: string | null;
  publishedon: string | null;
  _publishedby_value: string | null;
  _ownerid_value: string;
  owneridtype: 'systemuser' | 'team';
  statecode: number;
  statuscode: number;
  language: number;
  runtimeprovider: number;
  template: string | null;
  createdon: string;
  modifiedon: string;
  configuration: string | null;
}

/** The Dataverse organisation linked to an environment. The instance URL is derived from `uniqueName` when served. */
export interface DataverseOrg {
  uniqueName: string;
  domainName: string;
  version: string;
  instanceState: 'Ready' | 'NotReady';
  /** Root business unit id (`_businessunitid_value` of systemusers). */
  businessUnitId: string;
  appUsers: AppUser[];
  systemusers: SystemUser[];
  bots: Bot[];
  /**
   * Security roles of the root business unit. Absent: the defaults of `DATAVERSE_ROLE_NAMES` with ids derived from
   * `uniqueName` (stable), see `securityRoles`.
   */
  roles?: SecurityRole[];
  /**
   * Role names of systemusers that are NOT application users (people), by systemuserid. Application users keep
   * theirs in `appUsers[].roles`. A person holding System Administrator is privileged in the org.
   */
  userRoles?: Record<string, string[]>;
  /** Copilot Studio agent components (`botcomponent` rows) of the org's bots; absent = none. */
  botcomponents?: BotComponent[];
  /**
   * Copilot Studio conversation transcripts (`conversationtranscript` rows, `transcripts.ts`); absent = the org has no
   * such table (Dataverse answers 404 `0x8006088a` for the entity set).
   */
  conversationtranscripts?: ConversationTranscript[];
}

/**
 * A Power Platform environment as the BAP admin API describes it (reference §3.3), with its optional Dataverse org.
 * `name` is the environment GUID (BAP `name`); `dataverse: null` means `databaseType: "None"`.
 */
export interface Environment {
  name: string;
  displayName: string;
  location: string;
  azureRegion: string;
  environmentSku: 'Default' | 'Production' | 'Sandbox' | 'Developer' | 'Trial' | 'Teams';
  isDefault: boolean;
  createdTime: string;
  createdBy: { id: string; displayName: string; type: string };
  provisioningState: string;
  states: { management: { id: string }; runtime: { id: string } };
  dataverse: DataverseOrg | null;
  /** Emulator switch: BAP `addAppUser` fails for this environment (see bap.ts). */
  refuseAddAppUser?: boolean;
  /** Emulator switch: the Dataverse `systemuserroles_association/$ref` POST fails in this environment (see dataverse.ts). */
  refuseRoleAssignment?: boolean;
  /**
   * BAP `properties.governanceConfiguration` (Managed Environments): `protectionLevel` `Standard` (managed) or `Basic`,
   * and for managed ones `settings.extendedSettings` with string values. Absent → served as `{ protectionLevel: 'Basic' }`.
   */
  governanceConfiguration?: { protectionLevel: 'Standard' | 'Basic'; settings?: { extendedSettings: Record<string, string> } };
}

/**
 * One tenant. `domains[0]` is the primary (`*.onmicrosoft.com`) domain; every entry resolves to the tenant at the
 * identity endpoints. `memberships` maps a group id to member object ids (users, groups, service principals — either
 * `servicePrincipals` or an app's `servicePrincipalObjectId` — and devices).
 * `referenceTime` is the generator's `now` (ISO), used by ground-truth computations that depend on dates.
 * `connectorAppId` names the app the tenant was generated for (the Vigil connector), when there is one.
 */
export interface Tenant {
  id: string;
  displayName: string;
  domains: string[];
  users: DirectoryUser[];
  groups: DirectoryGroup[];
  memberships: Record<string, string[]>;
  servicePrincipals: ServicePrincipal[];
  devices: Device[];
  apps: AppRegistration[];
  environments: Environment[];
  referenceTime?: string;
  connectorAppId?: string;
  /** Power BI workspaces, items and widely shared links (admin scanner APIs; `powerbiinventory.ts`). */
  powerBi?: PowerBiEstate;
  /** Microsoft 365 Copilot interaction history by user (`copilot.ts`). */
  copilot?: CopilotModel;
  /** Power Apps, flows, connectors, connections, DLP policies and tenant settings (`powerplatform.ts`). */
  powerPlatform?: PowerPlatformModel;
  /** Azure subscriptions, RBAC role assignments and Cognitive Services (Foundry) accounts served under `/arm` (`arm.ts`). */
  azure?: AzureEstate;
  /** Microsoft Search external connections and Teams apps installed per user (`graphestate.ts`). */
  graphEstate?: GraphEstate;
  /** Dataverse `organization` rows (environment settings: content security policy) by org unique name (`organization.ts`). */
  organizationSettings?: OrganizationSettingsModel;
}

/** The kinds of directory object a group member can be; the value is the Graph `@odata.type` suffix. */
export type MemberKind = 'user' | 'group' | 'servicePrincipal' | 'device';

/** A resolved group member: the kind and the object it points to. */
export type ResolvedMember =
  | { kind: 'user'; object: DirectoryUser }
  | { kind: 'group'; object: DirectoryGroup }
  | { kind: 'servicePrincipal'; object: ServicePrincipal }
  | { kind: 'device'; object: Device };

interface IndexEntry<T> {
  length: number;
  map: Map<string, T>;
}

/**
 * Id → element lookup over an array, cached per array instance and rebuilt when the array's length changes or a hit
 * no longer carries the id (elements replaced in place). A direct splice-and-push that keeps the length is not
 * detected; the control API invalidates for you, otherwise call `TenantStore.invalidate()`.
 */
export class ArrayIndex<T> {
  readonly #cache = new WeakMap<readonly T[], IndexEntry<T>>();
  readonly #key: (item: T) => string;

  /** @param key extracts the id of an element. */
  constructor(key: (item: T) => string) {
    this.#key = key;
  }

  /** The element with this id, or undefined. O(1) amortised. */
  get(items: readonly T[], id: string): T | undefined {
    let entry = this.#cache.get(items);
    if (!entry || entry.length !== items.length) entry = this.#build(items);
    const hit = entry.map.get(id);
    if (hit !== undefined && this.#key(hit) === id) return hit;
    if (hit !== undefined) return this.#build(items).map.get(id);
    return undefined;
  }

  /** Position of the element with this id, or -1. */
  indexOf(items: readonly T[], id: string): number {
    const item = this.get(items, id);
    return item === undefined ? -1 : items.indexOf(item);
  }

  /** Drops the cached index of an array. */
  invalidate(items: readonly T[]): void {
    this.#cache.delete(items);
  }

  #build(items: readonly T[]): IndexEntry<T> {
    const map = new Map<string, T>();
    for (const item of items) map.set(this.#key(item), item);
    const entry = { length: items.length, map };
    this.#cache.set(items, entry);
    return entry;
  }
}

/** Shared indexes over the model arrays (one per element type). */
export const indexes = {
  users: new ArrayIndex<DirectoryUser>((u) => u.id),
  groups: new ArrayIndex<DirectoryGroup>((g) => g.id),
  servicePrincipals: new ArrayIndex<ServicePrincipal>((s) => s.id),
  appsBySp: new ArrayIndex<AppRegistration>((a) => a.servicePrincipalObjectId),
  apps: new ArrayIndex<AppRegistration>((a) => a.appId),
  devices: new ArrayIndex<Device>((d) => d.id),
  environments: new ArrayIndex<Environment>((e) => e.name),
  bots: new ArrayIndex<Bot>((b) => b.botid),
  systemusers: new ArrayIndex<SystemUser>((s) => s.systemuserid),
};

/**
 * Resolves a member object id to the directory object it names, looking in users, groups, service principals
 * (enterprise apps and the tenant's app registrations' service principals) and devices, in that order.
 * Returns undefined for a dangling id (the member was deleted).
 */
export function resolveMember(tenant: Tenant, id: string): ResolvedMember | undefined {
  const user = indexes.users.get(tenant.users, id);
  if (user) return { kind: 'user', object: user };
  const group = indexes.groups.get(tenant.groups, id);
  if (group) return { kind: 'group', object: group };
  const sp = indexes.servicePrincipals.get(tenant.servicePrincipals, id);
  if (sp) return { kind: 'servicePrincipal', object: sp };
  const app = indexes.appsBySp.get(tenant.apps, id);
  if (app) {
    return {
      kind: 'servicePrincipal',
      object: { id: app.servicePrincipalObjectId, appId: app.appId, displayName: app.displayName, servicePrincipalType: 'Application' },
    };
  }
  const device = indexes.devices.get(tenant.devices, id);
  if (device) return { kind: 'device', object: device };
  return undefined;
}

/** The app registration with this application (client) id in the tenant, or undefined. */
export function findApp(tenant: Tenant, appId: string): AppRegistration | undefined {
  return indexes.apps.get(tenant.apps, appId);
}

/** The member or guest whose userPrincipalName equals `upn` (case-insensitive), or undefined. */
export function findUserByUpn(tenant: Tenant, upn: string): DirectoryUser | undefined {
  const key = upn.toLowerCase();
  return tenant.users.find((u) => u.userPrincipalName.toLowerCase() === key);
}

/** Whether the app entry is the application object itself (not only a consented service principal). */
export function isHomeEntry(tenant: Tenant, app: AppRegistration): boolean {
  return app.homeTenantId === undefined || app.homeTenantId.toLowerCase() === tenant.id.toLowerCase();
}

/** The environment whose BAP `name` (GUID) equals `name`, or undefined. */
export function findEnvironment(tenant: Tenant, name: string): Environment | undefined {
  return indexes.environments.get(tenant.environments, name);
}

/** Thrown by `TenantStore.add` when a tenant id or domain is already served. */
export class TenantConflictError extends Error {
  /** @param message which id or domain collided. */
  constructor(message: string) {
    super(message);
    this.name = 'TenantConflictError';
  }
}

/**
 * The set of tenants served at once, keyed by tenant id (GUID, case-insensitive) and by every domain in
 * `tenant.domains` (case-insensitive). Resolution by domain is how `/{domain}/v2.0/.well-known/openid-configuration`
 * maps a domain to a tenant id (https://learn.microsoft.com/entra/identity-platform/v2-protocols-oidc).
 */
export class TenantStore {
  readonly #byId = new Map<string, Tenant>();

  /** @param tenants initial tenants; throws TenantConflictError on duplicate ids or domains. */
  constructor(tenants: Tenant[] = []) {
    for (const t of tenants) this.add(t);
  }

  /** Adds a tenant. Throws TenantConflictError when its id or one of its domains is already served. */
  add(tenant: Tenant): void {
    const id = tenant.id.toLowerCase();
    if (this.#byId.has(id)) throw new TenantConflictError(`tenant ${tenant.id} is already served`);
    for (const d of tenant.domains) {
      const other = this.resolve(d);
      if (other) throw new TenantConflictError(`domain ${d} already belongs to tenant ${other.id}`);
    }
    this.#byId.set(id, tenant);
  }

  /** Removes a tenant by id; returns whether it existed. */
  remove(tenantId: string): boolean {
    return this.#byId.delete(tenantId.toLowerCase());
  }

  /** The tenant with this id (GUID), or undefined. */
  get(tenantId: string): Tenant | undefined {
    return this.#byId.get(tenantId.toLowerCase());
  }

  /** The tenant named by a GUID or by any of its domains (case-insensitive), or undefined. */
  resolve(idOrDomain: string): Tenant | undefined {
    const key = idOrDomain.toLowerCase();
    const byId = this.#byId.get(key);
    if (byId) return byId;
    for (const t of this.#byId.values()) {
      if (t.domains.some((d) => d.toLowerCase() === key)) return t;
    }
    return undefined;
  }

  /**
   * The application object of an app id: the served tenant whose `apps` entry for it is the home entry (see
   * `AppRegistration.homeTenantId`), or undefined. When several tenants hold a home entry, the first served wins.
   */
  findHomeApp(appId: string): { tenant: Tenant; app: AppRegistration } | undefined {
    for (const tenant of this.#byId.values()) {
      const app = findApp(tenant, appId);
      if (app && isHomeEntry(tenant, app)) return { tenant, app };
    }
    return undefined;
  }

  /**
   * The application object behind a tenant's app entry: the entry itself when it is the home entry, else the home
   * tenant's entry (undefined when the home tenant is not served).
   */
  applicationOf(tenant: Tenant, app: AppRegistration): AppRegistration | undefined {
    if (isHomeEntry(tenant, app)) return app;
    const home = this.get(app.homeTenantId as string);
    const entry = home ? findApp(home, app.appId) : undefined;
    return entry && home && isHomeEntry(home, entry) ? entry : undefined;
  }

  /** All served tenants, in insertion order. */
  list(): Tenant[] {
    return [...this.#byId.values()];
  }

  /** Drops every cached index of one tenant's arrays (after direct mutation that replaced ids in place). */
  invalidate(tenant: Tenant): void {
    indexes.users.invalidate(tenant.users);
    indexes.groups.invalidate(tenant.groups);
    indexes.servicePrincipals.invalidate(tenant.servicePrincipals);
    indexes.apps.invalidate(tenant.apps);
    indexes.appsBySp.invalidate(tenant.apps);
    indexes.devices.invalidate(tenant.devices);
    indexes.environments.invalidate(tenant.environments);
    for (const env of tenant.environments) {
      if (!env.dataverse) continue;
      indexes.bots.invalidate(env.dataverse.bots);
      indexes.systemusers.invalidate(env.dataverse.systemusers);
    }
  }
}
