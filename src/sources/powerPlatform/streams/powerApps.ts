import type { EstateObject } from '../../../core/inventory.ts';
import { str, num, bool, obj, type Json } from '../../../core/json.ts';
import { connectorIdOf, principal, enc, powerAppsListStream, POWER_APPS_API_VERSION } from '../admin.ts';
import type { Stream } from '../../stream.ts';
import type { ConnectorReference, PowerPlatformPrincipal } from '../admin.ts';

/**
 * Attributes of a Power App (admin `apps`).
 *
 * Sources: reference §3.3 (admin inventory endpoints); pnp/cli-microsoft365 `pa app list` (app shape: `appType`,
 * `sharedUsersCount`, `sharedGroupsCount`, `bypassConsent`). Dates are ISO 8601 UTC as the API returns them; `null`
 * means the API did not return the field.
 */
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

/** Maps an admin app to {@link PowerAppAttrs}. */
export function toPowerApp(environmentId: string, j: Json): EstateObject<PowerAppAttrs> {
  const p = obj(j.properties);
  const rawType = str(j.appType) ?? str(p.appType);
  const appType = rawType === 'ClassicCanvasApp' || rawType === 'CanvasApp' ? 'canvas' : rawType === 'ModelDrivenApp' ? 'model-driven' : rawType;
  const perms = Array.isArray(p.permissions) ? p.permissions.map(obj) : null;
  const refs: ConnectorReference[] = Object.values(obj(p.connectionReferences)).map((v) => {
    const r = obj(v);
    return {
      connectorId: connectorIdOf(r.id) ?? str(r.id) ?? '',
      displayName: str(r.displayName),
      connectionName: null,
      isCustom: bool(r.isCustomApiConnection),
    };
  });
  const name = String(j.name);
  return {
    sliceKey: environmentId,
    id: name,
    name: str(p.displayName) ?? str(j.displayName),
    attrs: {
      environmentId,
      displayName: str(p.displayName) ?? str(j.displayName),
      appType,
      owner: principal(p.owner),
      createdTime: str(p.createdTime),
      lastModifiedTime: str(p.lastModifiedTime),
      lastPublishTime: str(p.lastPublishTime),
      sharedUsersCount: num(p.sharedUsersCount),
      sharedGroupsCount: num(p.sharedGroupsCount),
      sharedWithTenant: perms ? perms.some((x) => str(obj(obj(x.properties).principal).type)?.toLowerCase() === 'tenant') : null,
      connectionReferences: refs,
      isBypassConsent: bool(p.bypassConsent),
      usesCustomApi: bool(p.usesCustomApi),
    },
    raw: j,
  };
}

/** Power Apps of each environment. */
export const powerAppsStream: Stream<'powerApps', EstateObject<PowerAppAttrs>, 'apps'> = powerAppsListStream(
  'powerApps',
  { kind: 'apps', position: 20, environment: true },
  toPowerApp,
  (ctx, env) =>
    `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/scopes/admin/environments/${enc(env)}/apps?api-version=${POWER_APPS_API_VERSION}&$expand=permissions`,
);
