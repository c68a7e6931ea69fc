import { describeAction } from './actions.ts';

/**
 * Fixes that several layers state (verification, check coverage, environment grants, the setup doctor): one wording,
 * kept here. Source: Power Platform "Manage application users" (learn.microsoft.com/power-platform/admin/manage-application-users).
 */

/** Where a person gives the application System Administrator in an environment. */
export const APPLICATION_USER_FIX = `In the Power Platform admin center open Manage > Environments > the environment > Settings > Users + permissions > Application users, choose + New app user, pick the application and give it the System Administrator security role; or ${describeAction({ do: 'grantEnvironmentAccess' })}.`;

/** Why Dataverse refused to let the application read agents, by Dataverse error code. */
export const DATAVERSE_ACCESS_REASONS: Readonly<Record<string, string>> = {
  '0x80072560': `Vigil's application has no application user in this environment. ${APPLICATION_USER_FIX}`,
  '0x80040220': `Vigil's application user lacks privileges in this environment: it needs the System Administrator security role. ${APPLICATION_USER_FIX}`,
};
