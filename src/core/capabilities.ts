/**
 * What Vigil can do for a tenant, and which grant each capability needs. Both permission lists of the seed are
 * understood: the quick list (Graph GroupMember.Read.All, User.Read.All, ExternalConnection.Read.All,
 * TeamsAppInstallation.ReadForUser.All, AiEnterpriseInteraction.Read.All) and the step-by-step list of Mode A (Graph
 * User.Read.All, Group.Read.All); both add ActivityFeed.Read (Office 365 Management APIs) and Tenant.Read.All
 * (Power BI Service) — but Power BI access is judged by the API's answer, not by `roles` (see `judgedByApi`), since
 * Microsoft documents the read-only admin APIs for service principals WITHOUT Power BI permissions. A broader permission that Microsoft documents as sufficient (Directory.Read.All) also counts.
 *
 * Sources: the seed's permission table; Microsoft Graph permissions reference
 * (https://learn.microsoft.com/graph/permissions-reference) and the per-API pages (user-list, group-list-members,
 * externalconnectors-external-list-connections, userteamwork-list-installedapps,
 * aiinteractionhistory-getallenterpriseinteractions); Office 365 Management Activity API reference; Power BI REST.
 */

/** API families for which Vigil asks tokens, as named in the Entra admin center's "Request API permissions". */
export type PermissionApi = 'graph' | 'managementActivity' | 'powerBi';

/** Display names of the APIs as shown in the Microsoft Entra admin center. */
export const API_DISPLAY_NAMES: Record<PermissionApi, string> = {
  graph: 'Microsoft Graph',
  managementActivity: 'Office 365 Management APIs',
  powerBi: 'Power BI Service',
};

/** Ids of the permission capabilities; a stream names the one that gates it (`Stream.capability`). */
export type CapabilityId =
  | 'directory.users'
  | 'directory.groups'
  | 'graph.externalConnections'
  | 'teams.installedApps'
  | 'copilot.interactions'
  | 'audit.activityFeed'
  | 'powerBi.tenant';

/**
 * A capability whose grant is an application permission (visible in the token's `roles`). The streams it gates
 * declare it themselves (`Stream.capability` in `sources/`).
 */
export interface PermissionCapability {
  id: CapabilityId;
  title: string;
  api: PermissionApi;
  /** Any one of these application permissions grants the capability. */
  anyOf: string[];
  /** The permission to add when none is granted (the seed's quick-list choice). */
  recommended: string;
  /**
   * True when the `roles` claim does not decide access and the API's answer does: the Power BI read-only admin APIs
   * serve a service principal that holds NO Power BI permission when the Fabric tenant setting "Service principals can
   * access read-only admin APIs" covers it, and Microsoft documents that such an app must not hold admin-consented Power
   * BI permissions (learn.microsoft.com/fabric/admin/enable-service-principal-admin-apis; every Power BI admin API page,
   * "Required Scope": "Must not be present when authentication via a service principal is used"). Such capabilities are
   * never gated on `roles`: the streams are called and a refusal is recorded with its cause.
   */
  judgedByApi?: true;
}

/** The seed's permission lists, per API. */
export const PERMISSION_LISTS: Record<'quick' | 'step-by-step', Record<PermissionApi, string[]>> = {
  quick: {
    graph: ['GroupMember.Read.All', 'User.Read.All', 'ExternalConnection.Read.All', 'TeamsAppInstallation.ReadForUser.All', 'AiEnterpriseInteraction.Read.All'],
    managementActivity: ['ActivityFeed.Read'],
    powerBi: ['Tenant.Read.All'],
  },
  'step-by-step': {
    graph: ['User.Read.All', 'Group.Read.All'],
    managementActivity: ['ActivityFeed.Read'],
    powerBi: ['Tenant.Read.All'],
  },
};

/** Capabilities granted by application permissions. */
export const PERMISSION_CAPABILITIES: readonly PermissionCapability[] = [
  {
    id: 'directory.users',
    title: 'Users and guests (agent owners)',
    api: 'graph',
    anyOf: ['User.Read.All', 'Directory.Read.All'],
    recommended: 'User.Read.All',
  },
  {
    id: 'directory.groups',
    title: 'Groups and group memberships',
    api: 'graph',
    anyOf: ['GroupMember.Read.All', 'Group.Read.All', 'Directory.Read.All'],
    recommended: 'GroupMember.Read.All',
  },
  {
    id: 'graph.externalConnections',
    title: 'Microsoft Search external connections',
    api: 'graph',
    anyOf: ['ExternalConnection.Read.All'],
    recommended: 'ExternalConnection.Read.All',
  },
  {
    id: 'teams.installedApps',
    title: 'Teams apps installed per user',
    api: 'graph',
    anyOf: ['TeamsAppInstallation.ReadForUser.All'],
    recommended: 'TeamsAppInstallation.ReadForUser.All',
  },
  {
    id: 'copilot.interactions',
    title: 'Microsoft 365 Copilot interaction history',
    api: 'graph',
    anyOf: ['AiEnterpriseInteraction.Read.All'],
    recommended: 'AiEnterpriseInteraction.Read.All',
  },
  {
    id: 'audit.activityFeed',
    title: 'Audit log (Office 365 Management Activity API)',
    api: 'managementActivity',
    anyOf: ['ActivityFeed.Read'],
    recommended: 'ActivityFeed.Read',
  },
  {
    id: 'powerBi.tenant',
    title: 'Power BI tenant inventory and activity',
    api: 'powerBi',
    anyOf: ['Tenant.Read.All', 'Tenant.ReadWrite.All'],
    recommended: 'Tenant.Read.All',
    judgedByApi: true,
  },
];

/** The permission capability of an id. */
export function permissionCapability(id: CapabilityId): PermissionCapability {
  return PERMISSION_CAPABILITIES.find((c) => c.id === id)!;
}

/** True when `roles` (a token's `roles` claim) grants the capability. */
export function isGranted(capability: PermissionCapability, roles: readonly string[]): boolean {
  return capability.anyOf.some((p) => roles.includes(p));
}
