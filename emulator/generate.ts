/**
 * Deterministic generator of realistic tenants, and the ground truth a tester recomputes from the data alone.
 *
 * Same `seed` + same options ⇒ byte-identical tenant. Risky agent settings are placed on EXACTLY
 * `floor(rate × agents)` agents (seeded shuffles), so tests can assert exact counts.
 */
import { generatePowerPlatform } from './powerplatform.ts';
import { agentComponentFacts, generateAgentComponents } from './agentcomponents.ts';
import { generateTranscripts } from './transcripts.ts';
import { generateOrganizationSettings } from './organization.ts';
import { generateAzure } from './arm.ts';
import { generateGovernance } from './bap.ts';
import { generateGraphEstate } from './graphestate.ts';
import { createRng, type Rng } from './prng.ts';
import { generatePowerBiEstate } from './powerbiinventory.ts';
import { generateCopilot } from './copilot.ts';
import {
  DIRECTORY_ROLES,
  DORMANT_DAYS,
  MANAGEMENT_ACTIVITY_PERMISSIONS,
  PERMISSION_SETS,
  POWER_BI_PERMISSIONS,
  RESOURCES,
  SYSTEM_ADMINISTRATOR,
} from './constants.ts';
import {
  AGENT_NAMES,
  COMPANIES,
  DEPARTMENTS,
  ENTERPRISE_APPS,
  ENVIRONMENT_TEMPLATES,
  FIRST_NAMES,
  GROUP_TEMPLATES,
  GUEST_DOMAINS,
  LAST_NAMES,
  OFFICES,
  REGIONS,
} from './names.ts';
import {
  indexes,
  resolveMember,
  type AppRegistration,
  type Bot,
  type Device,
  type DirectoryGroup,
  type DirectoryUser,
  type Environment,
  type ServicePrincipal,
  type SystemUser,
  type Tenant,
} from './tenant.ts';

/** Object counts of a generated tenant. `users` counts members only; guests come on top. */
export interface TenantSizes {
  users: number;
  guests: number;
  groups: number;
  environments: number;
  agents: number;
  /**
   * Upper bound of the random member count of each group but the first ("All Company", every member); absent: up to
   * a tenth of the users (30–1,000). Benchmarks set it to reach a given membership total.
   */
  maxMembersPerGroup?: number;
  /** Power BI workspaces (about a third personal), with their reports, datasets and widely shared links. */
  powerBiWorkspaces: number;
  /** Percentage of enabled members holding a Microsoft 365 Copilot licence (exactly floor(percent × members / 100)). */
  copilotUsersPercent: number;
  /** Copilot prompt + response pairs per licensed user: 1..this many each. */
  copilotPairsPerUser: number;
  /** Power Apps, spread over the environments. */
  apps: number;
  /** Cloud flows, spread over the environments. */
  flows: number;
  /** Custom connectors (every environment also lists the standard ones). */
  connectors: number;
  /** Connections, spread over the environments. */
  connections: number;
  /** Copilot Studio components per agent, about (topics ≈ a third; plus instructions, knowledge, tools, variables). */
  agentComponentsPerAgent: number;
  /** Copilot Studio conversation transcripts per agent (plus five planted ones in one environment). */
  transcriptsPerAgent: number;
  /** Azure subscriptions (the connector holds Reader on each). */
  azureSubscriptions: number;
  /** Cognitive Services accounts (kinds cycle AIServices, OpenAI, AIServices, FormRecognizer). */
  foundryAccounts: number;
  /** Projects per AIServices account. */
  foundryProjects: number;
  /** Up to this many deployments per AIServices/OpenAI account. */
  foundryDeployments: number;
  /** Microsoft Search external connections (Graph `external/connections`). */
  externalConnections: number;
  /** Average Teams apps installed per user (each user gets 0..2× this). */
  teamsAppsPerUser: number;
  /** Apps in the Teams app catalogue (store, organization, sideloaded custom agents). */
  teamsAppCatalog: number;
}

/** Defaults for `GenerateOptions.sizes`. */
export const DEFAULT_SIZES: Readonly<TenantSizes> = {
  users: 50,
  guests: 5,
  groups: 12,
  environments: 4,
  agents: 20,
  powerBiWorkspaces: 6,
  copilotUsersPercent: 20,
  copilotPairsPerUser: 3,
  apps: 10,
  flows: 10,
  connectors: 3,
  connections: 10,
  agentComponentsPerAgent: 6,
  transcriptsPerAgent: 2,
  azureSubscriptions: 2,
  foundryAccounts: 4,
  foundryProjects: 2,
  foundryDeployments: 3,
  externalConnections: 3,
  teamsAppsPerUser: 2,
  teamsAppCatalog: 12,
};

/**
 * Exact shares of agents carrying each risky setting: `floor(rate × agents)` agents each, over ALL agents (readable or
 * not). Definitions (what a tester recomputes):
 * - noAuthentication: `authenticationmode === 1` (None);
 * - accessAny: `accesscontrolpolicy === 0` (Any); at least one agent has both when both sets are non-empty;
 * - ownerDisabled: the owner systemuser's `azureactivedirectoryobjectid` is a directory user with `accountEnabled: false`;
 * - ownerGone: the owner systemuser's `azureactivedirectoryobjectid` is not a directory user (disjoint from ownerDisabled);
 * - dormant: `modifiedon` and `publishedon` both older than `DORMANT_DAYS` (180) days before `now`; all other agents
 *   have both newer than that.
 */
export const AGENT_RISK_RATES = {
  noAuthentication: 0.2,
  accessAny: 0.3,
  ownerDisabled: 0.1,
  ownerGone: 0.05,
  dormant: 0.15,
} as const;

