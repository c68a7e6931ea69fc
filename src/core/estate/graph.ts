/**
 * Normalised attributes of the Microsoft Graph estate streams `externalConnections` and `teamsApps`.
 *
 * Sources: reference §5.5; learn.microsoft.com/graph/api/externalconnectors-external-list-connections and
 * /graph/api/resources/externalconnectors-externalconnection (`state`: draft, ready, obsolete, limitExceeded;
 * `configuration.authorizedAppIds`); /graph/api/userteamwork-list-installedapps, /graph/api/resources/teamsapp
 * (`distributionMethod`: store, organization, sideloaded; `externalId` empty for store apps),
 * /graph/api/resources/teamsappdefinition (`azureADAppId` = the manifest's `webApplicationInfo.id`,
 * `publishingState`: submitted, published, rejected).
 */

/**
 * A Microsoft Search external connection (Copilot connector) that feeds external content into Microsoft Search and
 * Microsoft 365 Copilot. `id` = the connection id; slice `*`.
 */
export interface ExternalConnectionAttrs {
  /** Display name. */
  name: string | null;
  description: string | null;
  /** `draft`, `ready`, `obsolete`, `limitExceeded` (as Graph returns it; null when absent). */
  state: string | null;
  /** `configuration.authorizedAppIds`: application (client) ids allowed to push items; empty when none listed. */
  authorizedAppIds: string[];
  /** Id of the Microsoft-built connector it was created from; null for a custom (API-built) connection. */
  connectorId: string | null;
}

/**
 * A Teams app installed in one user's personal scope (Graph `userScopeTeamsAppInstallation` with `teamsApp` and
 * `teamsAppDefinition` expanded). `id` = `{userId}/{installation id}`; slice = the user id. Collected for every
 * directory user, members and guests, enabled or disabled (a disabled user's installations stay in place).
 * Whether the app is a Copilot agent or a bot is not returned under TeamsAppInstallation.ReadForUser.All (the
 * definition's `bot` needs AppCatalog.Read.All): a sideloaded app with `azureADAppId` is the closest signal.
 */
export interface TeamsAppAttrs {
  /** The directory user the app is installed for. */
  userId: string;
  /** Installation id as Graph returns it (base64). */
  installationId: string;
  /** Catalogue id of the app (`teamsApp.id`, else `teamsAppDefinition.teamsAppId`). */
  teamsAppId: string | null;
  /** Manifest id (`teamsApp.externalId`); null for store apps. */
  externalId: string | null;
  displayName: string | null;
  /** Installed version (`teamsAppDefinition.version`). */
  version: string | null;
  /** `store` (Teams store), `organization` (the tenant's catalogue), `sideloaded` (custom upload), or null. */
  distributionMethod: string | null;
  /** Entra application id behind the app's SSO/bot (`teamsAppDefinition.azureADAppId`), or null. */
  azureADAppId: string | null;
  /** `published`, `submitted`, `rejected`, or null. */
  publishingState: string | null;
}
