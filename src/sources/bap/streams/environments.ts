import { odataListStream } from '../../odata.ts';
import type { Stream } from '../../stream.ts';
import { str, obj, objOrNull, type Json } from '../../../core/json.ts';
import type { Collected } from '../../../core/inventory.ts';

/**
 * Power Platform environments from the admin API (BAP), visible once the application is registered as a Power
 * Platform admin management application (BAP answers 403 "does not have permission to access the path" before).
 *
 * Sources: Power Platform "List environments" (`admin/api/2020-10-01/environments/list-environments.md`);
 * "Create a service principal application" (`admin/powerplatform-api-create-service-principal.md`).
 */

/** A Power Platform environment (BAP `scopes/admin/environments`). */
export interface PowerPlatformEnvironment extends Collected {
  /** Environment name (a GUID, or `Default-<tenant id>`). */
  id: string;
  displayName: string | null;
  /** `Production`, `Sandbox`, `Developer`, `Trial`, `Default`. */
  sku: string | null;
  isDefault: boolean;
  region: string | null;
  /** Dataverse instance URL (`linkedEnvironmentMetadata.instanceUrl`), or null when the environment has no Dataverse. */
  dataverseUrl: string | null;
  /** `states.runtime.id`, e.g. `Enabled`. */
  state: string | null;
}

/**
 * The Managed Environments settings of an environment: BAP `properties.governanceConfiguration`.
 * `protectionLevel` `Standard` = a Managed Environment, `Basic` = not managed. The settings under
 * `settings.extendedSettings` are strings as BAP sends them: `limitSharingMode` (`noLimit` |
 * `excludeSharingToSecurityGroups`, casing varies), `maxLimitUserSharing` (`-1` = no cap), `isGroupSharingDisabled`
 * (`true`/`false`), `solutionCheckerMode` (`none` | `warn` | `block`), `excludeEnvironmentFromAnalysis`.
 *
 * Sources: Microsoft Learn "Enable Managed Environments using PowerShell" (power-platform/admin/
 * managed-environment-enable: `protectionLevel = "Standard"`, `extendedSettings`), "Limit sharing" (managed-environment-
 * sharing-limits), "Solution checker enforcement" (managed-environment-solution-checker); microsoft/terraform-provider-
 * power-platform `internal/services/environment/dto.go` (`GovernanceConfigurationDto`, `ExtendedSettingsDto`, all
 * strings) and its managed_environment resource (`ExcludeSharingToSecurityGroups` / `NoLimit`, `None`/`Warn`/`Block`).
 */
export interface EnvironmentGovernance {
  /** `protectionLevel`: `Standard` (managed) or `Basic`; null when BAP did not send it. */
  protectionLevel: string | null;
  /** True when `protectionLevel` is `Standard`. */
  managed: boolean;
  /** `extendedSettings.limitSharingMode` as sent, or null. */
  limitSharingMode: string | null;
  /** `extendedSettings.maxLimitUserSharing` as a number (-1 = no cap), or null. */
  maxLimitUserSharing: number | null;
  /** `extendedSettings.isGroupSharingDisabled` (`"true"`), or null. */
  groupSharingDisabled: boolean | null;
  /** `extendedSettings.solutionCheckerMode` lower-cased (`none`, `warn`, `block`), or null. */
  solutionCheckerMode: string | null;
}

/** Reads {@link EnvironmentGovernance} from a BAP environment object; null when it has no `governanceConfiguration`. */
export function environmentGovernance(j: Json): EnvironmentGovernance | null {
  const gov = objOrNull(obj(j.properties).governanceConfiguration);
  if (!gov) return null;
  const ext = obj(obj(gov.settings).extendedSettings);
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null);
  const max = text(ext.maxLimitUserSharing);
  const group = text(ext.isGroupSharingDisabled)?.toLowerCase();
  const protectionLevel = str(gov.protectionLevel);
  return {
    protectionLevel,
    managed: protectionLevel?.toLowerCase() === 'standard',
    limitSharingMode: text(ext.limitSharingMode),
    maxLimitUserSharing: max !== null && /^-?\d+$/.test(max.trim()) ? Number(max) : null,
    groupSharingDisabled: group === 'true' ? true : group === 'false' ? false : null,
    solutionCheckerMode: text(ext.solutionCheckerMode)?.toLowerCase() ?? null,
  };
}

/** The environments list API version used. */
export const BAP_API_VERSION = '2020-10-01';

/** Maps a BAP environment object to a {@link PowerPlatformEnvironment}. */
export function toEnvironment(j: Json): PowerPlatformEnvironment {
  const p = obj(j.properties);
  const linked = obj(p.linkedEnvironmentMetadata);
  return {
    id: String(j.name),
    displayName: str(p.displayName),
    sku: str(p.environmentSku),
    isDefault: p.isDefault === true,
    region: str(p.azureRegion) ?? str(j.location),
    dataverseUrl: str(linked.instanceUrl),
    state: str(obj(obj(p.states).runtime).id),
    raw: j,
  };
}

/**
 * Every environment of the tenant.
 * @throws VigilError `upstream` / `FOREIGN_LINK` when an environment's `linkedEnvironmentMetadata.instanceUrl` (or a
 *   `nextLink`) is off the hosts of the cloud profile: the page is not yielded, so the link is never stored.
 */
export const environmentsStream: Stream<'environments', PowerPlatformEnvironment, 'environments'> = odataListStream({
  name: 'environments',
  inventory: { kind: 'environments', position: 60 },
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.bap.resource,
  request: (ctx, _slice, cursor) => ({
    api: 'bap',
    url: cursor ?? `${ctx.cloud.bap.baseUrl}/providers/Microsoft.BusinessAppPlatform/scopes/admin/environments?api-version=${BAP_API_VERSION}`,
  }),
  map: (j, _slice, ctx) => {
    const env = toEnvironment(j);
    // The instance URL is stored and later receives a Dataverse token: refused here, before its page is stored.
    if (env.dataverseUrl !== null) ctx.http.links.check('dataverse', env.dataverseUrl, `instanceUrl of environment ${env.id}`);
    return env;
  },
});