/** Options of `generateTenant`. */
export interface GenerateOptions {
  /** Seed of every random choice. */
  seed: number | string;
  /** Object counts; missing entries take `DEFAULT_SIZES`. */
  sizes?: Partial<TenantSizes>;
  /** ISO instant the dates are relative to (default: current time). Stored as `tenant.referenceTime`. */
  now?: string;
  /**
   * Application permissions granted (admin-consented) to the connector app: the seed's `quick` or `step-by-step`
   * list, `documented` (the quick list without Power BI permissions, as Microsoft documents for the read-only admin
   * APIs), or explicit names. A bare name goes to Graph unless it is a Management Activity (`ActivityFeed.*`,
   * `ServiceHealth.Read`) or Power BI (`Tenant.Read*`) permission; `"{resource}/{permission}"` names the resource.
   * Default `quick`.
   */
  permissions?: 'quick' | 'step-by-step' | 'documented' | string[];
  /** Whether the connector app is registered as a Power Platform management app (default true). */
  managementApp?: boolean;
  /**
   * How many Dataverse environments have NO application user for the connector (default 1 when there are 3+
   * environments, else 0). Taken from the non-default Dataverse environments, last first, then the default one.
   * Throws RangeError above the number of Dataverse environments.
   */
  environmentsWithoutAccess?: number;
  /** Company display name (default: picked from the seed). */
  displayName?: string;
  /** Primary domain (default `{company}{4 digits}.onmicrosoft.com`). */
  domain?: string;
  /** Display name of the connector app (default "Vigil Connector"). */
  connectorName?: string;
  /** End of the connector secret (ISO; default 24 months after `now`). */
  secretEndDateTime?: string;
  /**
   * Plant five Copilot Studio conversations in the first readable environment with transcripts: a secret and a payment
   * card sent by users, a jailbreak attempt, a tool output carrying injected instructions, and a benign near miss
   * (`transcripts.ts`). Off by default, so the alerts of other tests' tenants stay what they were. @default false
   */
  plantedTranscripts?: boolean;
}

const DAY_MS = 86_400_000;
const SECRET_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.~-';
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';

/**
 * A client secret value shaped like Entra's current format: 3 characters, a digit, `Q~`, 34 characters (40 total).
 * @param rng the seeded source.
 */
export function secretValue(rng: Rng): string {
  return `${rng.chars(3, ALNUM)}${rng.int(0, 9)}Q~${rng.chars(34, SECRET_ALPHABET)}`;
}

/**
 * Resolves a permissions option to `grantedRoles` (resource → permission names).
 * Throws TypeError for an unknown preset name.
 */
export function permissionsToGrantedRoles(permissions: 'quick' | 'step-by-step' | 'documented' | string[]): Record<string, string[]> {
  if (typeof permissions === 'string') {
    const preset = PERMISSION_SETS[permissions];
    if (!preset) throw new TypeError(`unknown permission preset ${String(permissions)}`);
    return Object.fromEntries(Object.entries(preset).map(([r, p]) => [r, [...p]]));
  }
  const out: Record<string, string[]> = {};
  for (const name of permissions) {
    let resource: string;
    let perm: string;
    const slash = name.lastIndexOf('/');
    if (name.includes('://') && slash > name.indexOf('://') + 2) {
      resource = name.slice(0, slash).replace(/\/+$/, '');
      perm = name.slice(slash + 1);
    } else if (MANAGEMENT_ACTIVITY_PERMISSIONS.includes(name)) {
      resource = RESOURCES.managementActivity;
      perm = name;
    } else if (POWER_BI_PERMISSIONS.includes(name)) {
      resource = RESOURCES.powerBi;
      perm = name;
    } else {
      resource = RESOURCES.graph;
      perm = name;
    }
    const list = (out[resource] ??= []);
    if (!list.includes(perm)) list.push(perm);
  }
  return out;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]/g, '');
}

function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.getTime();
}

/** Distinct random indices in [0, n), k of them (k ≤ n). Rejection sampling, fine for k ≪ n and for k close to n. */
function sampleIndices(rng: Rng, n: number, k: number): number[] {
  if (k >= n) return rng.shuffle(Array.from({ length: n }, (_, i) => i));
  if (k > n / 2) return rng.shuffle(Array.from({ length: n }, (_, i) => i)).slice(0, k);
  const seen = new Set<number>();
  const out: number[] = [];
  while (out.length < k) {
    const i = Math.floor(rng.next() * n);
    if (!seen.has(i)) {
      seen.add(i);
      out.push(i);
    }
  }
  return out;
}

interface PersonName {
  first: string;
  last: string;
}

/**
 * Generates one tenant. Deterministic from `options.seed` and the other options.
 *
 * Content: `sizes.users` members (the first is an IT administrator) and `sizes.guests` guests; groups (the first is
 * "All Company" with every member; others mix users, guests, nested groups, enterprise-app service principals and
 * devices); one connector app ("Vigil Connector") with one secret (endDateTime 24 months after `now`), the chosen
 * permissions and management-app registration; environments (the first is the Default one; with 3+ environments the
 * last one has no Dataverse; `environmentsWithoutAccess` Dataverse environments have no application user for the
 * connector); agents spread round-robin over the Dataverse environments with the exact risk rates of
 * `AGENT_RISK_RATES`. Each Dataverse environment has systemusers: makers (directory users), SYSTEM, agent owners that
 * left the directory, and the connector's application user (System Administrator) where it has access.
 * Sign-in accounts (passwords; see `tenantAccounts`): the IT administrator is Global Administrator, and the next three
 * enabled members are a Power Platform Administrator, an MFA-required user and an ordinary user.
 *
 * Throws RangeError when sizes are negative, when agents > 0 but no environment has Dataverse, or when agents need
 * owners but there are not enough member users.
 */
