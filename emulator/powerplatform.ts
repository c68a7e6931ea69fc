/**
 * Power Platform admin inventory beyond environments (reference §3.3): Power Apps, Power Automate flows, connectors
 * (standard and custom), connections, DLP policies, tenant settings and the tenant isolation policy — the model, a
 * deterministic generator, the routes under `/powerapps`, `/flow` and `/bap`, and the ground truth a collector must find.
 *
 * Wire shapes and sources:
 * - apps: `GET /powerapps/providers/Microsoft.PowerApps/scopes/admin/environments/{env}/apps?api-version=…` (TF
 *   `powerapps`; item shape from pnp/cli-microsoft365 `docs/cmd/pa/app/app-list.mdx`: `appType`, `properties.owner`,
 *   `sharedUsersCount`, `sharedGroupsCount`, `bypassConsent`, `connectionReferences` keyed by GUID with `id`). With
 *   `$expand=permissions` each app also carries `properties.permissions` (role assignments, principal `type`
 *   `User`/`Group`/`Tenant`; "shared with everyone" = a `Tenant` principal, as `Set-AdminPowerAppRoleAssignment
 *   -PrincipalType Tenant` grants it) — inline expansion is the emulator's choice (UNCONFIRMED; the admin module reads
 *   `…/apps/{app}/permissions`, also served).
 * - flows: `GET /flow/providers/Microsoft.ProcessSimple/scopes/admin/environments/{env}/v2/flows?api-version=2016-11-01`
 *   (reference §3.3, UNCONFIRMED in MS docs; item shape from pnp/cli-microsoft365 flow list tests: `properties.state`,
 *   `creator {tenantId, objectId, userId, userType}`, `definitionSummary {triggers[{type,kind}], actions[{type,
 *   swaggerOperationId, api}]}`), paged by `nextLink` with `$skiptoken`. The list carries no URIs and no connection
 *   names; `GET …/flows/{flow}?api-version=…` returns `properties.definition` (triggers/actions with `inputs`) and
 *   `properties.connectionReferences` (`{connectionName, id, source}`).
 * - connectors: `GET /powerapps/providers/Microsoft.PowerApps/apis?api-version=…&$filter=environment eq '{env}'` (TF
 *   `connectors`: `name`, `id`, `properties.{displayName, tier, publisher}`); custom connectors add `isCustomApi`,
 *   `createdBy`, `apiDefinitions`, `backendService.serviceUrl` (UNCONFIRMED field names for the backend).
 * - connections: `GET /powerapps/providers/Microsoft.PowerApps/scopes/admin/environments/{env}/connections?api-version=…`
 *   (item shape: TF fixture `connection/tests/datasource/connections/Validate_Read/get_connections.json`: `apiId`,
 *   `statuses`, `connectionParameters`/`connectionParametersSet`, `createdBy`, `permissions`, `accountName`).
 * - DLP: `GET /bap/providers/PowerPlatform.Governance/v2/policies` (reference §3.3, TF `dlp_policy`; no api-version):
 *   the list carries no `connectorGroups`; `GET …/v2/policies/{name}` serves one policy with them (as the real API).
 * - tenant settings: `POST /bap/providers/Microsoft.BusinessAppPlatform/listTenantSettings?api-version=2020-10-01`
 *   (power-platform `admin/list-tenantsettings.md`).
 * - tenant isolation: `GET /bap/providers/PowerPlatform.Governance/v1/tenants/{tenantId}/tenantIsolationPolicy` (TF
 *   `tenant_isolation_policy`: `{"properties":{"tenantId","isDisabled","allowedTenants":[{"tenantId","direction":
 *   {"inbound","outbound"}}]}}`; 404 when none exists).
 *
 * Access: like BAP (emulator/bap.ts): a user token, or an application token of a registered Power Platform admin
 * management application; any other application gets 403 "… does not have permission to access the path …".
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, decodeCursor, encodeCursor, queryParam, resumeIndex, type EmulatorContext } from './common.ts';
import { POWER_PLATFORM_ADMIN_ROLES, RESOURCES } from './constants.ts';
import { createRng } from './prng.ts';
import { findApp, findEnvironment, indexes, type DirectoryUser, type Environment, type Tenant } from './tenant.ts';
import type { AccessTokenClaims } from './tokens.ts';

// --- model -----------------------------------------------------------------------------------------------------------

/** A canvas or model-driven app (Power Apps admin `apps`). Dates ISO 8601 UTC. */
export interface PowerAppModel {
  /** App name (GUID). */
  name: string;
  /** Environment name. */
  environment: string;
  displayName: string;
  /** Top-level `appType`: `ClassicCanvasApp` (canvas) or `ModelDrivenApp` (UNCONFIRMED value for model-driven). */
  appType: 'ClassicCanvasApp' | 'ModelDrivenApp';
  /** Directory user id of the owner (may be a user who left the directory). */
  ownerId: string;
  createdTime: string;
  lastModifiedTime: string;
  lastPublishTime: string;
  /** Directory user ids the app is shared with (besides the owner). */
  sharedUsers: string[];
  /** Directory group ids the app is shared with. */
  sharedGroups: string[];
  /** Shared with everyone in the tenant (a `Tenant` principal in the role assignments). */
  sharedWithTenant: boolean;
  /** Connector names (`shared_office365`, or a custom connector's name) the app uses. */
  connectors: string[];
  /** `bypassConsent`: users are not asked to consent to the app's connections. */
  bypassConsent: boolean;
}

/** One action (or trigger) of a flow definition. */
export interface FlowStepModel {
  /** Name in the definition (`Send_an_HTTP_request`). */
  name: string;
  /** Workflow definition language type: `Http`, `HttpWebhook`, `OpenApiConnection`, `Request`, `Recurrence`, `Compose`, … */
  type: string;
  /** Trigger kind (`Button`, `Http`) for `Request` triggers. */
  kind?: string;
  /** Connector name for `OpenApiConnection`/`OpenApiConnectionWebhook` steps. */
  connector?: string;
  /** Absolute URL called by `Http`/`HttpWebhook` steps and by the HTTP connectors (`shared_webcontents`). */
  uri?: string;
  method?: string;
}

/** A cloud flow (Power Automate admin `v2/flows`). */
export interface FlowModel {
  /** Flow name (GUID). */
  name: string;
  environment: string;
  displayName: string;
  state: 'Started' | 'Stopped' | 'Suspended';
  /** Directory user id of the creator. */
  creatorId: string;
  createdTime: string;
  lastModifiedTime: string;
  trigger: FlowStepModel;
  actions: FlowStepModel[];
  /** Connection references: connector name → connection name (a connection of the same environment). */
  connectionReferences: { connector: string; connection: string }[];
}

/** A custom connector of one environment. Standard connectors come from {@link STANDARD_CONNECTORS}. */
export interface CustomConnectorModel {
  /** Connector name (`shared_{slug}-5f{hex}`). */
  name: string;
  environment: string;
  displayName: string;
  /** Backend the connector calls (`backendService.serviceUrl`). */
  backendUrl: string;
  createdById: string;
  createdTime: string;
  lastModifiedTime: string;
}

/** A connection of one environment. */
export interface ConnectionModel {
  /** Connection name (GUID-like, unique in the tenant). */
  name: string;
  environment: string;
  /** Connector name (`shared_sql`). */
  connector: string;
  displayName: string;
  /** Directory user id of the maker who created it (the connection runs on that person's credentials unless `authType` says otherwise). */
  createdById: string;
  createdTime: string;
  lastModifiedTime: string;
  status: 'Connected' | 'Error';
  /** How it authenticates: `oauth` (delegated as the creator), `servicePrincipal`, `basic` (username/password), `apiKey`. */
  authType: 'oauth' | 'servicePrincipal' | 'basic' | 'apiKey';
  /** The account it signs in as (`accountName`); usually the creator's UPN. */
  accountName: string | null;
  /** Directory user ids it is shared with (role CanUse). */
  sharedUsers: string[];
  /** Shared with everyone (a `Tenant` principal). */
  sharedWithTenant: boolean;
}

