import type { EstateObject } from '../../../core/inventory.ts';
import { str, bool, obj, arr, type Json } from '../../../core/json.ts';
import { UpstreamHttpError } from '../../../platform/http/client.ts';
import { type Stream } from '../../stream.ts';
import { enc, TENANT_SETTINGS_API_VERSION } from '../admin.ts';

/**
 * The `tenantSettings` stream holds two objects: id `tenantSettings` (`listTenantSettings`) and id `tenantIsolation`
 * (the tenant isolation policy). The fields ScubaGear's MS.POWERPLATFORM checks read are lifted out; `settings` keeps
 * the whole body.
 *
 * Sources: Power Platform "List tenant settings" (`admin/list-tenantsettings.md`); terraform-provider-power-platform
 * `tenant_isolation_policy`.
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

/** Maps the `listTenantSettings` body to object `tenantSettings`. */
export function toTenantSettings(body: Json): EstateObject<TenantSettingsObjectAttrs> {
  const pp = obj(body.powerPlatform);
  const apps = obj(pp.powerApps);
  return {
    sliceKey: '*',
    id: 'tenantSettings',
    name: 'Power Platform tenant settings',
    attrs: {
      kind: 'tenantSettings',
      disableEnvironmentCreationByNonAdminUsers: bool(body.disableEnvironmentCreationByNonAdminUsers),
      disableTrialEnvironmentCreationByNonAdminUsers: bool(body.disableTrialEnvironmentCreationByNonAdminUsers),
      disableDeveloperEnvironmentCreationByNonAdminUsers: bool(obj(pp.governance).disableDeveloperEnvironmentCreationByNonAdminUsers),
      disablePortalsCreationByNonAdminUsers: bool(body.disablePortalsCreationByNonAdminUsers),
      disableShareWithEveryone: bool(apps.disableShareWithEveryone),
      enableGuestsToMake: bool(apps.enableGuestsToMake),
      disableConnectionSharingWithEveryone: bool(apps.disableConnectionSharingWithEveryone) ?? bool(apps.DisableConnectionSharingWithEveryone),
      settings: body,
    },
    raw: body,
  };
}

/** Maps the tenant isolation policy (null = none, 404) to object `tenantIsolation`. */
export function toTenantIsolation(body: Json | null): EstateObject<TenantIsolationAttrs> {
  const p = obj(body?.properties);
  const exists = body !== null;
  return {
    sliceKey: '*',
    id: 'tenantIsolation',
    name: 'Tenant isolation policy',
    attrs: {
      kind: 'tenantIsolation',
      exists,
      enabled: exists && p.isDisabled === false,
      allowedTenants: arr(p.allowedTenants).map((t) => {
        const o = obj(t);
        const d = obj(o.direction);
        return { tenantId: str(o.tenantId) ?? '', inbound: d.inbound === true, outbound: d.outbound === true };
      }),
    },
    raw: body ?? {},
  };
}

/** Cursor of the second page (the isolation policy) of {@link tenantSettingsStream}. */
const ISOLATION_CURSOR = 'tenantIsolation';

/** Tenant settings and the tenant isolation policy: two objects, one request each. */
export const tenantSettingsStream: Stream<'tenantSettings', EstateObject<TenantSettingsAttrs>> = {
  name: 'tenantSettings',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.bap.resource,
  async *read(ctx, _slice, cursor) {
    const token = ctx.tokens.bearer(ctx.cloud.bap.resource);
    if (cursor !== ISOLATION_CURSOR) {
      const res = await ctx.http.send<Json | null>({
        api: 'bap',
        method: 'POST',
        url: `${ctx.cloud.bap.baseUrl}/providers/Microsoft.BusinessAppPlatform/listTenantSettings?api-version=${TENANT_SETTINGS_API_VERSION}`,
        token,
        tenantId: ctx.tenantId,
      });
      yield { records: [toTenantSettings(obj(res.body))], nextCursor: ISOLATION_CURSOR };
    }
    let policy: Json | null;
    try {
      const res = await ctx.http.send<Json | null>({
        api: 'bap',
        url: `${ctx.cloud.bap.baseUrl}/providers/PowerPlatform.Governance/v1/tenants/${enc(ctx.tenantId)}/tenantIsolationPolicy`,
        token,
        tenantId: ctx.tenantId,
      });
      policy = obj(res.body);
    } catch (e) {
      if (!(e instanceof UpstreamHttpError && e.status === 404)) throw e;
      policy = null;
    }
    yield { records: [toTenantIsolation(policy)], nextCursor: null };
  },
};