export function generateTenant(options: GenerateOptions): Tenant {
  const sizes: TenantSizes = { ...DEFAULT_SIZES, ...options.sizes };
  for (const [k, v] of Object.entries(sizes)) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`sizes.${k} must be a non-negative integer, got ${String(v)}`);
  }
  const nowMs = options.now ? Date.parse(options.now) : Date.now();
  if (Number.isNaN(nowMs)) throw new RangeError(`now is not an ISO date: ${String(options.now)}`);
  const rng = createRng(options.seed);

  // --- tenant identity -------------------------------------------------------------------------------------------
  const tenantId = rng.guid();
  const company = options.displayName ?? rng.pick(COMPANIES);
  const companySlug = slug(company) || 'tenant';
  const domain = (options.domain ?? `${companySlug}${rng.int(1000, 9999)}.onmicrosoft.com`).toLowerCase();

  // --- users -----------------------------------------------------------------------------------------------------
  const usedLocalParts = new Map<string, number>();
  const uniqueLocal = (base: string): string => {
    const n = usedLocalParts.get(base) ?? 0;
    usedLocalParts.set(base, n + 1);
    return n === 0 ? base : `${base}${n + 1}`;
  };
  const pickName = (): PersonName => ({ first: rng.pick(FIRST_NAMES), last: rng.pick(LAST_NAMES) });
  const departments = Object.keys(DEPARTMENTS);

  const users: DirectoryUser[] = [];
  for (let i = 0; i < sizes.users; i++) {
    const { first, last } = pickName();
    const local = uniqueLocal(`${slug(first)}.${slug(last)}`);
    const upn = `${local}@${domain}`;
    const department = i === 0 ? 'IT' : rng.pick(departments);
    const titles = DEPARTMENTS[department] ?? ['Employee'];
    users.push({
      id: rng.guid(),
      displayName: `${first} ${last}`,
      givenName: first,
      surname: last,
      userPrincipalName: upn,
      mail: rng.chance(0.92) ? upn : null,
      jobTitle: i === 0 ? 'IT Administrator' : rng.pick(titles),
      department,
      accountEnabled: true,
      userType: 'Member',
      createdDateTime: iso(nowMs - rng.int(30, 5 * 365) * DAY_MS - rng.int(0, 86_399) * 1000),
      businessPhones: rng.chance(0.7) ? [`+1 425 555 0${rng.int(100, 199)}`] : [],
      mobilePhone: rng.chance(0.4) ? `+1 206 555 0${rng.int(100, 199)}` : null,
      officeLocation: rng.pick(OFFICES),
      preferredLanguage: 'en-US',
    });
  }
  const memberCount = users.length;
  const usedGuestEmails = new Map<string, number>();
  for (let i = 0; i < sizes.guests; i++) {
    const { first, last } = pickName();
    const ext = rng.pick(GUEST_DOMAINS);
    const guestBase = `${slug(first)}.${slug(last)}`;
    const seenGuest = usedGuestEmails.get(`${guestBase}@${ext}`) ?? 0;
    usedGuestEmails.set(`${guestBase}@${ext}`, seenGuest + 1);
    const email = seenGuest === 0 ? `${guestBase}@${ext}` : `${guestBase}${seenGuest + 1}@${ext}`;
    const named = rng.chance(0.5);
    users.push({
      id: rng.guid(),
      displayName: `${first} ${last}`,
      givenName: named ? first : null,
      surname: named ? last : null,
      userPrincipalName: `${email.replace('@', '_')}#EXT#@${domain}`,
      mail: email,
      jobTitle: null,
      department: null,
      accountEnabled: true,
      userType: 'Guest',
      createdDateTime: iso(nowMs - rng.int(1, 3 * 365) * DAY_MS - rng.int(0, 86_399) * 1000),
      businessPhones: [],
      mobilePhone: null,
      officeLocation: null,
      preferredLanguage: null,
    });
  }

  // --- enterprise apps and devices (group members of the other kinds) --------------------------------------------
  const servicePrincipals: ServicePrincipal[] = ENTERPRISE_APPS.slice(0, Math.min(ENTERPRISE_APPS.length, 3 + Math.floor(sizes.groups / 4))).map((name) => ({
    id: rng.guid(),
    appId: rng.guid(),
    displayName: name,
    servicePrincipalType: 'Application' as const,
  }));
  const deviceCount = Math.min(200, Math.max(3, Math.floor(sizes.users / 20)));
  const devices: Device[] = [];
  for (let i = 0; i < deviceCount; i++) {
    const kind = rng.pick(['Windows', 'Windows', 'Windows', 'iOS', 'Android', 'MacMDM'] as const);
    const prefix = kind === 'Windows' ? rng.pick(['DESKTOP', 'LAPTOP']) : kind === 'MacMDM' ? 'MAC' : kind.toUpperCase();
    devices.push({
      id: rng.guid(),
      deviceId: rng.guid(),
      displayName: `${prefix}-${rng.chars(7, '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ')}`,
      operatingSystem: kind,
      operatingSystemVersion:
        kind === 'Windows' ? `10.0.${rng.pick(['19045', '22621', '22631', '26100'])}.${rng.int(1000, 5000)}` : `${rng.int(13, 18)}.${rng.int(0, 6)}`,
      accountEnabled: true,
    });
  }

  // --- groups ----------------------------------------------------------------------------------------------------
  const groups: DirectoryGroup[] = [];
  const usedGroupNames = new Map<string, number>();
  for (let i = 0; i < sizes.groups; i++) {
    let template: { name: string; unified: boolean; description: string };
    if (i === 0) template = { name: 'All Company', unified: true, description: 'Everyone in the organization' };
    else if (i - 1 < GROUP_TEMPLATES.length) template = GROUP_TEMPLATES[i - 1] as (typeof GROUP_TEMPLATES)[number];
    else {
      const dept = rng.pick(departments);
      const unified = rng.chance(0.6);
      template = { name: `${dept} ${rng.pick(['Project', 'Workgroup', 'Committee', 'Squad', 'Access'])}`, unified, description: `${dept} collaboration` };
    }
    const seen = usedGroupNames.get(template.name) ?? 0;
    usedGroupNames.set(template.name, seen + 1);
    const displayName = seen === 0 ? template.name : `${template.name} ${seen + 1}`;
    const nick = slug(displayName) || `group${i}`;
    groups.push({
      id: rng.guid(),
      displayName,
      description: template.description,
      mail: template.unified ? `${nick}@${domain}` : null,
      mailNickname: nick,
      mailEnabled: template.unified,
      securityEnabled: !template.unified,
      groupTypes: template.unified ? ['Unified'] : [],
      visibility: template.unified ? (i === 0 ? 'Public' : rng.pick(['Public', 'Private'] as const)) : null,
      createdDateTime: iso(nowMs - rng.int(10, 4 * 365) * DAY_MS - rng.int(0, 86_399) * 1000),
    });
  }
  const memberships: Record<string, string[]> = {};
  groups.forEach((g, i) => {
    const ids: string[] = [];
    if (i === 0) {
      for (let u = 0; u < memberCount; u++) ids.push((users[u] as DirectoryUser).id);
    } else if (users.length > 0) {
      const maxK = Math.max(2, Math.min(users.length, sizes.maxMembersPerGroup ?? Math.max(30, Math.min(1000, Math.floor(users.length / 10)))));
      const k = Math.min(users.length, rng.int(2, maxK));
      for (const u of sampleIndices(rng, users.length, k)) ids.push((users[u] as DirectoryUser).id);
    }
    if (i > 0 && i < groups.length - 1 && rng.chance(0.3)) ids.push((groups[rng.int(i + 1, groups.length - 1)] as DirectoryGroup).id);
    if (i > 0 && servicePrincipals.length > 0 && rng.chance(0.2)) ids.push(rng.pick(servicePrincipals).id);
    if (g.displayName.startsWith('Intune Managed Devices')) {
      for (const d of sampleIndices(rng, devices.length, Math.min(devices.length, rng.int(2, 10)))) ids.push((devices[d] as Device).id);
    } else if (i > 0 && rng.chance(0.1)) {
      ids.push(rng.pick(devices).id);
    }
    memberships[g.id] = ids;
  });

  // --- connector app -----------------------------------------------------------------------------------------------
  const secret = secretValue(rng);
  const connector: AppRegistration = {
    appId: rng.guid(),
    displayName: options.connectorName ?? 'Vigil Connector',
    servicePrincipalObjectId: rng.guid(),
    secrets: [
      {
        keyId: rng.guid(),
        displayName: 'Vigil',
        hint: secret.slice(0, 3),
        value: secret,
        startDateTime: iso(nowMs),
        endDateTime: options.secretEndDateTime ?? iso(addMonths(nowMs, 24)),
      },
    ],
    grantedRoles: permissionsToGrantedRoles(options.permissions ?? 'quick'),
    isManagementApp: options.managementApp ?? true,
  };

  // --- environments ------------------------------------------------------------------------------------------------
  const envCount = sizes.environments;
  const noDataverseIndex = envCount >= 3 ? envCount - 1 : -1;
  const environments: Environment[] = [];
  const admin = users[0];
  for (let i = 0; i < envCount; i++) {
    const region = i === 0 ? (REGIONS[0] as (typeof REGIONS)[number]) : rng.pick(REGIONS);
    let displayName: string;
    let sku: Environment['environmentSku'];
    if (i === 0) {
      displayName = `${company} (default)`;
      sku = 'Default';
    } else if (i - 1 < ENVIRONMENT_TEMPLATES.length) {
      const t = ENVIRONMENT_TEMPLATES[i - 1] as (typeof ENVIRONMENT_TEMPLATES)[number];
      displayName = t.name;
      sku = t.sku;
    } else {
      sku = rng.pick(['Production', 'Sandbox', 'Developer'] as const);
      displayName = `${rng.pick(departments)} ${sku} ${i}`;
    }
    const creator =
      i === 0 || !admin ? { id: 'SYSTEM', displayName: 'SYSTEM', type: 'NotSpecified' } : { id: admin.id, displayName: admin.displayName, type: 'User' };
    const name = i === 0 ? `Default-${tenantId}` : rng.guid();
    const hasDataverse = i !== noDataverseIndex;
    environments.push({
      name,
      displayName,
      location: region.location,
      azureRegion: rng.pick(region.azureRegions),
      environmentSku: sku,
      isDefault: i === 0,
      createdTime: iso(nowMs - (i === 0 ? rng.int(1000, 2000) : rng.int(60, 900)) * DAY_MS - rng.int(0, 86_399) * 1000),
      createdBy: creator,
      provisioningState: 'Succeeded',
      states: { management: { id: 'NotSpecified' }, runtime: { id: 'Enabled' } },
      dataverse: hasDataverse
        ? {
            uniqueName: `unq${rng.chars(16, HEX)}`,
            domainName: i === 0 ? `org${rng.chars(8, HEX)}` : `${companySlug}-${slug(displayName)}`,
            version: `9.2.${rng.pick(['24101', '24104', '24113', '25011', '25023'])}.${String(rng.int(100, 250)).padStart(5, '0')}`,
            instanceState: 'Ready',
            businessUnitId: rng.guid(),
            appUsers: [],
            systemusers: [
              {
                systemuserid: rng.guid(),
                fullname: 'SYSTEM',
                domainname: '',
                internalemailaddress: null,
                azureactivedirectoryobjectid: null,
                applicationid: null,
                isdisabled: false,
                accessmode: 0,
              },
            ],
            bots: [],
          }
        : null,
    });
  }
  const dvEnvs = environments.filter((e) => e.dataverse !== null);
  const withoutAccess = options.environmentsWithoutAccess ?? (envCount >= 3 ? 1 : 0);
  if (!Number.isInteger(withoutAccess) || withoutAccess < 0 || withoutAccess > dvEnvs.length) {
    throw new RangeError(`environmentsWithoutAccess must be between 0 and ${dvEnvs.length}, got ${String(withoutAccess)}`);
  }
  const accessOrder = [...dvEnvs.filter((e) => !e.isDefault).reverse(), ...dvEnvs.filter((e) => e.isDefault)];
  const noAccess = new Set(accessOrder.slice(0, withoutAccess).map((e) => e.name));

  generateGovernance(environments, options.seed);

  // --- agents: risk sets ---------------------------------------------------------------------------------------------
  const agentCount = sizes.agents;
  if (agentCount > 0 && dvEnvs.length === 0) throw new RangeError('agents need at least one environment with Dataverse');
  const all = Array.from({ length: agentCount }, (_, i) => i);
  const take = (rate: number, order: number[]): Set<number> => new Set(order.slice(0, Math.floor(rate * agentCount)));
  const noAuth = take(AGENT_RISK_RATES.noAuthentication, rng.shuffle(all));
  const accessAnyOrder = rng.shuffle(all);
  const accessAny = take(AGENT_RISK_RATES.accessAny, accessAnyOrder);
  if (noAuth.size > 0 && accessAny.size > 0 && ![...accessAny].some((i) => noAuth.has(i))) {
    // Guarantee the documented overlap without changing either set's size.
    const last = accessAnyOrder[accessAny.size - 1] as number;
    accessAny.delete(last);
    accessAny.add([...noAuth][0] as number);
  }
  const ownerOrder = rng.shuffle(all);
  const disabledCount = Math.floor(AGENT_RISK_RATES.ownerDisabled * agentCount);
  const goneCount = Math.floor(AGENT_RISK_RATES.ownerGone * agentCount);
  const ownerDisabled = new Set(ownerOrder.slice(0, disabledCount));
  const ownerGone = new Set(ownerOrder.slice(disabledCount, disabledCount + goneCount));
  const dormant = take(AGENT_RISK_RATES.dormant, rng.shuffle(all));

  // --- makers: enabled and disabled pools from member users --------------------------------------------------------
  const liveOwnedCount = agentCount - disabledCount - goneCount;
  const disabledPoolSize = disabledCount > 0 ? Math.max(1, Math.ceil(disabledCount / 3)) : 0;
  const wantedEnabled = Math.max(liveOwnedCount > 0 ? 1 : 0, Math.min(200, Math.ceil(Math.max(liveOwnedCount, 6) / 2)));
  const candidates = memberCount > 1 ? Array.from({ length: memberCount - 1 }, (_, i) => i + 1) : [];
  const enabledPoolSize = Math.min(wantedEnabled, candidates.length - disabledPoolSize);
  if (disabledPoolSize + (liveOwnedCount > 0 ? 1 : 0) > candidates.length) {
    throw new RangeError(`agents need at least ${disabledPoolSize + 2} member users (owners), got ${memberCount}`);
  }
  const makerOrder = rng.shuffle(candidates);
  const disabledPool = makerOrder.slice(0, disabledPoolSize).map((i) => users[i] as DirectoryUser);
  const enabledPool = makerOrder.slice(disabledPoolSize, disabledPoolSize + Math.max(0, enabledPoolSize)).map((i) => users[i] as DirectoryUser);
  for (const u of disabledPool) u.accountEnabled = false;
  // A few other directory users are disabled too (leavers); never a maker from the enabled pool or the admin.
  const makerIds = new Set([...disabledPool, ...enabledPool].map((u) => u.id));
  for (let i = 1; i < memberCount; i++) {
    const u = users[i] as DirectoryUser;
    if (!makerIds.has(u.id) && rng.chance(0.03)) u.accountEnabled = false;
  }

  const systemUserFor = new Map<string, Map<string, SystemUser>>(); // env name → directory user id → systemuser
  const ensureSystemUser = (env: Environment, user: DirectoryUser): SystemUser => {
    let perEnv = systemUserFor.get(env.name);
    if (!perEnv) systemUserFor.set(env.name, (perEnv = new Map()));
    const existing = perEnv.get(user.id);
    if (existing) return existing;
    const su: SystemUser = {
      systemuserid: rng.guid(),
      fullname: user.displayName,
      domainname: user.userPrincipalName,
      internalemailaddress: user.mail ?? user.userPrincipalName,
      azureactivedirectoryobjectid: user.id,
      applicationid: null,
      isdisabled: !user.accountEnabled,
      accessmode: 0,
    };
    env.dataverse?.systemusers.push(su);
    perEnv.set(user.id, su);
    return su;
  };
  // Makers present in every Dataverse environment (some never own an agent) — realism for systemusers.
  for (const env of dvEnvs) {
    if (admin) ensureSystemUser(env, admin);
    const pool = [...enabledPool, ...disabledPool];
    if (pool.length > 0) for (const i of sampleIndices(rng, pool.length, Math.min(pool.length, rng.int(1, 4)))) ensureSystemUser(env, pool[i] as DirectoryUser);
  }

  // --- agents ------------------------------------------------------------------------------------------------------
  const usedAgentNames = new Map<string, number>();
  const securityGroups = groups.filter((g) => g.securityEnabled);
  const publisherPrefix = `cr${rng.chars(3, HEX)}`;
  for (let i = 0; i < agentCount; i++) {
    const env = dvEnvs[i % dvEnvs.length] as Environment;
    const org = env.dataverse;
    if (!org) continue;
    const base = rng.pick(AGENT_NAMES);
    const n = usedAgentNames.get(base) ?? 0;
    usedAgentNames.set(base, n + 1);
    const name = n === 0 ? base : `${base} ${n + 1}`;
    const camel = name
      .replace(/[^A-Za-z0-9 ]/g, '')
      .split(' ')
      .filter(Boolean)
      .map((w, j) => (j === 0 ? w.toLowerCase() : (w[0] ?? '').toUpperCase() + w.slice(1)))
      .join('');

    let owner: SystemUser;
    if (ownerGone.has(i)) {
      const { first, last } = pickName();
      const upn = `${uniqueLocal(`${slug(first)}.${slug(last)}`)}@${domain}`;
      owner = {
        systemuserid: rng.guid(),
        fullname: `${first} ${last}`,
        domainname: upn,
        internalemailaddress: upn,
        azureactivedirectoryobjectid: rng.guid(),
        applicationid: null,
        isdisabled: true,
        accessmode: 0,
      };
      org.systemusers.push(owner);
    } else if (ownerDisabled.has(i)) {
      owner = ensureSystemUser(env, rng.pick(disabledPool));
    } else {
      owner = ensureSystemUser(env, rng.pick(enabledPool));
    }

    let modified: number;
    let published: number;
    if (dormant.has(i)) {
      modified = nowMs - rng.int(DORMANT_DAYS + 1, DORMANT_DAYS + 720) * DAY_MS - rng.int(0, 86_399) * 1000;
      published = modified - rng.int(0, 3 * 86_400) * 1000;
    } else {
      modified = nowMs - rng.int(1, DORMANT_DAYS - 10) * DAY_MS - rng.int(0, 86_399) * 1000;
      published = modified - rng.int(0, 2 * 86_400) * 1000;
    }
    const created = published - rng.int(1, 600) * DAY_MS - rng.int(0, 86_399) * 1000;

    const authenticationmode = noAuth.has(i) ? 1 : rng.pick([2, 2, 2, 3, 4]);
    let accesscontrolpolicy = accessAny.has(i) ? 0 : rng.pick([1, 2]);
    let authorizedsecuritygroupids: string | null = null;
    if (accesscontrolpolicy === 2) {
      if (securityGroups.length === 0) accesscontrolpolicy = 1;
      else {
        const k = Math.min(securityGroups.length, rng.int(1, 3));
        authorizedsecuritygroupids = sampleIndices(rng, securityGroups.length, k)
          .map((j) => (securityGroups[j] as DirectoryGroup).id)
          .join(',');
      }
    }
    const schemaname = `${publisherPrefix}_${camel || 'agent'}${n === 0 ? '' : String(n + 1)}`;
    const bot: Bot = {
      botid: rng.guid(),
      name,
      schemaname,
      authenticationmode,
      authenticationtrigger: authenticationmode === 1 ? 0 : rng.pick([0, 1]),
      accesscontrolpolicy,
      authorizedsecuritygroupids,
      publishedon: iso(published),
      _publishedby_value: owner.systemuserid,
      _ownerid_value: owner.systemuserid,
      owneridtype: 'systemuser',
      statecode: 0,
      statuscode: 1,
      language: 1033,
      runtimeprovider: 0,
      template: rng.pick(['default-2.1.0', 'default-2.2.0', 'AgentFromScratch-1.0.0']),
      createdon: iso(created),
      modifiedon: iso(modified),
      configuration: JSON.stringify({
        $kind: 'BotConfiguration',
        settings: { GenerativeActionsEnabled: rng.chance(0.7) },
        isAgentConnectable: rng.chance(0.5),
        gPTSettings: { $kind: 'GPTSettings', defaultSchemaName: `${schemaname}.gpt.default` },
        aISettings: {
          $kind: 'AISettings',
          useModelKnowledge: rng.chance(0.6),
          isFileAnalysisEnabled: rng.chance(0.5),
          isSemanticSearchEnabled: true,
          optInUseLatestModels: false,
        },
        recognizer: { $kind: rng.pick(['GenerativeAIRecognizer', 'CopilotRecognizer']) },
      }),
    };
    org.bots.push(bot);
  }

  // --- connector application users ---------------------------------------------------------------------------------
  for (const env of dvEnvs) {
    if (noAccess.has(env.name) || !env.dataverse) continue;
    const su: SystemUser = {
      systemuserid: rng.guid(),
      fullname: `# ${connector.displayName}`,
      domainname: `${connector.appId}@${domain}`,
      internalemailaddress: `${connector.appId}@${domain}`,
      azureactivedirectoryobjectid: connector.servicePrincipalObjectId,
      applicationid: connector.appId,
      isdisabled: false,
      accessmode: 4,
    };
    env.dataverse.systemusers.push(su);
    env.dataverse.appUsers.push({ appId: connector.appId, systemuserid: su.systemuserid, roles: [SYSTEM_ADMINISTRATOR] });
  }

  assignAccounts(users.slice(0, memberCount), options.seed);
  generateAgentComponents({ seed: options.seed, environments, domain, nowMs, perAgent: sizes.agentComponentsPerAgent });
  generateTranscripts({
    seed: options.seed,
    environments,
    tenantId,
    userObjectIds: users.slice(0, memberCount).map((u) => u.id),
    connectorAppId: connector.appId,
    nowMs,
    perAgent: sizes.transcriptsPerAgent,
    planted: options.plantedTranscripts ?? false,
  });

  return {
    id: tenantId,
    displayName: company,
    domains: [domain],
    users,
    groups,
    memberships,
    servicePrincipals,
    devices,
    apps: [connector],
    environments,
    referenceTime: iso(nowMs),
    connectorAppId: connector.appId,
    graphEstate: generateGraphEstate({ users, apps: [connector], referenceTime: iso(nowMs) }, sizes, options.seed),
    powerBi: generatePowerBiEstate({ seed: options.seed, workspaces: sizes.powerBiWorkspaces, nowMs, users, domain }),
    powerPlatform: generatePowerPlatform(
      { users, groups, environments, domains: [domain] },
      { apps: sizes.apps, flows: sizes.flows, connectors: sizes.connectors, connections: sizes.connections },
      options.seed,
      nowMs,
    ),
    copilot: generateCopilot(users, tenantId, sizes, options.seed, nowMs),
    organizationSettings: generateOrganizationSettings(environments, options.seed),
    azure: generateAzure({
      seed: options.seed,
      principalId: connector.servicePrincipalObjectId,
      subscriptions: sizes.azureSubscriptions,
      accounts: sizes.foundryAccounts,
      projectsPerAccount: sizes.foundryProjects,
      deploymentsPerAccount: sizes.foundryDeployments,
    }),
  };
}