/** A DLP (data) policy (`PowerPlatform.Governance/v2/policies`). Connector lists hold connector names (`shared_…`, or a built-in id of {@link DLP_BUILT_IN_CONNECTORS} such as `Http`). */
export interface DlpPolicyModel {
  name: string;
  displayName: string;
  environmentType: 'AllEnvironments' | 'ExceptEnvironments' | 'OnlyEnvironments';
  /** Environment names included (OnlyEnvironments) or excluded (ExceptEnvironments). */
  environments: string[];
  /** `Confidential` (business), `General` (non-business) or `Blocked`: where unlisted connectors go. */
  defaultConnectorsClassification: 'Confidential' | 'General' | 'Blocked';
  business: string[];
  nonBusiness: string[];
  blocked: string[];
  createdById: string;
  createdTime: string;
  lastModifiedTime: string;
}

/** The tenant isolation policy; `isDisabled: true` = isolation off. */
export interface TenantIsolationModel {
  isDisabled: boolean;
  allowedTenants: { tenantId: string; direction: { inbound: boolean; outbound: boolean } }[];
}

/** The Power Platform inventory of one tenant (`Tenant.powerPlatform`). Mutate it in place from tests. */
export interface PowerPlatformModel {
  apps: PowerAppModel[];
  flows: FlowModel[];
  connectors: CustomConnectorModel[];
  connections: ConnectionModel[];
  dlpPolicies: DlpPolicyModel[];
  /** The `listTenantSettings` body as served. */
  tenantSettings: Record<string, unknown>;
  /** null: no policy (the GET answers 404). */
  tenantIsolation: TenantIsolationModel | null;
  /** Items per page of the apps, flows, connectors and connections lists (`nextLink` beyond). @default 250 */
  pageSize?: number;
}

/** A first-party connector served in every environment's connector list. */
export interface StandardConnector {
  name: string;
  displayName: string;
  tier: 'Standard' | 'Premium';
}

/** Microsoft connectors every environment lists (a small, realistic subset of the catalogue). */
export const STANDARD_CONNECTORS: readonly StandardConnector[] = [
  { name: 'shared_office365', displayName: 'Office 365 Outlook', tier: 'Standard' },
  { name: 'shared_sharepointonline', displayName: 'SharePoint', tier: 'Standard' },
  { name: 'shared_teams', displayName: 'Microsoft Teams', tier: 'Standard' },
  { name: 'shared_onedriveforbusiness', displayName: 'OneDrive for Business', tier: 'Standard' },
  { name: 'shared_commondataserviceforapps', displayName: 'Microsoft Dataverse', tier: 'Standard' },
  { name: 'shared_approvals', displayName: 'Approvals', tier: 'Standard' },
  { name: 'shared_sql', displayName: 'SQL Server', tier: 'Premium' },
  { name: 'shared_webcontents', displayName: 'HTTP with Microsoft Entra ID (preauthorized)', tier: 'Premium' },
  { name: 'shared_salesforce', displayName: 'Salesforce', tier: 'Premium' },
  { name: 'shared_dropbox', displayName: 'Dropbox', tier: 'Standard' },
  { name: 'shared_gmail', displayName: 'Gmail', tier: 'Standard' },
  { name: 'shared_twitter', displayName: 'X', tier: 'Standard' },
  { name: 'shared_azureblob', displayName: 'Azure Blob Storage', tier: 'Standard' },
  { name: 'shared_sendmail', displayName: 'Mail', tier: 'Standard' },
];

/** Connectors that call an arbitrary URL given in the action's parameters (`request/url`). */
export const HTTP_CONNECTORS: readonly string[] = ['shared_webcontents'];

const API_PREFIX = '/providers/Microsoft.PowerApps/apis/';
const DAY_MS = 86_400_000;
const HEX = '0123456789abcdef';

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Hosts generated HTTP actions and custom connectors call: external ones and the tenant's own. */
const EXTERNAL_HOSTS = ['hooks.zapier.com', 'webhook.site', 'api.trello.com', 'requestbin.net', 'pastebin.com', 'api.ipify.org', 'ngrok-free.app'];
const APP_NAMES = [
  'Expense Tracker',
  'Leave Request',
  'Asset Checkout',
  'Site Inspection',
  'Visitor Log',
  'Help Desk',
  'Budget Planner',
  'Timesheet',
  'Onboarding Hub',
  'Room Booking',
  'Vendor Portal',
  'Field Survey',
];
const FLOW_NAMES = [
  'Notify on new item',
  'Approval routing',
  'Daily digest',
  'Sync orders',
  'Archive attachments',
  'Escalate tickets',
  'Post to Teams',
  'Backup list',
  'Forward invoices',
  'Weekly report',
];
const CUSTOM_CONNECTOR_NAMES = ['Contoso CRM', 'Inventory API', 'Payroll Gateway', 'Shipping Tracker', 'Legacy ERP', 'Partner Portal'];

/** Exact shares (floor of rate × count, at least 1 when the count is 3+) of the risky properties placed by the generator. */
export const POWER_PLATFORM_RISK_RATES = {
  appsSharedWithTenant: 0.2,
  flowsWithHttp: 0.3,
  connectionsByDisabledUsers: 0.2,
  connectionsByGuests: 0.1,
} as const;

function share(rate: number, n: number): number {
  const k = Math.floor(rate * n);
  return n >= 3 ? Math.max(1, k) : k;
}

/** Counts for {@link generatePowerPlatform}. */
export interface PowerPlatformSizes {
  apps: number;
  flows: number;
  /** Custom connectors. */
  connectors: number;
  connections: number;
}

/**
 * Generates the Power Platform inventory of a tenant whose users and environments exist, from its own seeded generator
 * (`{seed}:powerplatform`), so nothing generated before changes. Objects are spread round-robin over the environments.
 * Risky properties: `floor(rate × n)` (≥1 when n ≥ 3) apps shared with everyone, flows with an HTTP action to an
 * external host, connections created by disabled users and by guests (see {@link POWER_PLATFORM_RISK_RATES}); every
 * custom connector has an external backend; flows use the connections of their environment. DLP: a policy over all
 * environments except the last (when there are 2+), a second one over the default environment only; so the last
 * environment has no policy. Tenant settings: environment and trial creation open to everyone, portal creation
 * restricted, share-with-everyone allowed; tenant isolation off with one allowed tenant.
 * @param tenant the generated tenant's users, groups, environments and domains (nothing is modified).
 * @param nowMs the reference instant (epoch ms); every date is before it.
 * @throws RangeError when a size is negative or objects are asked for without environments or users.
 */
