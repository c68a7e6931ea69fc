/**
 * Resource identifiers and permission lists the emulator shares between its generator, token endpoint and services.
 */

/**
 * Token audiences (resource identifiers without trailing slash) of the public cloud, as the real services expect them.
 * Sources: Graph/Management Activity/Power BI scopes (reference §5, §6, §7), BAP `https://service.powerapps.com`
 * (terraform-provider-power-platform `constants.go`), ARM (reference §8).
 */
export const RESOURCES = {
  graph: 'https://graph.microsoft.com',
  managementActivity: 'https://manage.office.com',
  powerBi: 'https://analysis.windows.net/powerbi/api',
  bap: 'https://service.powerapps.com',
  bapAlternate: 'https://api.bap.microsoft.com',
  powerPlatform: 'https://api.powerplatform.com',
  /** Power Automate admin API audience (reference §3.1: UNCONFIRMED, from a third-party script). */
  flow: 'https://service.flow.microsoft.com',
  arm: 'https://management.azure.com',
} as const;

/** The Graph application permissions of the seed's quick list. */
const QUICK_GRAPH_PERMISSIONS: readonly string[] = [
  'GroupMember.Read.All',
  'User.Read.All',
  'ExternalConnection.Read.All',
  'TeamsAppInstallation.ReadForUser.All',
  'AiEnterpriseInteraction.Read.All',
];

/**
 * The Mode A permission lists of the integration contract (seed "Application permissions"): resource → application
 * permissions. `quick` is also Mode B's full list; `step-by-step` swaps the Graph list for User.Read.All + Group.Read.All;
 * `documented` is the quick list set up as Microsoft documents Power BI's read-only admin APIs.
 */
export const PERMISSION_SETS: Readonly<Record<'quick' | 'step-by-step' | 'documented', Readonly<Record<string, readonly string[]>>>> = {
  quick: {
    [RESOURCES.graph]: QUICK_GRAPH_PERMISSIONS,
    [RESOURCES.managementActivity]: ['ActivityFeed.Read'],
    [RESOURCES.powerBi]: ['Tenant.Read.All'],
  },
  'step-by-step': {
    [RESOURCES.graph]: ['User.Read.All', 'Group.Read.All'],
    [RESOURCES.managementActivity]: ['ActivityFeed.Read'],
    [RESOURCES.powerBi]: ['Tenant.Read.All'],
  },
  // The quick list without Power BI permissions: Microsoft documents that a service principal calling the read-only
  // admin APIs must hold none (https://learn.microsoft.com/fabric/admin/enable-service-principal-admin-apis); access
  // comes from the tenant setting "Service principals can access read-only admin APIs" instead.
  documented: {
    [RESOURCES.graph]: QUICK_GRAPH_PERMISSIONS,
    [RESOURCES.managementActivity]: ['ActivityFeed.Read'],
  },
};

/** Application permissions that belong to the Management Activity API rather than Graph (for bare names). */
export const MANAGEMENT_ACTIVITY_PERMISSIONS: readonly string[] = ['ActivityFeed.Read', 'ActivityFeed.ReadDlp', 'ServiceHealth.Read'];

/** Application permissions that belong to the Power BI service rather than Graph (for bare names). */
export const POWER_BI_PERMISSIONS: readonly string[] = ['Tenant.Read.All', 'Tenant.ReadWrite.All'];

/** The Dataverse security role that lets an application user read every table. */
export const SYSTEM_ADMINISTRATOR = 'System Administrator';

/** Days without modification or publication after which an agent counts as dormant (Maester MT.1117). */
export const DORMANT_DAYS = 180;

/**
 * Entra directory role template ids (https://learn.microsoft.com/entra/identity/role-based-access-control/permissions-reference);
 * user tokens carry the signed-in user's role template ids in `wids`.
 */
export const DIRECTORY_ROLES = {
  globalAdministrator: '62e90394-69f5-4237-9190-012177145e10',
  powerPlatformAdministrator: '11648597-926c-4cf3-9c36-bcebb0ba8dcc',
} as const;

/** Directory roles that may manage Power Platform (BAP adminApplications, addAppUser) and act as Dataverse admins. */
export const POWER_PLATFORM_ADMIN_ROLES: readonly string[] = [DIRECTORY_ROLES.globalAdministrator, DIRECTORY_ROLES.powerPlatformAdministrator];

/**
 * First-party public clients accepted for the password and device-code grants without a secret (reference §3.1):
 * Azure CLI, Azure PowerShell, and the Microsoft.PowerApps.Administration.PowerShell module (MSAL, public cloud).
 */
export const PUBLIC_CLIENT_IDS = {
  azureCli: '04b07795-8ddb-461a-bbee-02f9e1bf7b46',
  azurePowerShell: '1950a258-227b-4e31-a9cf-717495945fc2',
  powerAppsModule: '689e5960-2e49-4505-98d8-369236220fc6',
} as const;

/**
 * Application ids of the resource service principals, as AADSTS50076/50079 texts name them ("… to access '{id}'").
 * Graph, Power BI, Dynamics CRM and ARM are Microsoft's well-known first-party ids; the Office 365 Management APIs and
 * PowerApps Service ids are from memory (UNCONFIRMED). Unknown resources are named by their URI.
 */
export const RESOURCE_APP_IDS: Readonly<Record<string, string>> = {
  [RESOURCES.graph]: '00000003-0000-0000-c000-000000000000',
  [RESOURCES.managementActivity]: 'c5393580-f805-4401-95e8-94b7a6ef2fc2',
  [RESOURCES.powerBi]: '00000009-0000-0000-c000-000000000000',
  [RESOURCES.bap]: '475226c6-020e-4fb2-8a90-7a972cbfc1d4',
  [RESOURCES.bapAlternate]: '475226c6-020e-4fb2-8a90-7a972cbfc1d4',
  [RESOURCES.powerPlatform]: '8578e004-a5c6-46e7-913e-12f58912df43',
  [RESOURCES.arm]: '797f4846-ba00-4fd7-ba43-dac1f8f63013',
};

/** Dataverse security roles every emulated org has (root business unit). */
export const DATAVERSE_ROLE_NAMES: readonly string[] = [SYSTEM_ADMINISTRATOR, 'System Customizer', 'Basic User', 'Environment Maker'];