/**
 * Gives a generated tenant its sign-in accounts, from a generator separate from the tenant's (so adding them changed no
 * other generated value): the first member (the IT administrator) becomes Global Administrator; the next three
 * enabled members become a Power Platform Administrator, a user with `mfaRequired`, and an ordinary user without
 * roles. Each gets a password. With fewer members, the later accounts are skipped.
 */
function assignAccounts(members: DirectoryUser[], seed: number | string): void {
  const rng = createRng(`${String(seed)}:accounts`);
  const password = (): string => `${rng.chars(4, 'ABCDEFGHJKLMNPQRSTUVWXYZ')}${rng.chars(10, ALNUM)}!${rng.int(10, 99)}`;
  const [first, ...rest] = members;
  if (!first) return;
  first.password = password();
  first.directoryRoles = [DIRECTORY_ROLES.globalAdministrator];
  const [ppa, mfa, ordinary] = rest.filter((u) => u.accountEnabled);
  if (ppa) {
    ppa.password = password();
    ppa.directoryRoles = [DIRECTORY_ROLES.powerPlatformAdministrator];
  }
  if (mfa) {
    mfa.password = password();
    mfa.mfaRequired = true;
  }
  if (ordinary) ordinary.password = password();
}

/** A user who can sign in with a password: what a test types into the password grant. */
export interface SignInAccount {
  /** Directory object id (the token's `oid`). */
  id: string;
  userPrincipalName: string;
  password: string;
}