export function generatePowerPlatform(
  tenant: Pick<Tenant, 'users' | 'groups' | 'environments' | 'domains'>,
  sizes: PowerPlatformSizes,
  seed: number | string,
  nowMs: number,
): PowerPlatformModel {
  for (const [k, v] of Object.entries(sizes)) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`sizes.${k} must be a non-negative integer, got ${String(v)}`);
  }
  const rng = createRng(`${String(seed)}:powerplatform`);
  const envs = tenant.environments;
  const members = tenant.users.filter((u) => u.userType === 'Member');
  const enabled = members.filter((u) => u.accountEnabled);
  const disabled = members.filter((u) => !u.accountEnabled);
  const guests = tenant.users.filter((u) => u.userType === 'Guest');
  // Apps, flows, connectors and connections need an environment and a maker: a tenant without either has none.
  if (envs.length === 0 || enabled.length === 0) sizes = { ...sizes, apps: 0, flows: 0, connectors: 0, connections: 0 };
  const envAt = (i: number): Environment => envs[i % envs.length] as Environment;
  const maker = (): DirectoryUser => rng.pick(enabled);
  const when = (maxDays: number): number => nowMs - rng.int(1, maxDays) * DAY_MS - rng.int(0, 86_399) * 1000;
  const pickSet = (n: number, k: number): Set<number> => new Set(rng.shuffle(Array.from({ length: n }, (_, i) => i)).slice(0, k));

  // --- custom connectors ---------------------------------------------------------------------------------------------
  const connectors: CustomConnectorModel[] = [];
  for (let i = 0; i < sizes.connectors; i++) {
    const base = CUSTOM_CONNECTOR_NAMES[i % CUSTOM_CONNECTOR_NAMES.length] as string;
    const displayName = i < CUSTOM_CONNECTOR_NAMES.length ? base : `${base} ${Math.floor(i / CUSTOM_CONNECTOR_NAMES.length) + 1}`;
    const created = when(700);
    connectors.push({
      name: `shared_${displayName.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-5f${rng.chars(18, HEX)}`,
      environment: envAt(i).name,
      displayName,
      backendUrl: `https://${rng.pick(['api', 'gw', 'svc'])}.${rng.pick(EXTERNAL_HOSTS)}/${rng.pick(['v1', 'v2', 'api'])}`,
      createdById: maker().id,
      createdTime: iso(created),
      lastModifiedTime: iso(created + rng.int(0, 100) * DAY_MS),
    });
  }

  // --- connections -----------------------------------------------------------------------------------------------------
  const connections: ConnectionModel[] = [];
  const byDisabled = share(POWER_PLATFORM_RISK_RATES.connectionsByDisabledUsers, sizes.connections);
  const byGuests = share(POWER_PLATFORM_RISK_RATES.connectionsByGuests, sizes.connections);
  const order = rng.shuffle(Array.from({ length: sizes.connections }, (_, i) => i));
  const disabledSet = new Set(disabled.length > 0 ? order.slice(0, byDisabled) : []);
  const guestSet = new Set(guests.length > 0 ? order.slice(byDisabled, byDisabled + byGuests) : []);
  const connectorChoices = [
    'shared_office365',
    'shared_sharepointonline',
    'shared_sql',
    'shared_teams',
    'shared_webcontents',
    'shared_salesforce',
    'shared_dropbox',
  ];
  for (let i = 0; i < sizes.connections; i++) {
    const env = envAt(i);
    const customs = connectors.filter((c) => c.environment === env.name);
    const connector = customs.length > 0 && rng.chance(0.2) ? rng.pick(customs).name : rng.pick(connectorChoices);
    const creator = disabledSet.has(i) ? rng.pick(disabled) : guestSet.has(i) ? rng.pick(guests) : maker();
    const authType: ConnectionModel['authType'] =
      connector === 'shared_sql' ? rng.pick(['basic', 'servicePrincipal'] as const) : connector.includes('-5f') ? 'apiKey' : 'oauth';
    const created = when(500);
    const sharedWithTenant = authType !== 'oauth' && rng.chance(0.3);
    connections.push({
      name: `${connector.replace(/^shared_/, 'shared-').replace(/_/g, '-')}-${rng.guid()}`.slice(0, 80),
      environment: env.name,
      connector,
      displayName: authType === 'oauth' ? creator.userPrincipalName : `${connector.replace(/^shared_/, '')} connection`,
      createdById: creator.id,
      createdTime: iso(created),
      lastModifiedTime: iso(created + rng.int(0, 60) * DAY_MS),
      status: rng.chance(0.15) ? 'Error' : 'Connected',
      authType,
      accountName: authType === 'oauth' || authType === 'basic' ? creator.userPrincipalName : null,
      sharedUsers: authType !== 'oauth' && rng.chance(0.4) ? [maker().id] : [],
      sharedWithTenant,
    });
  }

  // --- apps ------------------------------------------------------------------------------------------------------------
  const apps: PowerAppModel[] = [];
  const tenantShared = pickSet(sizes.apps, share(POWER_PLATFORM_RISK_RATES.appsSharedWithTenant, sizes.apps));
  const groupIds = tenant.groups.map((g) => g.id);
  for (let i = 0; i < sizes.apps; i++) {
    const env = envAt(i);
    const owner = rng.chance(0.1) && disabled.length > 0 ? rng.pick(disabled) : maker();
    const created = when(900);
    const modified = Math.min(nowMs - 1000, created + rng.int(0, 200) * DAY_MS);
    const used = rng
      .shuffle(['shared_office365', 'shared_sharepointonline', 'shared_commondataserviceforapps', 'shared_sql', 'shared_teams'])
      .slice(0, rng.int(0, 3));
    const customs = connectors.filter((c) => c.environment === env.name);
    if (customs.length > 0 && rng.chance(0.3)) used.push(rng.pick(customs).name);
    const base = rng.pick(APP_NAMES);
    apps.push({
      name: rng.guid(),
      environment: env.name,
      displayName: `${base} ${i + 1}`,
      appType: env.dataverse && rng.chance(0.25) ? 'ModelDrivenApp' : 'ClassicCanvasApp',
      ownerId: owner.id,
      createdTime: iso(created),
      lastModifiedTime: iso(modified),
      lastPublishTime: iso(modified),
      sharedUsers: rng.chance(0.5) ? rng.shuffle(enabled.map((u) => u.id)).slice(0, rng.int(1, Math.min(5, enabled.length))) : [],
      sharedGroups: groupIds.length > 0 && rng.chance(0.3) ? [rng.pick(groupIds)] : [],
      sharedWithTenant: tenantShared.has(i),
      connectors: used,
      bypassConsent: rng.chance(0.1),
    });
  }

  // --- flows -----------------------------------------------------------------------------------------------------------
  const flows: FlowModel[] = [];
  const withHttp = pickSet(sizes.flows, share(POWER_PLATFORM_RISK_RATES.flowsWithHttp, sizes.flows));
  for (let i = 0; i < sizes.flows; i++) {
    const env = envAt(i);
    const creator = maker();
    const created = when(800);
    const modified = Math.min(nowMs - 1000, created + rng.int(0, 200) * DAY_MS);
    const trigger: FlowStepModel = rng.pick([
      { name: 'manual', type: 'Request', kind: 'Button' },
      { name: 'Recurrence', type: 'Recurrence' },
      { name: 'When_a_HTTP_request_is_received', type: 'Request', kind: 'Http' },
      { name: 'When_a_new_email_arrives', type: 'OpenApiConnectionNotification', connector: 'shared_office365' },
    ]);
    const actions: FlowStepModel[] = [{ name: 'Compose', type: 'Compose' }];
    const envConnections = connections.filter((c) => c.environment === env.name && !HTTP_CONNECTORS.includes(c.connector));
    const refs: { connector: string; connection: string }[] = [];
    const useConnection = (c: ConnectionModel): void => {
      if (!refs.some((r) => r.connector === c.connector)) refs.push({ connector: c.connector, connection: c.name });
    };
    if (trigger.connector) {
      const c = envConnections.find((x) => x.connector === trigger.connector);
      if (c) useConnection(c);
      else {
        // No connection for the trigger's connector in this environment: a scheduled flow instead.
        delete trigger.connector;
        trigger.type = 'Recurrence';
        trigger.name = 'Recurrence';
      }
    }
    if (envConnections.length > 0) {
      for (const c of rng.shuffle(envConnections).slice(0, rng.int(1, Math.min(2, envConnections.length)))) {
        useConnection(c);
        actions.push({ name: `Use_${c.connector.replace(/^shared_/, '')}`, type: 'OpenApiConnection', connector: c.connector });
      }
    }
    if (withHttp.has(i)) {
      const host = rng.pick(EXTERNAL_HOSTS);
      const kind = rng.pick(['Http', 'Http', 'HttpWebhook', 'webcontents'] as const);
      if (kind === 'webcontents') {
        const c = connections.find((x) => x.environment === env.name && x.connector === 'shared_webcontents');
        if (c) {
          useConnection(c);
          actions.push({
            name: 'Invoke_an_HTTP_request',
            type: 'OpenApiConnection',
            connector: 'shared_webcontents',
            uri: `https://${host}/api/${rng.chars(6, HEX)}`,
            method: 'POST',
          });
        } else actions.push({ name: 'HTTP', type: 'Http', uri: `https://${host}/in/${rng.chars(8, HEX)}`, method: 'POST' });
      } else
        actions.push({
          name: kind === 'Http' ? 'HTTP' : 'HTTP_Webhook',
          type: kind,
          uri: `https://${host}/${rng.chars(8, HEX)}`,
          method: rng.pick(['GET', 'POST']),
        });
    } else if (rng.chance(0.2)) {
      // Internal HTTP call: not an external target.
      actions.push({
        name: 'HTTP_internal',
        type: 'Http',
        uri: `https://${tenant.domains[0] ?? 'contoso.onmicrosoft.com'}.example.internal/status`,
        method: 'GET',
      });
    }
    flows.push({
      name: rng.guid(),
      environment: env.name,
      displayName: `${rng.pick(FLOW_NAMES)} ${i + 1}`,
      state: rng.chance(0.8) ? 'Started' : rng.pick(['Stopped', 'Suspended'] as const),
      creatorId: creator.id,
      createdTime: iso(created),
      lastModifiedTime: iso(modified),
      trigger,
      actions,
      connectionReferences: refs,
    });
  }

  // --- DLP, tenant settings, isolation -----------------------------------------------------------------------------------
  const dlpPolicies: DlpPolicyModel[] = [];
  const admin = members[0];
  if (envs.length > 0) {
    const created = when(400);
    const last = envs[envs.length - 1] as Environment;
    dlpPolicies.push({
      name: rng.guid(),
      displayName: 'Tenant baseline',
      environmentType: envs.length >= 2 ? 'ExceptEnvironments' : 'AllEnvironments',
      environments: envs.length >= 2 ? [last.name] : [],
      defaultConnectorsClassification: 'General',
      business: ['shared_office365', 'shared_sharepointonline', 'shared_teams', 'shared_commondataserviceforapps'],
      nonBusiness: ['shared_dropbox', 'shared_gmail'],
      blocked: ['shared_twitter'],
      createdById: admin?.id ?? 'SYSTEM',
      createdTime: iso(created),
      lastModifiedTime: iso(created + 10 * DAY_MS),
    });
    const def = envs.find((e) => e.isDefault);
    if (def) {
      dlpPolicies.push({
        name: rng.guid(),
        displayName: 'Default environment',
        environmentType: 'OnlyEnvironments',
        environments: [def.name],
        defaultConnectorsClassification: 'Blocked',
        business: ['shared_office365', 'shared_sharepointonline', 'shared_teams', 'shared_approvals'],
        nonBusiness: [],
        blocked: ['shared_webcontents', 'shared_sql', 'Http', 'HttpWebhook'],
        createdById: admin?.id ?? 'SYSTEM',
        createdTime: iso(created + DAY_MS),
        lastModifiedTime: iso(created + 20 * DAY_MS),
      });
    }
  }
  return {
    apps,
    flows,
    connectors,
    connections,
    dlpPolicies,
    tenantSettings: defaultTenantSettings(),
    tenantIsolation: { isDisabled: true, allowedTenants: [{ tenantId: rng.guid(), direction: { inbound: true, outbound: false } }] },
  };
}

