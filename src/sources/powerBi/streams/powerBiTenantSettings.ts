import { VigilError } from '../../../core/errors.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { arr, bool, obj, objects, str, type Json } from '../../../core/json.ts';
import { UpstreamHttpError } from '../../../platform/http/client.ts';
import type { Stream, StreamContext } from '../../stream.ts';
import { powerBiAdminCall } from '../scanner.ts';

/**
 * `powerBiTenantSettings`: the Fabric / Power BI tenant settings (Fabric admin portal > Tenant settings), one object
 * per setting, read by the Fabric admin API "Tenants - List Tenant Settings".
 *
 * Request: `GET {powerBi}/v1/admin/tenantsettings` with the Power BI token, answered page by page (`continuationUri`,
 * else `continuationToken` → `?continuationToken=…`). Microsoft publishes the operation at
 * `https://api.fabric.microsoft.com/v1/admin/tenantsettings`; the Fabric API is the Power BI service's (same token
 * audience family, same "Service principals can access read-only admin APIs" gate for service principals), and
 * CISA ScubaGear reads the same operation at `{powerBi}/v1/admin/tenantsettings` with a Power BI token
 * (`Modules/Providers/ExportPowerBIProvider.psm1`). Vigil keeps the call on the profile's Power BI host, so the token
 * never leaves the API it was issued for. Limit: 25 requests per minute (one request per collection here); drawn on
 * the Power BI admin budget.
 *
 * Response: `{ value: TenantSetting[], continuationUri?, continuationToken? }` (Fabric REST specs
 * `admin/definitions.json` TenantSettings + PaginatedResponse), or `{ tenantSettings: TenantSetting[] }` as older
 * documentation and ScubaGear read it; both are accepted. TenantSetting: `settingName`, `title`, `enabled`,
 * `canSpecifySecurityGroups`, `tenantSettingGroup`, `enabledSecurityGroups[{graphId,name}]`,
 * `excludedSecurityGroups[…]`, `properties[{name,value,type}]`, `delegateToWorkspace|Capacity|Domain`.
 * Sources: learn.microsoft.com/rest/api/fabric/admin/tenants/list-tenant-settings; microsoft/fabric-rest-api-specs
 * `admin/swagger.json` (Tenants_ListTenantSettings, x-ms-pageable nextLinkName `continuationUri`).
 *
 * A refusal (401/403) or an absent API (404) fails the stream with the reason and the fix: the checks that read it
 * are then "not evaluated", never passed.
 */

/** A security group a tenant setting names (`TenantSettingSecurityGroup`). */
interface TenantSettingGroup {
  graphId: string;
  name: string | null;
}

/**
 * A Fabric tenant setting. `id` = `settingName` (e.g. `PublishToWeb`); slice `*`. Raw = the setting as returned.
 * `enabled` with no `enabledSecurityGroups` applies to the entire organisation (less `excludedSecurityGroups`).
 */
export interface PowerBiTenantSettingAttrs {
  settingName: string;
  title: string | null;
  /** On (for the organisation or the groups below), or off; null when the body lacks it. */
  enabled: boolean | null;
  /** Whether the setting can be scoped to security groups at all. */
  canSpecifySecurityGroups: boolean | null;
  /** `tenantSettingGroup`, e.g. `ExportAndSharing` or "Export and sharing settings". */
  group: string | null;
  /** The groups the setting is enabled for; empty = the entire organisation when enabled. */
  enabledSecurityGroups: TenantSettingGroup[];
  /** Groups excluded from an enabled setting. */
  excludedSecurityGroups: TenantSettingGroup[];
  /** `properties[]` (`{name, value, type}`; values are strings). */
  properties: { name: string; value: string | null; type: string | null }[];
  delegateToWorkspace: boolean | null;
  delegateToCapacity: boolean | null;
  delegateToDomain: boolean | null;
}

function groups(v: unknown): TenantSettingGroup[] {
  return objects(v)
    .map((g) => ({ graphId: str(g.graphId) ?? '', name: str(g.name) }))
    .filter((g) => g.graphId !== '');
}