/** The sign-in accounts of a tenant (see `tenantAccounts`); a field is undefined when the tenant has no such user. */
export interface TenantAccounts {
  /** Holds the Global Administrator role. */
  globalAdmin: SignInAccount | undefined;
  /** Holds the Power Platform Administrator role (and not Global Administrator). */
  powerPlatformAdmin: SignInAccount | undefined;
  /** `mfaRequired`: the password grant answers AADSTS50076. */
  mfaUser: SignInAccount | undefined;
  /** An enabled member with a password, no directory roles and no sign-in restriction. */
  ordinaryUser: SignInAccount | undefined;
}

/**
 * Finds the sign-in accounts of a tenant from its data: the first user with a password matching each description.
 * For a generated tenant with 4+ members, every field is set (see `generateTenant`).
 */
export function tenantAccounts(tenant: Tenant): TenantAccounts {
  const withPassword = tenant.users.filter((u): u is DirectoryUser & { password: string } => typeof u.password === 'string' && u.accountEnabled);
  const account = (u: (DirectoryUser & { password: string }) | undefined): SignInAccount | undefined =>
    u ? { id: u.id, userPrincipalName: u.userPrincipalName, password: u.password } : undefined;
  const roles = (u: DirectoryUser): string[] => u.directoryRoles ?? [];
  const restricted = (u: DirectoryUser): boolean => Boolean(u.mfaRequired || u.mfaRegistrationRequired || u.conditionalAccessBlocked);
  return {
    globalAdmin: account(withPassword.find((u) => roles(u).includes(DIRECTORY_ROLES.globalAdministrator) && !restricted(u))),
    powerPlatformAdmin: account(
      withPassword.find(
        (u) => roles(u).includes(DIRECTORY_ROLES.powerPlatformAdministrator) && !roles(u).includes(DIRECTORY_ROLES.globalAdministrator) && !restricted(u),
      ),
    ),
    mfaUser: account(withPassword.find((u) => u.mfaRequired === true)),
    ordinaryUser: account(withPassword.find((u) => u.userType === 'Member' && roles(u).length === 0 && !restricted(u))),
  };
}