/**
 * A `listTenantSettings` body (power-platform `admin/list-tenantsettings.md`) with some risky values: anyone may create
 * production and trial environments and share apps with everyone; portal creation is restricted to admins.
 */
function defaultTenantSettings(): Record<string, unknown> {
  return {
    walkMeOptOut: false,
    disableNPSCommentsReachout: false,
    disableNewsletterSendout: false,
    disableEnvironmentCreationByNonAdminUsers: false,
    disablePortalsCreationByNonAdminUsers: true,
    disableSurveyFeedback: false,
    disableTrialEnvironmentCreationByNonAdminUsers: false,
    disableCapacityAllocationByEnvironmentAdmins: false,
    disableSupportTicketsVisibleByAllUsers: false,
    powerPlatform: {
      search: { disableDocsSearch: false, disableCommunitySearch: false, disableBingVideoSearch: false },
      teamsIntegration: { shareWithColleaguesUserLimit: 10000 },
      powerApps: {
        disableShareWithEveryone: false,
        enableGuestsToMake: true,
        disableMembersIndicator: false,
        disableMakerMatch: false,
        disableConnectionSharingWithEveryone: false,
      },
      environments: { disablePreferredDataLocationForTeamsEnvironment: false },
      governance: {
        disableAdminDigest: false,
        disableDeveloperEnvironmentCreationByNonAdminUsers: false,
        enableDefaultEnvironmentRouting: false,
        policy: { enableDesktopFlowDataPolicyManagement: false },
      },
      licensing: { disableBillingPolicyCreationByNonAdminUsers: false, storageCapacityConsumptionWarningThreshold: 85 },
      powerPages: {},
      intelligence: { disableCopilot: false, enableOpenAiBotPublishing: false },
      modelExperimentation: { enableModelDataSharing: false, disableDataLogging: false },
    },
  };
}

// --- ground truth ------------------------------------------------------------------------------------------------------

/** True when a URL's host is outside the tenant (not its domains, not `*.internal`). */
export function isExternalUrl(tenant: Tenant, url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.endsWith('.internal')) return false;
  return !tenant.domains.some((d) => host === d.toLowerCase() || host.endsWith(`.${d.toLowerCase()}`));
}

/** The HTTP steps of a flow (type Http/HttpWebhook, or an HTTP connector) with a URI. */
export function httpSteps(flow: FlowModel): FlowStepModel[] {
  return [flow.trigger, ...flow.actions].filter(
    (s) => s.uri !== undefined && (s.type === 'Http' || s.type === 'HttpWebhook' || (s.connector !== undefined && HTTP_CONNECTORS.includes(s.connector))),
  );
}

/** What a complete collection of the Power Platform streams must store, and the risky properties among it. */
export interface PowerPlatformGroundTruth {
  /** Environments the connector reads (all when it is a registered management app, else none). */
  readableEnvironments: number;
  powerApps: number;
  flows: number;
  /** Standard + custom connectors over readable environments. */
  connectors: number;
  customConnectors: number;
  connections: number;
  dlpPolicies: number;
  /** Objects of the tenantSettings stream: settings + isolation policy (when one exists). */
  tenantSettings: number;
  risks: {
    appsSharedWithTenant: number;
    appsBypassConsent: number;
    /** Flows with at least one HTTP step to an external host. */
    flowsWithExternalHttp: number;
    /** Flows with an HTTP request trigger (`Request` of kind `Http`). */
    flowsWithHttpTrigger: number;
    connectionsByDisabledUsers: number;
    connectionsByGuests: number;
    connectionsErrored: number;
    connectionsSharedWithTenant: number;
    /** Custom connectors whose backend is an external host. */
    customConnectorsExternal: number;
    /** Non-default environments no DLP policy applies to. */
    environmentsWithoutDlp: number;
    /** Whether a DLP policy applies to the default environment. */
    defaultEnvironmentHasDlp: boolean;
    environmentCreationOpen: boolean;
    trialEnvironmentCreationOpen: boolean;
    portalCreationOpen: boolean;
    shareWithEveryoneAllowed: boolean;
    tenantIsolationEnabled: boolean;
  };
}

/** Whether a DLP policy applies to an environment. */
export function dlpApplies(policy: DlpPolicyModel, envName: string): boolean {
  if (policy.environmentType === 'AllEnvironments') return true;
  const listed = policy.environments.includes(envName);
  return policy.environmentType === 'OnlyEnvironments' ? listed : !listed;
}

/**
 * Recomputes the expected Power Platform collection from the tenant data alone.
 * @param options.appId the connector (default `tenant.connectorAppId`).
 */