/** Maps one `TenantSetting` to its estate object (null without a `settingName`). */
function toTenantSetting(t: Json): EstateObject<PowerBiTenantSettingAttrs> | null {
  const settingName = str(t.settingName);
  if (!settingName) return null;
  return {
    sliceKey: '*',
    id: settingName,
    name: str(t.title) ?? settingName,
    attrs: {
      settingName,
      title: str(t.title),
      enabled: bool(t.enabled),
      canSpecifySecurityGroups: bool(t.canSpecifySecurityGroups),
      group: str(t.tenantSettingGroup),
      enabledSecurityGroups: groups(t.enabledSecurityGroups),
      excludedSecurityGroups: groups(t.excludedSecurityGroups),
      properties: objects(t.properties).map((p) => ({
        name: str(p.name) ?? '',
        value: p.value === undefined || p.value === null ? null : String(p.value),
        type: str(p.type),
      })),
      delegateToWorkspace: bool(t.delegateToWorkspace),
      delegateToCapacity: bool(t.delegateToCapacity),
      delegateToDomain: bool(t.delegateToDomain),
    },
    raw: t,
  };
}

/** The endpoint of List Tenant Settings on the profile's Power BI host. */
function settingsUrl(ctx: StreamContext): string {
  return `${ctx.cloud.powerBi.baseUrl}/v1/admin/tenantsettings`;
}

/** A refusal (401/403) or a missing API (404), worded for a stream recorded as not collected; other errors unchanged. */
function explain(e: unknown): unknown {
  if (e instanceof VigilError && e.code === 'POWER_BI_NOT_AUTHORIZED') return e;
  if (!(e instanceof UpstreamHttpError)) return e;
  if (e.status === 401 || e.status === 403) {
    return new VigilError(
      'POWER_BI_NOT_AUTHORIZED',
      `Not collected: the Fabric admin API refused List Tenant Settings (${e.status}${e.upstreamCode ? ` ${e.upstreamCode}` : ''}), so the Power BI tenant settings could not be read.`,
      {
        remediation:
          'Fabric admin portal > Tenant settings > Admin API settings > "Service principals can access read-only admin APIs": Enabled, applied to a security group holding the app; the app must hold no admin-consented Power BI Service application permission.',
        cause: e,
      },
    );
  }
  if (e.status === 404) {
    return new VigilError(
      'POWER_BI_TENANT_SETTINGS_UNAVAILABLE',
      `Not collected: the Fabric admin API answered 404 to List Tenant Settings, so the Power BI tenant settings could not be read (the tenant may have no Power BI / Fabric service, or this cloud lacks the API).`,
      { cause: e },
    );
  }
  return e;
}

/** Every Fabric / Power BI tenant setting, in full each round (settings no longer listed are marked deleted). Cursor: the next page URL. */
export const powerBiTenantSettingsStream: Stream<'powerBiTenantSettings', EstateObject<PowerBiTenantSettingAttrs>> = {
  name: 'powerBiTenantSettings',
  capability: 'powerBi.tenant',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.powerBi.resource,
  async *read(ctx, _slice, cursor) {
    const endpoint = settingsUrl(ctx);
    let url: string | undefined = cursor ?? endpoint;
    if (cursor !== null) ctx.http.links.check('powerBi', cursor, 'the stored continuationUri');
    for (let pages = 0; url !== undefined; pages++) {
      if (pages > 1000) throw new VigilError('POWER_BI_PAGING_LOOP', 'Fabric List Tenant Settings kept returning continuation links.');
      let body: Json;
      try {
        body = obj((await powerBiAdminCall<Json | null>(ctx, 'powerBiAdmin', 'GET', url)).body);
      } catch (e) {
        throw explain(e);
      }
      const list = Array.isArray(body.value) ? body.value : arr(body.tenantSettings);
      const records = new Map<string, EstateObject<PowerBiTenantSettingAttrs>>();
      for (const t of list) {
        const o = t && typeof t === 'object' ? toTenantSetting(t as Json) : null;
        if (o && !records.has(o.id)) records.set(o.id, o);
      }
      const uri = str(body.continuationUri);
      const token = str(body.continuationToken);
      if (uri) ctx.http.links.check('powerBi', uri, 'continuationUri');
      url = uri ?? (token ? `${endpoint}?continuationToken=${encodeURIComponent(token)}` : undefined);
      yield { records: [...records.values()], nextCursor: url ?? null };
    }
  },
};