/** Risk flags of one agent, as defined in `AGENT_RISK_RATES`. */
export interface AgentRiskFlags {
  noAuthentication: boolean;
  accessAny: boolean;
  ownerDisabled: boolean;
  ownerGone: boolean;
  dormant: boolean;
}

/** Counts of agents per risk (plus the overlap of noAuthentication and accessAny). */
export interface AgentRiskCounts {
  noAuthentication: number;
  accessAny: number;
  noAuthenticationAndAccessAny: number;
  ownerDisabled: number;
  ownerGone: number;
  dormant: number;
}

/**
 * Computes an agent's risk flags from the data alone (the definitions of `AGENT_RISK_RATES`).
 * A missing owner systemuser counts as ownerGone; a null `publishedon` counts as old for dormancy.
 * @param nowMs the reference instant in epoch milliseconds.
 */
export function agentRiskFlags(tenant: Tenant, env: Environment, bot: Bot, nowMs: number): AgentRiskFlags {
  const owner = env.dataverse ? indexes.systemusers.get(env.dataverse.systemusers, bot._ownerid_value) : undefined;
  const aad = owner?.azureactivedirectoryobjectid ?? null;
  const user = aad ? indexes.users.get(tenant.users, aad) : undefined;
  const cutoff = nowMs - DORMANT_DAYS * DAY_MS;
  const modified = Date.parse(bot.modifiedon);
  const published = bot.publishedon ? Date.parse(bot.publishedon) : -Infinity;
  return {
    noAuthentication: bot.authenticationmode === 1,
    accessAny: bot.accesscontrolpolicy === 0,
    ownerDisabled: user !== undefined && !user.accountEnabled,
    ownerGone: owner === undefined || (aad !== null && user === undefined),
    dormant: modified < cutoff && published < cutoff,
  };
}