export function powerPlatformGroundTruth(tenant: Tenant, options: { appId?: string } = {}): PowerPlatformGroundTruth {
  const pp = tenant.powerPlatform ?? emptyPowerPlatform();
  const appId = options.appId ?? tenant.connectorAppId;
  const readable = appId !== undefined && (findApp(tenant, appId)?.isManagementApp ?? false);
  const envNames = new Set(readable ? tenant.environments.map((e) => e.name) : []);
  const inEnv = <T extends { environment: string }>(items: T[]): T[] => items.filter((i) => envNames.has(i.environment));
  const user = (id: string): DirectoryUser | undefined => indexes.users.get(tenant.users, id);
  const apps = inEnv(pp.apps);
  const flows = inEnv(pp.flows);
  const customs = inEnv(pp.connectors);
  const connections = inEnv(pp.connections);
  const settings = pp.tenantSettings;
  const ppSettings = (settings.powerPlatform ?? {}) as Record<string, Record<string, unknown>>;
  const def = tenant.environments.find((e) => e.isDefault);
  return {
    readableEnvironments: envNames.size,
    powerApps: apps.length,
    flows: flows.length,
    connectors: envNames.size * STANDARD_CONNECTORS.length + customs.length,
    customConnectors: customs.length,
    connections: connections.length,
    dlpPolicies: readable ? pp.dlpPolicies.length : 0,
    tenantSettings: readable ? (pp.tenantIsolation ? 2 : 1) : 0,
    risks: {
      appsSharedWithTenant: apps.filter((a) => a.sharedWithTenant).length,
      appsBypassConsent: apps.filter((a) => a.bypassConsent).length,
      flowsWithExternalHttp: flows.filter((f) => httpSteps(f).some((s) => isExternalUrl(tenant, s.uri as string))).length,
      flowsWithHttpTrigger: flows.filter((f) => f.trigger.type === 'Request' && f.trigger.kind === 'Http').length,
      connectionsByDisabledUsers: connections.filter((c) => user(c.createdById)?.accountEnabled === false).length,
      connectionsByGuests: connections.filter((c) => user(c.createdById)?.userType === 'Guest').length,
      connectionsErrored: connections.filter((c) => c.status === 'Error').length,
      connectionsSharedWithTenant: connections.filter((c) => c.sharedWithTenant).length,
      customConnectorsExternal: customs.filter((c) => isExternalUrl(tenant, c.backendUrl)).length,
      environmentsWithoutDlp: tenant.environments.filter((e) => !e.isDefault && !pp.dlpPolicies.some((p) => dlpApplies(p, e.name))).length,
      defaultEnvironmentHasDlp: def !== undefined && pp.dlpPolicies.some((p) => dlpApplies(p, def.name)),
      environmentCreationOpen: settings.disableEnvironmentCreationByNonAdminUsers !== true,
      trialEnvironmentCreationOpen: settings.disableTrialEnvironmentCreationByNonAdminUsers !== true,
      portalCreationOpen: settings.disablePortalsCreationByNonAdminUsers !== true,
      shareWithEveryoneAllowed: ppSettings.powerApps?.disableShareWithEveryone !== true,
      tenantIsolationEnabled: pp.tenantIsolation !== null && !pp.tenantIsolation.isDisabled,
    },
  };
}

/** An empty inventory (tenants built by hand without `powerPlatform`). */
export function emptyPowerPlatform(): PowerPlatformModel {
  return { apps: [], flows: [], connectors: [], connections: [], dlpPolicies: [], tenantSettings: defaultTenantSettings(), tenantIsolation: null };
}

// --- wire shapes -------------------------------------------------------------------------------------------------------

function principalOf(tenant: Tenant, id: string): Record<string, unknown> {
  const u = indexes.users.get(tenant.users, id);
  return u
    ? { id: u.id, displayName: u.displayName, email: u.mail ?? u.userPrincipalName, type: 'User', tenantId: tenant.id, userPrincipalName: u.userPrincipalName }
    : { id, type: 'User', tenantId: tenant.id };
}

function connectorDisplayName(pp: PowerPlatformModel, name: string): string {
  return STANDARD_CONNECTORS.find((c) => c.name === name)?.displayName ?? pp.connectors.find((c) => c.name === name)?.displayName ?? name;
}

function permission(resourceId: string, roleName: string, principal: Record<string, unknown>): Record<string, unknown> {
  const key = String(principal.id);
  return {
    name: key,
    id: `${resourceId}/permissions/${key}`,
    type: `${resourceId.split('/').slice(1, 3).join('/')}/permissions`,
    properties: { roleName, principal },
  };
}

/** The admin apps representation of an app (see module doc). */
function appResource(tenant: Tenant, app: PowerAppModel, expandPermissions: boolean): Record<string, unknown> {
  const pp = tenant.powerPlatform ?? emptyPowerPlatform();
  const id = `/providers/Microsoft.PowerApps/apps/${app.name}`;
  const owner = principalOf(tenant, app.ownerId);
  const connectionReferences: Record<string, unknown> = {};
  app.connectors.forEach((c, i) => {
    const custom = pp.connectors.some((x) => x.name === c);
    connectionReferences[`${app.name.slice(0, 8)}-${String(i).padStart(4, '0')}-4000-8000-${c.length.toString(16).padStart(12, '0')}`] = {
      id: `${API_PREFIX}${c}`,
      displayName: connectorDisplayName(pp, c),
      dataSources: [],
      dependencies: [],
      isOnPremiseConnection: false,
      isCustomApiConnection: custom,
    };
  });
  const properties: Record<string, unknown> = {
    appVersion: app.lastModifiedTime,
    lifeCycleId: 'Published',
    status: 'Ready',
    owner,
    createdBy: owner,
    lastModifiedBy: owner,
    lastPublishedBy: owner,
    displayName: app.displayName,
    description: '',
    createdTime: app.createdTime,
    lastModifiedTime: app.lastModifiedTime,
    lastPublishTime: app.lastPublishTime,
    sharedGroupsCount: app.sharedGroups.length,
    sharedUsersCount: app.sharedUsers.length,
    appOpenUri: `https://apps.powerapps.com/play/e/${app.environment}/a/${app.name}?tenantId=${tenant.id}`,
    bypassConsent: app.bypassConsent,
    isFeaturedApp: false,
    isHeroApp: false,
    environment: { id: `/providers/Microsoft.PowerApps/environments/${app.environment}`, name: app.environment },
    connectionReferences,
    appPlanClassification: app.connectors.some(
      (c) => STANDARD_CONNECTORS.find((s) => s.name === c)?.tier === 'Premium' || pp.connectors.some((x) => x.name === c),
    )
      ? 'Premium'
      : 'Standard',
    usesCustomApi: app.connectors.some((c) => pp.connectors.some((x) => x.name === c)),
  };
  if (expandPermissions) properties.permissions = appPermissions(tenant, app);
  // No top-level `displayName`: the real list carries it under `properties` only (TF `powerapps` Validate_Read fixture).
  return { name: app.name, id, type: 'Microsoft.PowerApps/apps', appType: app.appType, properties };
}

/** Role assignments of an app: the owner, shared users and groups, and a `Tenant` principal when shared with everyone. */
function appPermissions(tenant: Tenant, app: PowerAppModel): Record<string, unknown>[] {
  const id = `/providers/Microsoft.PowerApps/apps/${app.name}`;
  const out = [permission(id, 'Owner', principalOf(tenant, app.ownerId))];
  for (const u of app.sharedUsers) out.push(permission(id, 'CanView', principalOf(tenant, u)));
  for (const g of app.sharedGroups) out.push(permission(id, 'CanView', { id: g, type: 'Group', tenantId: tenant.id }));
  if (app.sharedWithTenant) out.push(permission(id, 'CanView', { id: tenant.id, type: 'Tenant', tenantId: tenant.id }));
  return out;
}

function stepSummary(step: FlowStepModel): Record<string, unknown> {
  const out: Record<string, unknown> = { type: step.type };
  if (step.kind) out.kind = step.kind;
  if (step.connector) {
    out.swaggerOperationId = step.connector === 'shared_webcontents' ? 'InvokeHttp' : 'Operation';
    out.api = { name: step.connector, id: `${API_PREFIX}${step.connector}`, type: '/providers/Microsoft.PowerApps/apis' };
  }
  return out;
}

/** The admin v2 flows list representation (no definition, no connection names). */
function flowListResource(tenant: Tenant, flow: FlowModel): Record<string, unknown> {
  return {
    name: flow.name,
    id: `/providers/Microsoft.ProcessSimple/environments/${flow.environment}/flows/${flow.name}`,
    type: 'Microsoft.ProcessSimple/environments/flows',
    properties: {
      apiId: '/providers/Microsoft.PowerApps/apis/shared_logicflows',
      displayName: flow.displayName,
      state: flow.state,
      createdTime: flow.createdTime,
      lastModifiedTime: flow.lastModifiedTime,
      flowSuspensionReason: flow.state === 'Suspended' ? 'DlpViolation' : 'None',
      environment: {
        name: flow.environment,
        type: 'Microsoft.ProcessSimple/environments',
        id: `/providers/Microsoft.ProcessSimple/environments/${flow.environment}`,
      },
      definitionSummary: { triggers: [stepSummary(flow.trigger)], actions: flow.actions.map(stepSummary) },
      creator: { tenantId: tenant.id, objectId: flow.creatorId, userId: flow.creatorId, userType: 'ActiveDirectory' },
      provisioningMethod: 'FromDefinition',
      flowFailureAlertSubscribed: false,
    },
  };
}

