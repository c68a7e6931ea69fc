/**
 * Normalised attributes of the Power Platform estate streams (`powerApps`, `flows`, `connectors`, `connections`,
 * `dlpPolicies`, `tenantSettings`). Dates are ISO 8601 UTC strings as the API returns them; `null` means the API did
 * not return the field. Connector ids are the connector names (`shared_office365`, or a custom connector's
 * `shared_{name}-5f{hex}`), taken from the last segment of `/providers/Microsoft.PowerApps/apis/{name}`.
 *
 * Sources: reference §3.3 (admin inventory endpoints); pnp/cli-microsoft365 `pa app list` (app shape: `appType`,
 * `sharedUsersCount`, `sharedGroupsCount`, `bypassConsent`), `flow list` (flow shape: `state`, `creator`,
 * `definitionSummary`); terraform-provider-power-platform connection fixtures (`createdBy`, `statuses`,
 * `connectionParameters`, `permissions`, `accountName`), `dlp_policy` and `tenant_isolation_policy`; Power Platform
 * "List tenant settings" (`admin/list-tenantsettings.md`).
 */

/** A person or principal as the Power Platform APIs name it (`owner`, `createdBy`). */
export interface PowerPlatformPrincipal {
  /** Microsoft Entra object id. */
  id: string | null;
  displayName: string | null;
  userPrincipalName: string | null;
}

/** A connector an app or flow uses. */
export interface ConnectorReference {
  /** Connector name, e.g. `shared_sql`. */
  connectorId: string;
  displayName: string | null;
  /** The connection the flow uses for it (flows whose definition was read only), else null. */
  connectionName: string | null;
  /** True for custom connectors (apps: `isCustomApiConnection`). */
  isCustom: boolean | null;
}

/** Attributes of a Power App (admin `apps`). */
export interface PowerAppAttrs {
  environmentId: string;
  displayName: string | null;
  /** `canvas` (`ClassicCanvasApp`), `model-driven` (`ModelDrivenApp`), or the raw `appType` when unknown. */
  appType: string | null;
  owner: PowerPlatformPrincipal;
  createdTime: string | null;
  lastModifiedTime: string | null;
  lastPublishTime: string | null;
  /** `properties.sharedUsersCount`: people the app is shared with. */
  sharedUsersCount: number | null;
  /** `properties.sharedGroupsCount`: groups the app is shared with. */
  sharedGroupsCount: number | null;
  /**
   * Shared with everyone in the tenant: a role assignment whose principal `type` is `Tenant` (read with
   * `$expand=permissions`; `Set-AdminPowerAppRoleAssignment -PrincipalType Tenant`). Null when the answer carried no
   * permissions.
   */
  sharedWithTenant: boolean | null;
  /** Connectors the app uses (`properties.connectionReferences`). */
  connectionReferences: ConnectorReference[];
  /** `properties.bypassConsent`: users are not prompted to consent to the app's connections. */
  isBypassConsent: boolean | null;
  /** `properties.usesCustomApi`. */
  usesCustomApi: boolean | null;
}

/** A trigger or action type of a flow (`definitionSummary`). */
export interface FlowStepSummary {
  /** Workflow definition type: `Request`, `Recurrence`, `Http`, `HttpWebhook`, `OpenApiConnection`, … */
  type: string;
  /** Trigger kind (`Button`, `Http`) when given. */
  kind: string | null;
  /** Connector name for connector steps. */
  connectorId: string | null;
}

/** An HTTP call a flow makes. */
export interface FlowHttpTarget {
  /** `Http`, `HttpWebhook`, or the HTTP connector's name (`shared_webcontents`). */
  via: string;
  method: string | null;
  /** The URL as written in the definition (may hold expressions). */
  url: string;
  /** Lower-case host of the URL, or null when it is not an absolute URL (an expression). */
  host: string | null;
}

/** Attributes of a cloud flow (admin `v2/flows`). */
export interface FlowAttrs {
  environmentId: string;
  displayName: string | null;
  /** `Started`, `Stopped` or `Suspended`. */
  state: string | null;
  /** `properties.creator`: Entra object id and user id of the maker. */
  creator: { objectId: string | null; userId: string | null; userType: string | null };
  createdTime: string | null;
  lastModifiedTime: string | null;
  triggers: FlowStepSummary[];
  actions: FlowStepSummary[];
  /** True when a trigger is an HTTP request trigger (`Request` of kind `Http`): anyone with the URL can start it. */
  hasHttpTrigger: boolean;
  /** True when an action is `Http`, `HttpWebhook` or an HTTP connector. */
  hasHttpAction: boolean;
  /**
   * The URLs of the HTTP actions. The list API carries no URIs: they come from the flow's definition, read only for
   * flows whose summary shows an HTTP action (`definitionRead`). Empty otherwise.
   */
  httpTargets: FlowHttpTarget[];
  /** Connectors used (from the summary), with connection names when the definition was read. */
  connectionReferences: ConnectorReference[];
  /** Whether the single-flow definition was read for this flow. */
  definitionRead: boolean;
}