/** What a complete, correct collection of the tenant must find. See `groundTruth`. */
export interface GroundTruth {
  /** Members + guests. */
  users: number;
  members: number;
  guests: number;
  disabledUsers: number;
  groups: number;
  /** Member rows over all groups that resolve to an existing object (what Graph returns). */
  memberships: number;
  membershipsByKind: { user: number; group: number; servicePrincipal: number; device: number };
  environments: number;
  dataverseEnvironments: number;
  /** Dataverse environments where the connector is an application user with System Administrator. */
  readableEnvironments: number;
  unreadableEnvironments: number;
  /** Bots in readable environments. */
  agents: number;
  /** Bots in Dataverse environments the connector cannot read. */
  agentsUnreadable: number;
  agentsAll: number;
  /** Systemusers in readable environments. */
  systemusers: number;
  /** Risk counts over readable agents. */
  risks: AgentRiskCounts;
  /** Risk counts over all agents (these equal floor(rate × agentsAll) for a generated tenant). */
  risksAll: AgentRiskCounts;
  /** The app the readability was computed for, and whether it is a registered management app. */
  appId: string | null;
  managementApp: boolean;
  /**
   * Per readable agent (bot id), the risky facts it carries: the risk flags that hold (`AgentRiskFlags` names), plus
   * `signInNotRequired` (authenticated, `authenticationtrigger` 0 "As needed"), `multitenant` (`accesscontrolpolicy`
   * 3), `guestOwner` (the owner is a directory guest), `generativeWithoutInstructions` (generative orchestration on, no
   * instructions) and the facts of its components (`agentComponentFacts`, less `noInstructions`). Sorted names.
   */
  agentFacts: Record<string, string[]>;
}