function stepDefinition(step: FlowStepModel, trigger: boolean): Record<string, unknown> {
  if (step.type === 'Http' || step.type === 'HttpWebhook') {
    return step.type === 'Http'
      ? { type: 'Http', inputs: { method: step.method ?? 'GET', uri: step.uri }, runAfter: {} }
      : { type: 'HttpWebhook', inputs: { subscribe: { method: step.method ?? 'POST', uri: step.uri }, unsubscribe: {} }, runAfter: {} };
  }
  if (step.connector) {
    const parameters: Record<string, unknown> = step.uri ? { 'request/method': step.method ?? 'GET', 'request/url': step.uri } : {};
    return {
      type: step.type,
      inputs: {
        host: {
          connectionName: step.connector,
          operationId: step.connector === 'shared_webcontents' ? 'InvokeHttp' : 'Operation',
          apiId: `${API_PREFIX}${step.connector}`,
        },
        parameters,
        authentication: "@parameters('$authentication')",
      },
      ...(trigger ? {} : { runAfter: {} }),
    };
  }
  if (step.type === 'Request') return { type: 'Request', kind: step.kind ?? 'Button', inputs: { schema: { type: 'object', properties: {} } } };
  if (step.type === 'Recurrence') return { type: 'Recurrence', recurrence: { frequency: 'Day', interval: 1 } };
  return { type: step.type, inputs: '@triggerBody()', runAfter: {} };
}

/** The single-flow representation: list fields plus `definition` and `connectionReferences`. */
function flowResource(tenant: Tenant, flow: FlowModel): Record<string, unknown> {
  const pp = tenant.powerPlatform ?? emptyPowerPlatform();
  const base = flowListResource(tenant, flow);
  const properties = base.properties as Record<string, unknown>;
  properties.definition = {
    $schema: 'https://schema.management.azure.com/providers/Microsoft.Logic/schemas/2016-06-01/workflowdefinition.json#',
    contentVersion: '1.0.0.0',
    parameters: { $connections: { defaultValue: {}, type: 'Object' }, $authentication: { defaultValue: {}, type: 'SecureObject' } },
    triggers: { [flow.trigger.name]: stepDefinition(flow.trigger, true) },
    actions: Object.fromEntries(flow.actions.map((a) => [a.name, stepDefinition(a, false)])),
  };
  properties.connectionReferences = Object.fromEntries(
    flow.connectionReferences.map((r) => [
      r.connector,
      {
        connectionName: r.connection,
        source: 'Embedded',
        id: `${API_PREFIX}${r.connector}`,
        displayName: connectorDisplayName(pp, r.connector),
        tier: 'NotSpecified',
        apiName: r.connector.replace(/^shared_/, ''),
      },
    ]),
  );
  return base;
}

function standardConnectorResource(c: StandardConnector): Record<string, unknown> {
  return {
    name: c.name,
    id: `${API_PREFIX}${c.name}`,
    type: 'Microsoft.PowerApps/apis',
    properties: {
      displayName: c.displayName,
      description: `${c.displayName} connector`,
      tier: c.tier,
      publisher: 'Microsoft',
      isCustomApi: false,
      metadata: { source: 'marketplace' },
    },
  };
}

/** A custom connector's representation (see module doc; backend fields UNCONFIRMED). */
function customConnectorResource(tenant: Tenant, c: CustomConnectorModel): Record<string, unknown> {
  const url = new URL(c.backendUrl);
  return {
    name: c.name,
    id: `/providers/Microsoft.PowerApps/scopes/admin/environments/${c.environment}/apis/${c.name}`,
    type: 'Microsoft.PowerApps/apis',
    properties: {
      displayName: c.displayName,
      description: '',
      tier: 'Premium',
      publisher: indexes.users.get(tenant.users, c.createdById)?.displayName ?? 'Unknown',
      isCustomApi: true,
      createdTime: c.createdTime,
      changedTime: c.lastModifiedTime,
      createdBy: principalOf(tenant, c.createdById),
      environment: { id: `/providers/Microsoft.PowerApps/environments/${c.environment}`, name: c.environment },
      backendService: { serviceUrl: c.backendUrl },
      swagger: { swagger: '2.0', host: url.host, basePath: url.pathname, schemes: [url.protocol.replace(':', '')] },
      apiDefinitions: {
        originalSwaggerUrl: `https://paeu2weu8.blob.core.windows.net/api-swagger-files/${c.name}.json`,
        modifiedSwaggerUrl: `https://paeu2weu8.blob.core.windows.net/api-swagger-files/${c.name}-modified.json`,
      },
      metadata: { source: 'powerapps-user-defined' },
    },
  };
}

/** A connection's representation (TF fixture shape). */
function connectionResource(tenant: Tenant, c: ConnectionModel): Record<string, unknown> {
  const id = `${API_PREFIX}${c.connector}/connections/${c.name}`;
  const permissions = [permission(id, 'Owner', principalOf(tenant, c.createdById))];
  for (const u of c.sharedUsers) permissions.push(permission(id, 'CanUse', principalOf(tenant, u)));
  if (c.sharedWithTenant) permissions.push(permission(id, 'CanUse', { id: tenant.id, type: 'Tenant', tenantId: tenant.id }));
  const properties: Record<string, unknown> = {
    apiId: `${API_PREFIX}${c.connector}`,
    displayName: c.displayName,
    statuses:
      c.status === 'Connected'
        ? [{ status: 'Connected' }]
        : [{ status: 'Error', target: 'token', error: { code: 'Unauthorized', message: 'The refresh token has expired due to inactivity.' } }],
    createdBy: principalOf(tenant, c.createdById),
    createdTime: c.createdTime,
    lastModifiedTime: c.lastModifiedTime,
    environment: { id: `/providers/Microsoft.PowerApps/environments/${c.environment}`, name: c.environment },
    permissions,
    allowSharing: c.authType !== 'oauth',
  };
  if (c.accountName) properties.accountName = c.accountName;
  if (c.authType === 'oauth') properties.connectionParameters = { 'token:grantType': 'code' };
  else if (c.authType === 'servicePrincipal')
    properties.connectionParametersSet = { name: 'oauthSP', values: { 'token:clientId': { value: '00000000-0000-0000-0000-000000000000' } } };
  else if (c.authType === 'basic')
    properties.connectionParameters = { server: 'sql.contoso.example', database: 'crm', authType: 'basic', username: c.accountName };
  else properties.connectionParameters = { api_key: '' };
  return { name: c.name, id, type: 'Microsoft.PowerApps/apis/connections', properties };
}

/**
 * Built-in connectors a DLP policy lists without the `/providers/Microsoft.PowerApps/apis/` prefix: the HTTP
 * trigger and actions (Microsoft Learn, connectors/powerplatformforadmins "Known issues and limitations").
 */
export const DLP_BUILT_IN_CONNECTORS: Readonly<Record<string, string>> = {
  Http: 'HTTP',
  HttpWebhook: 'HTTP Webhook',
  HttpRequestReceived: 'When a HTTP request is received',
};

/**
 * A DLP policy's `policyDefinition` as the v2 LIST serves it: scope, default group, times, etag — and no
 * `connectorGroups` (the real list leaves them out; TF dlp_policy test fixture `Validate_Read/get_policies.json`).
 */
