import type { ConnectorReference, PowerAppAttrs } from '../../../core/estate/powerPlatform.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { str, num, bool, obj, type Json } from '../../../core/json.ts';
import { connectorIdOf, principal, enc, powerAppsListStream, POWER_APPS_API_VERSION } from '../admin.ts';

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
export const powerAppsStream = powerAppsListStream(
  'powerApps',
  toPowerApp,
  (ctx, env) =>
    `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/scopes/admin/environments/${enc(env)}/apps?api-version=${POWER_APPS_API_VERSION}&$expand=permissions`,
);