/**
 * Recomputes the expected collection results from the tenant data alone.
 * @param options.appId the connector (default `tenant.connectorAppId`, else the first app);
 * @param options.now reference instant for dormancy (ISO; default `tenant.referenceTime`, else the current time).
 */
export function groundTruth(tenant: Tenant, options: { appId?: string; now?: string } = {}): GroundTruth {
  const appId = options.appId ?? tenant.connectorAppId ?? tenant.apps[0]?.appId ?? null;
  const nowMs = Date.parse(options.now ?? tenant.referenceTime ?? new Date().toISOString());
  const members = tenant.users.filter((u) => u.userType === 'Member').length;
  const byKind = { user: 0, group: 0, servicePrincipal: 0, device: 0 };
  let memberships = 0;
  for (const g of tenant.groups) {
    for (const id of tenant.memberships[g.id] ?? []) {
      const m = resolveMember(tenant, id);
      if (!m) continue;
      memberships++;
      byKind[m.kind]++;
    }
  }
  const zero = (): AgentRiskCounts => ({ noAuthentication: 0, accessAny: 0, noAuthenticationAndAccessAny: 0, ownerDisabled: 0, ownerGone: 0, dormant: 0 });
  const risks = zero();
  const risksAll = zero();
  let readable = 0;
  let dataverse = 0;
  let agents = 0;
  let agentsUnreadable = 0;
  let systemusers = 0;
  const agentFacts: Record<string, string[]> = {};
  for (const env of tenant.environments) {
    if (!env.dataverse) continue;
    dataverse++;
    const canRead = appId !== null && env.dataverse.appUsers.some((a) => a.appId === appId && a.roles.includes(SYSTEM_ADMINISTRATOR));
    if (canRead) {
      readable++;
      agents += env.dataverse.bots.length;
      systemusers += env.dataverse.systemusers.length;
    } else {
      agentsUnreadable += env.dataverse.bots.length;
    }
    for (const bot of env.dataverse.bots) {
      const f = agentRiskFlags(tenant, env, bot, nowMs);
      if (canRead) agentFacts[bot.botid] = agentFactsOf(tenant, env, bot, f);
      for (const target of canRead ? [risks, risksAll] : [risksAll]) {
        if (f.noAuthentication) target.noAuthentication++;
        if (f.accessAny) target.accessAny++;
        if (f.noAuthentication && f.accessAny) target.noAuthenticationAndAccessAny++;
        if (f.ownerDisabled) target.ownerDisabled++;
        if (f.ownerGone) target.ownerGone++;
        if (f.dormant) target.dormant++;
      }
    }
  }
  const app = appId ? tenant.apps.find((a) => a.appId === appId) : undefined;
  return {
    users: tenant.users.length,
    members,
    guests: tenant.users.length - members,
    disabledUsers: tenant.users.filter((u) => !u.accountEnabled).length,
    groups: tenant.groups.length,
    memberships,
    membershipsByKind: byKind,
    environments: tenant.environments.length,
    dataverseEnvironments: dataverse,
    readableEnvironments: readable,
    unreadableEnvironments: dataverse - readable,
    agents,
    agentsUnreadable,
    agentsAll: agents + agentsUnreadable,
    systemusers,
    risks,
    risksAll,
    appId,
    managementApp: app?.isManagementApp ?? false,
    agentFacts,
  };
}

/** The facts of `GroundTruth.agentFacts` for one agent. */
function agentFactsOf(tenant: Tenant, env: Environment, bot: Bot, flags: AgentRiskFlags): string[] {
  const facts = new Set<string>(Object.entries(flags).flatMap(([k, v]) => (v ? [k] : [])));
  if (bot.authenticationmode !== 1 && bot.authenticationtrigger === 0) facts.add('signInNotRequired');
  if (bot.accesscontrolpolicy === 3) facts.add('multitenant');
  const owner = env.dataverse ? indexes.systemusers.get(env.dataverse.systemusers, bot._ownerid_value) : undefined;
  const user = owner?.azureactivedirectoryobjectid ? indexes.users.get(tenant.users, owner.azureactivedirectoryobjectid) : undefined;
  if (user?.userType === 'Guest') facts.add('guestOwner');
  const own = (env.dataverse?.botcomponents ?? []).filter((c) => c._parentbotid_value === bot.botid);
  const componentFacts = agentComponentFacts(own);
  let generative = false;
  try {
    generative = (JSON.parse(bot.configuration ?? '{}') as { settings?: { GenerativeActionsEnabled?: unknown } }).settings?.GenerativeActionsEnabled === true;
  } catch {
    generative = false;
  }
  for (const f of componentFacts) if (f !== 'noInstructions') facts.add(f);
  if (generative && componentFacts.includes('noInstructions')) facts.add('generativeWithoutInstructions');
  return [...facts].sort();
}