function dlpPolicyDefinition(tenant: Tenant, p: DlpPolicyModel): Record<string, unknown> {
  const creator = indexes.users.get(tenant.users, p.createdById);
  return {
    name: p.name,
    displayName: p.displayName,
    defaultConnectorsClassification: p.defaultConnectorsClassification,
    environmentType: p.environmentType,
    environments: p.environments.map((e) => ({
      id: `/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments/${e}`,
      name: e,
      type: 'Microsoft.BusinessAppPlatform/scopes/environments',
    })),
    createdBy: { displayName: creator?.displayName ?? 'SYSTEM' },
    createdTime: p.createdTime,
    lastModifiedBy: { displayName: creator?.displayName ?? 'SYSTEM' },
    lastModifiedTime: p.lastModifiedTime,
    etag: etagOf(p),
    isLegacySchemaVersion: false,
  };
}

/** A GUID-shaped etag that changes with the policy's last modification (the real etag is a bare GUID). */
function etagOf(p: DlpPolicyModel): string {
  let h = 0x811c9dc5;
  const hex: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (const ch of `${round}|${p.name}|${p.lastModifiedTime}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    hex.push(h.toString(16).padStart(8, '0'));
  }
  const x = hex.join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** A DLP policy's v2 list item (reference §3.3): `{ policyDefinition }` without connector groups. */
function dlpPolicyListItem(tenant: Tenant, p: DlpPolicyModel): Record<string, unknown> {
  return { policyDefinition: dlpPolicyDefinition(tenant, p) };
}

/**
 * A DLP policy as the single-policy GET serves it: the definition with `connectorGroups` (all three groups, each with
 * `{id, name, type}` connectors; built-in HTTP connectors unprefixed) and the default custom-connector rule; no
 * `connectorConfigurationsDefinition` when none is set. Shapes: TF dlp_policy fixtures `get_policy_*.json`.
 */
function dlpPolicyResource(tenant: Tenant, p: DlpPolicyModel): Record<string, unknown> {
  const pp = tenant.powerPlatform ?? emptyPowerPlatform();
  const group = (classification: string, names: string[]) => ({
    classification,
    connectors: names.map((n) =>
      DLP_BUILT_IN_CONNECTORS[n] !== undefined
        ? { id: n, name: DLP_BUILT_IN_CONNECTORS[n], type: 'Microsoft.PowerApps/apis' }
        : { id: `${API_PREFIX}${n}`, name: connectorDisplayName(pp, n), type: 'Microsoft.PowerApps/apis' },
    ),
  });
  const { name, displayName, defaultConnectorsClassification, ...rest } = dlpPolicyDefinition(tenant, p);
  return {
    policyDefinition: {
      name,
      displayName,
      defaultConnectorsClassification,
      connectorGroups: [group('Confidential', p.business), group('General', p.nonBusiness), group('Blocked', p.blocked)],
      ...rest,
    },
    customConnectorUrlPatternsDefinition: { rules: [{ order: 1, customConnectorRuleClassification: 'Ignore', pattern: '*' }] },
  };
}

// --- routes ------------------------------------------------------------------------------------------------------------

/** An error answer in the Power Platform services' shape: `{error: {code, message}}`. */
function ppError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });
}

/** An authenticated caller of a Power Platform service. */
export interface PowerPlatformAuth {
  tenant: Tenant;
  claims: AccessTokenClaims;
}

/**
 * Authenticates a call to a Power Platform service (BAP, PowerApps, Flow, the Power Platform API): `api-version` when
 * required (400 `MissingApiVersionParameter`), a valid token (401 `MissingAuthenticationToken` /
 * `InvalidAuthenticationToken` with `www-authenticate`), for one of the audiences (401
 * `InvalidAuthenticationTokenAudience`), of a known tenant. Authorization is each service's own.
 * @returns the caller, or null when the error answer was sent.
 */
export async function authenticatePowerPlatform(
  ctx: EmulatorContext,
  req: FastifyRequest,
  reply: FastifyReply,
  audiences: string[],
  requireApiVersion: boolean,
): Promise<PowerPlatformAuth | null> {
  if (requireApiVersion && queryParam(req, 'api-version') === undefined) {
    ppError(reply, 400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
    return null;
  }
  const result = await ctx.tokens.verify(bearerToken(req));
  if (!result.ok) {
    reply.header('www-authenticate', `Bearer authorization_uri="${ctx.baseUrl()}/common/oauth2/authorize", error="invalid_token"`);
    ppError(
      reply,
      401,
      result.reason === 'missing' ? 'MissingAuthenticationToken' : 'InvalidAuthenticationToken',
      result.reason === 'missing' ? "Authentication failed. The 'Authorization' header is missing." : 'The access token is invalid.',
    );
    return null;
  }
  const aud = result.claims.aud.replace(/\/+$/, '');
  if (!audiences.includes(aud)) {
    ppError(
      reply,
      401,
      'InvalidAuthenticationTokenAudience',
      `The access token has been obtained for wrong audience or resource '${result.claims.aud}'. It should exactly match with one of the allowed audiences ${audiences.map((a) => `'${a}'`).join(',')}.`,
    );
    return null;
  }
  const tenant = ctx.store.get(result.claims.tid);
  if (!tenant) {
    ppError(reply, 401, 'InvalidAuthenticationToken', 'The access token is invalid.');
    return null;
  }
  return { tenant, claims: result.claims };
}

/**
 * Authenticates like BAP ({@link authenticatePowerPlatform}), then needs a user with an admin role or a registered
 * management application (403 with "does not have permission to access the path").
 */
async function authorize(
  ctx: EmulatorContext,
  req: FastifyRequest,
  reply: FastifyReply,
  audiences: string[],
  requireApiVersion: boolean,
): Promise<PowerPlatformAuth | null> {
  const auth = await authenticatePowerPlatform(ctx, req, reply, audiences, requireApiVersion);
  if (!auth) return null;
  const { tenant, claims } = auth;
  const path = (req.url.split('?')[0] ?? '').replace(/^\/(bap|powerapps|flow)/, '');
  if (claims.idtyp === 'app') {
    if (!(findApp(tenant, claims.appid)?.isManagementApp ?? false)) {
      ppError(
        reply,
        403,
        'Forbidden',
        `The service principal with id '${claims.oid}' for application ${claims.appid} does not have permission to access the path '${path}' in tenant ${tenant.id}.`,
      );
      return null;
    }
  } else if (!(claims.wids ?? []).some((w) => POWER_PLATFORM_ADMIN_ROLES.includes(w))) {
    ppError(reply, 403, 'Forbidden', `The user '${claims.upn ?? claims.oid}' does not have permission to access the path '${path}' in tenant ${tenant.id}.`);
    return null;
  }
  return { tenant, claims };
}

const pageSizeOf = (pp: PowerPlatformModel): number => Math.max(1, pp.pageSize ?? 250);

/**
 * Serves one page of `items` with `nextLink` (`$skiptoken` = an opaque keyset cursor) when more remain.
 * An unreadable skip token → 400 `InvalidSkipToken`.
 */
function sendPage<T>(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: EmulatorContext,
  collection: string,
  items: T[],
  key: (t: T) => string,
  pageSize: number,
  render: (t: T) => unknown,
): FastifyReply {
  const token = queryParam(req, '$skiptoken');
  let start = 0;
  if (token !== undefined) {
    const cursor = decodeCursor(token);
    if (!cursor || cursor.c !== collection) return ppError(reply, 400, 'InvalidSkipToken', 'The skip token is not valid for this request.');
    start = resumeIndex(items, key, cursor.index, cursor.last, (id) => items.findIndex((i) => key(i) === id));
  }
  const page = items.slice(start, start + pageSize);
  const body: Record<string, unknown> = { value: page.map(render) };
  const end = start + page.length;
  if (end < items.length && page.length > 0) {
    const url = new URL(`${ctx.baseUrl()}${req.url}`);
    url.searchParams.set('$skiptoken', encodeCursor({ c: collection, index: end, last: key(page[page.length - 1] as T) }));
    body.nextLink = url.toString();
  }
  return reply.type('application/json; charset=utf-8').send(body);
}

function envOr404(reply: FastifyReply, tenant: Tenant, name: string): Environment | null {
  const env = findEnvironment(tenant, name);
  if (!env) ppError(reply, 404, 'EnvironmentNotFound', `The environment '${name}' could not be found in the tenant '${tenant.id}'.`);
  return env ?? null;
}

/** The environment named by `$filter=environment eq '{env}'` (quotes optional), or undefined. */
function filterEnvironment(filter: string | undefined): string | undefined {
  if (!filter) return undefined;
  const m = /environment\s+eq\s+'?([^'\s]+)'?/i.exec(filter);
  return m?.[1];
}

/**
 * Registers the Power Apps routes (`/powerapps` prefix): admin apps (+ `/apps/{app}/permissions`), admin connections
 * and the connectors list. All need `api-version` and a token for `https://service.powerapps.com`.
 */
export function registerPowerApps(app: FastifyInstance, ctx: EmulatorContext): void {
  const audiences = [RESOURCES.bap, RESOURCES.bapAlternate];
  const admin = '/providers/Microsoft.PowerApps/scopes/admin/environments/:env';

  app.get<{ Params: { env: string } }>(`${admin}/apps`, async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    const env = envOr404(reply, auth.tenant, req.params.env);
    if (!env) return reply;
    const pp = auth.tenant.powerPlatform ?? emptyPowerPlatform();
    const expand = (queryParam(req, '$expand') ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('permissions');
    const items = pp.apps.filter((a) => a.environment === env.name);
    return sendPage(
      req,
      reply,
      ctx,
      `apps:${env.name}`,
      items,
      (a) => a.name,
      pageSizeOf(pp),
      (a) => appResource(auth.tenant, a, expand),
    );
  });

  app.get<{ Params: { env: string; app: string } }>(`${admin}/apps/:app/permissions`, async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    const env = envOr404(reply, auth.tenant, req.params.env);
    if (!env) return reply;
    const found = (auth.tenant.powerPlatform?.apps ?? []).find((a) => a.environment === env.name && a.name === req.params.app);
    if (!found) return ppError(reply, 404, 'AppNotFound', `The app '${req.params.app}' could not be found in environment '${env.name}'.`);
    return reply.type('application/json; charset=utf-8').send({ value: appPermissions(auth.tenant, found) });
  });

  app.get<{ Params: { env: string } }>(`${admin}/connections`, async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    const env = envOr404(reply, auth.tenant, req.params.env);
    if (!env) return reply;
    const pp = auth.tenant.powerPlatform ?? emptyPowerPlatform();
    const items = pp.connections.filter((c) => c.environment === env.name);
    return sendPage(
      req,
      reply,
      ctx,
      `connections:${env.name}`,
      items,
      (c) => c.name,
      pageSizeOf(pp),
      (c) => connectionResource(auth.tenant, c),
    );
  });

  app.get('/providers/Microsoft.PowerApps/apis', async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    const envName = filterEnvironment(queryParam(req, '$filter'));
    if (!envName) return ppError(reply, 400, 'InvalidFilter', "The $filter query parameter must name an environment: $filter=environment eq '{environment}'.");
    const env = envOr404(reply, auth.tenant, envName);
    if (!env) return reply;
    const pp = auth.tenant.powerPlatform ?? emptyPowerPlatform();
    type Item = { key: string; render: () => unknown };
    const items: Item[] = [
      ...STANDARD_CONNECTORS.map((c) => ({ key: c.name, render: () => standardConnectorResource(c) })),
      ...pp.connectors.filter((c) => c.environment === env.name).map((c) => ({ key: c.name, render: () => customConnectorResource(auth.tenant, c) })),
    ];
    return sendPage(
      req,
      reply,
      ctx,
      `apis:${env.name}`,
      items,
      (i) => i.key,
      pageSizeOf(pp),
      (i) => i.render(),
    );
  });
}

