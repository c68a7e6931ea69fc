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
  arm: 'https://management.azure.com',
} as const;

/**
 * The Mode A permission lists of the integration contract (seed "Application permissions"): resource → application
 * permissions. `quick` is also Mode B's full list; `step-by-step` swaps the Graph list for User.Read.All + Group.Read.All.
 */
export const PERMISSION_SETS: Readonly<Record<'quick' | 'step-by-step', Readonly<Record<string, readonly string[]>>>> = {
  quick: {
    [RESOURCES.graph]: [
      'GroupMember.Read.All',
      'User.Read.All',
      'ExternalConnection.Read.All',
      'TeamsAppInstallation.ReadForUser.All',
      'AiEnterpriseInteraction.Read.All',
    ],
    [RESOURCES.managementActivity]: ['ActivityFeed.Read'],
    [RESOURCES.powerBi]: ['Tenant.Read.All'],
  },
  'step-by-step': {
    [RESOURCES.graph]: ['User.Read.All', 'Group.Read.All'],
    [RESOURCES.managementActivity]: ['ActivityFeed.Read'],
    [RESOURCES.powerBi]: ['Tenant.Read.All'],
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