/** Attributes of a connector as listed in one environment. */
export interface ConnectorAttrs {
  environmentId: string;
  /** Connector name (`shared_sql`). */
  connectorId: string;
  displayName: string | null;
  /** `properties.isCustomApi`. */
  isCustom: boolean;
  publisher: string | null;
  /** `Standard` or `Premium` (`properties.tier`). */
  tier: string | null;
  /** Custom connectors: the backend URL (`backendService.serviceUrl`, or `swagger` scheme + host + basePath). */
  backendUrl: string | null;
  /** Lower-case host of {@link backendUrl}. */
  backendHost: string | null;
  createdBy: PowerPlatformPrincipal | null;
  createdTime: string | null;
}

/** Attributes of a connection (admin `connections`). */
export interface ConnectionAttrs {
  environmentId: string;
  /** Connector name (`properties.apiId`'s last segment). */
  connectorId: string | null;
  displayName: string | null;
  /** The maker who created it: the connection runs on this person's credentials when `authenticationType` is `oauth`. */
  createdBy: PowerPlatformPrincipal;
  createdTime: string | null;
  lastModifiedTime: string | null;
  /** `properties.statuses[].status`: `Connected`, `Error`, … */
  statuses: string[];
  /** True when any status is not `Connected`. */
  isErrored: boolean;
  /**
   * How the connection authenticates: `oauth` (delegated; `connectionParameters['token:grantType']`), the
   * `connectionParametersSet.name` (e.g. `oauthSP` for a service principal), or `connectionParameters.authType`;
   * null when none is given.
   */
  authenticationType: string | null;
  /** `properties.accountName`: the account the connection signs in as (whose credentials it runs on). */
  accountName: string | null;
  /** Shared beyond its owner (any role assignment besides `Owner`). */
  isShared: boolean;
  /** Shared with everyone (a `Tenant` principal). */
  sharedWithTenant: boolean;
  /** Object ids of the users and groups it is shared with. */
  sharedWith: string[];
}

/** Attributes of a DLP policy (`PowerPlatform.Governance/v2/policies/{name}`: the single policy, with its groups). */
export interface DlpPolicyAttrs {
  displayName: string | null;
  /** `AllEnvironments`, `ExceptEnvironments`, `OnlyEnvironments` (or other values the API returns). */
  environmentType: string | null;
  /** Environment names included (`OnlyEnvironments`) or excluded (`ExceptEnvironments`). */
  environments: string[];
  /** `Confidential` (business), `General` (non-business) or `Blocked`: the group of unlisted connectors. */
  defaultConnectorsClassification: string | null;
  /** Connector names in the business (`Confidential`) group. */
  business: string[];
  /** Connector names in the non-business (`General`) group. */
  nonBusiness: string[];
  /** Connector names in the `Blocked` group. */
  blocked: string[];
  /**
   * Whether the policy body carried `connectorGroups` (the single-policy GET does; the list does not). When false the
   * three groups above are unknown, not empty. Absent on rows stored before this field existed.
   */
  connectorGroupsRead?: boolean;
  createdTime: string | null;
  lastModifiedTime: string | null;
}

/**
 * The `tenantSettings` stream holds two objects: id `tenantSettings` (`listTenantSettings`) and id `tenantIsolation`
 * (the tenant isolation policy). The fields ScubaGear's MS.POWERPLATFORM checks read are lifted out; `settings` keeps
 * the whole body.
 */
export type TenantSettingsAttrs = TenantSettingsObjectAttrs | TenantIsolationAttrs;

/** Id `tenantSettings`. Booleans are null when the body lacks them. */
export interface TenantSettingsObjectAttrs {
  kind: 'tenantSettings';
  /** MS.POWERPLATFORM.1.1: only admins create production/sandbox environments when true. */
  disableEnvironmentCreationByNonAdminUsers: boolean | null;
  /** MS.POWERPLATFORM.1.2: only admins create trial environments when true. */
  disableTrialEnvironmentCreationByNonAdminUsers: boolean | null;
  /** `powerPlatform.governance.disableDeveloperEnvironmentCreationByNonAdminUsers`. */
  disableDeveloperEnvironmentCreationByNonAdminUsers: boolean | null;
  /** MS.POWERPLATFORM.5.1: only admins create Power Pages sites when true. */
  disablePortalsCreationByNonAdminUsers: boolean | null;
  /** `powerPlatform.powerApps.disableShareWithEveryone`. */
  disableShareWithEveryone: boolean | null;
  /** `powerPlatform.powerApps.enableGuestsToMake`. */
  enableGuestsToMake: boolean | null;
  /** `powerPlatform.powerApps.disableConnectionSharingWithEveryone`. */
  disableConnectionSharingWithEveryone: boolean | null;
  /** The whole `listTenantSettings` body. */
  settings: Record<string, unknown>;
}

/** Id `tenantIsolation` (MS.POWERPLATFORM.3.1). */
export interface TenantIsolationAttrs {
  kind: 'tenantIsolation';
  /** False when no policy exists (the API answered 404) or `isDisabled` is true. */
  enabled: boolean;
  /** Whether a policy object exists. */
  exists: boolean;
  /** Tenants allowed across the boundary (`*` = any), with directions. */
  allowedTenants: { tenantId: string; inbound: boolean; outbound: boolean }[];
}