/**
 * Registers the Power Automate routes (`/flow` prefix): admin v2 flows list and the single flow with its definition.
 * Both need `api-version` and a token for `https://service.flow.microsoft.com`.
 */
export function registerFlow(app: FastifyInstance, ctx: EmulatorContext): void {
  const audiences = [RESOURCES.flow];
  const admin = '/providers/Microsoft.ProcessSimple/scopes/admin/environments/:env';
  app.get<{ Params: { env: string } }>(`${admin}/v2/flows`, async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    const env = envOr404(reply, auth.tenant, req.params.env);
    if (!env) return reply;
    const pp = auth.tenant.powerPlatform ?? emptyPowerPlatform();
    const items = pp.flows.filter((f) => f.environment === env.name);
    return sendPage(
      req,
      reply,
      ctx,
      `flows:${env.name}`,
      items,
      (f) => f.name,
      pageSizeOf(pp),
      (f) => flowListResource(auth.tenant, f),
    );
  });
  const single = async (req: FastifyRequest<{ Params: { env: string; flow: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    const env = envOr404(reply, auth.tenant, req.params.env);
    if (!env) return reply;
    const flow = (auth.tenant.powerPlatform?.flows ?? []).find((f) => f.environment === env.name && f.name === req.params.flow);
    if (!flow) return ppError(reply, 404, 'FlowNotFound', `The flow '${req.params.flow}' could not be found in environment '${env.name}'.`);
    return reply.type('application/json; charset=utf-8').send(flowResource(auth.tenant, flow));
  };
  app.get<{ Params: { env: string; flow: string } }>(`${admin}/flows/:flow`, single);
  app.get<{ Params: { env: string; flow: string } }>(`${admin}/v2/flows/:flow`, single);
}

/**
 * Registers the governance routes under the `/bap` prefix (beside emulator/bap.ts): DLP policies v2 (list and one),
 * `listTenantSettings` (POST, `api-version` required) and the tenant isolation policy (404 `TenantIsolationPolicyNotFound`
 * when none; another tenant's id → 403). The governance GETs need no api-version (TF sends none).
 */
export function registerPowerPlatformGovernance(app: FastifyInstance, ctx: EmulatorContext): void {
  const audiences = [RESOURCES.bap, RESOURCES.bapAlternate];
  app.get('/providers/PowerPlatform.Governance/v2/policies', async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, false);
    if (!auth) return reply;
    const pp = auth.tenant.powerPlatform ?? emptyPowerPlatform();
    return reply.type('application/json; charset=utf-8').send({ value: pp.dlpPolicies.map((p) => dlpPolicyListItem(auth.tenant, p)) });
  });
  app.get<{ Params: { name: string } }>('/providers/PowerPlatform.Governance/v2/policies/:name', async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, false);
    if (!auth) return reply;
    const p = (auth.tenant.powerPlatform?.dlpPolicies ?? []).find((x) => x.name === req.params.name);
    if (!p) return ppError(reply, 404, 'PolicyNotFound', `The policy '${req.params.name}' could not be found.`);
    return reply.type('application/json; charset=utf-8').send(dlpPolicyResource(auth.tenant, p));
  });
  const listSettings = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const auth = await authorize(ctx, req, reply, audiences, true);
    if (!auth) return reply;
    return reply.type('application/json; charset=utf-8').send((auth.tenant.powerPlatform ?? emptyPowerPlatform()).tenantSettings);
  };
  // The docs spell the path listtenantsettings; TF listTenantSettings. Routes are case-sensitive here, so both.
  app.post('/providers/Microsoft.BusinessAppPlatform/listTenantSettings', listSettings);
  app.post('/providers/Microsoft.BusinessAppPlatform/listtenantsettings', listSettings);
  app.get<{ Params: { tid: string } }>('/providers/PowerPlatform.Governance/v1/tenants/:tid/tenantIsolationPolicy', async (req, reply) => {
    const auth = await authorize(ctx, req, reply, audiences, false);
    if (!auth) return reply;
    if (req.params.tid.toLowerCase() !== auth.tenant.id.toLowerCase())
      return ppError(reply, 403, 'Forbidden', `The caller cannot read the tenant isolation policy of tenant '${req.params.tid}'.`);
    const policy = auth.tenant.powerPlatform?.tenantIsolation ?? null;
    if (!policy) return ppError(reply, 404, 'TenantIsolationPolicyNotFound', `No tenant isolation policy exists for tenant '${auth.tenant.id}'.`);
    return reply
      .type('application/json; charset=utf-8')
      .send({ properties: { tenantId: auth.tenant.id, isDisabled: policy.isDisabled, allowedTenants: policy.allowedTenants } });
  });
}
