import type { ParentRow } from '../../core/inventory.ts';
import { str, obj, type Json } from '../../core/json.ts';
import { UpstreamHttpError } from '../../platform/http/client.ts';
import { odataListStream } from '../odata.ts';
import { REFRESH_SECONDS, type InventoryListing, type Slice, type Stream, type StreamContext } from '../stream.ts';

/**
 * Power Platform admin inventory beyond environments: Power Apps, cloud flows, connectors, connections (per
 * environment, sliced by the stored `environments`), DLP policies and tenant settings (tenant-wide, slice `*`).
 * Every stream is a full read each round (no delta API exists); objects a complete round did not see are marked
 * deleted by the engine.
 *
 * - `powerApps`: `GET {powerApps}/providers/Microsoft.PowerApps/scopes/admin/environments/{env}/apps
 *   ?api-version=2023-06-01&$expand=permissions` (reference §3.3; TF `powerapps`), pages by `nextLink`. Sharing with
 *   everyone is a role assignment whose principal `type` is `Tenant` (the admin module's
 *   `Set-AdminPowerAppRoleAssignment -PrincipalType Tenant`); the permissions come inline with `$expand=permissions`
 *   (UNCONFIRMED that the real list expands them — without them `sharedWithTenant` is null).
 * - `flows`: `GET {flow}/providers/Microsoft.ProcessSimple/scopes/admin/environments/{env}/v2/flows?api-version=2016-11-01`
 *   (UNCONFIRMED in Microsoft docs; the admin module's `Get-AdminFlow` uses it), pages by `nextLink`. The list gives
 *   `definitionSummary` (trigger and action types, connector per action) but no URLs and no connection names: for
 *   flows whose summary shows an HTTP action (`Http`, `HttpWebhook`, or the HTTP connector `shared_webcontents`) — and
 *   only those — the single flow `GET …/flows/{flow}?api-version=2016-11-01` is read for its definition's URLs and its
 *   `connectionReferences`.
 * - `connectors`: `GET {powerApps}/providers/Microsoft.PowerApps/apis?api-version=2019-05-01&$filter=environment eq '{env}'`
 *   (TF `connectors`; the admin module's `Get-AdminPowerAppConnector` equivalent), pages by `nextLink`. Id
 *   `{env}/{connector}` (standard connectors repeat in every environment).
 * - `connections`: `GET {powerApps}/providers/Microsoft.PowerApps/scopes/admin/environments/{env}/connections
 *   ?api-version=2016-11-01` (the admin module's `Get-AdminPowerAppConnection`), pages by `nextLink`. Id
 *   `{env}/{connection}`.
 * - `dlpPolicies`: `GET {bap}/providers/PowerPlatform.Governance/v2/policies` lists the policies WITHOUT their
 *   connector groups (only `policyDefinition` with name, scope, default classification, times, etag), so each policy
 *   is then read on its own, `GET …/v2/policies/{name}`, which carries `connectorGroups`,
 *   `connectorConfigurationsDefinition` and `customConnectorUrlPatternsDefinition` (TF `dlp_policy/api_dlp_policy.go`
 *   `GetPolicies` does the same; its recorded responses are test/fixtures/real/dlp/tf-*.json).
 * - `tenantSettings`: `POST {bap}/providers/Microsoft.BusinessAppPlatform/listTenantSettings?api-version=2020-10-01`
 *   (power-platform `admin/list-tenantsettings.md`) → object `tenantSettings`; `GET {bap}/providers/
 *   PowerPlatform.Governance/v1/tenants/{tenantId}/tenantIsolationPolicy` (TF `tenant_isolation_policy`, 404 = none)
 *   → object `tenantIsolation`.
 *
 * One file per stream under `streams/`; this module holds what they share.
 *
 * All need the application registered as a Power Platform admin management application: before that the APIs answer
 * 403 "does not have permission to access the path" and the slice is recorded errored (checks say not evaluated).
 */

/** A person or principal as the Power Platform APIs name it (`owner`, `createdBy`). */
export interface PowerPlatformPrincipal {
  /** Microsoft Entra object id. */
  id: string | null;
  displayName: string | null;
  userPrincipalName: string | null;
}

/** A connector an app or flow uses. */
export interface ConnectorReference {
  /** Connector name, e.g. `shared_sql`. */
  connectorId: string;
  displayName: string | null;
  /** The connection the flow uses for it (flows whose definition was read only), else null. */
  connectionName: string | null;
  /** True for custom connectors (apps: `isCustomApiConnection`). */
  isCustom: boolean | null;
}

/** API versions used. */
export const POWER_APPS_API_VERSION = '2023-06-01';
export const CONNECTORS_API_VERSION = '2019-05-01';
export const CONNECTIONS_API_VERSION = '2016-11-01';
export const FLOW_API_VERSION = '2016-11-01';
export const TENANT_SETTINGS_API_VERSION = '2020-10-01';

/** The connector name of `/providers/Microsoft.PowerApps/apis/{name}` (any case), or null. */
export function connectorIdOf(apiId: unknown): string | null {
  const text = str(apiId);
  if (!text) return null;
  const m = /\/apis\/([^/?#]+)/i.exec(text);
  return m ? (m[1] as string) : null;
}

/** Lower-case host of an absolute http(s) URL; null for expressions and relative paths. */
export function hostOf(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** The principal of a Power Apps admin object (`owner`, `createdBy`). */
export function principal(v: unknown): PowerPlatformPrincipal {
  const o = obj(v);
  return { id: str(o.id) ?? str(o.objectId), displayName: str(o.displayName), userPrincipalName: str(o.userPrincipalName) ?? str(o.email) };
}

/** One slice per stored environment (key = environment name). */
export function environmentSliceOf(row: ParentRow): Slice {
  return { key: row.id, params: { environment: row.id } };
}

/** `encodeURIComponent`, short for the URL templates. */
export const enc = encodeURIComponent;

/**
 * A per-environment list of the Power Apps admin API (`api.powerapps.com`): apps, connectors, connections. Read in
 * full (no incremental read upstream), reused within the environment-inventory refresh interval, paged by `nextLink`.
 */
export function powerAppsListStream<N extends string, R, K extends string>(
  name: N,
  inventory: InventoryListing<K>,
  map: (environmentId: string, j: Json) => R,
  firstUrl: (ctx: StreamContext, environment: string) => string,
): Stream<N, R, K> {
  return odataListStream<N, R, K>({
    name,
    inventory,
    primaryKey: ['id'],
    parent: 'environments',
    refreshSeconds: REFRESH_SECONDS.environmentInventory,
    slice: environmentSliceOf,
    resource: (ctx) => ctx.cloud.powerApps.resource,
    request: (ctx, slice, cursor) => ({ api: 'powerApps', url: cursor ?? firstUrl(ctx, slice.params.environment as string) }),
    map: (j, slice) => map(slice.params.environment as string, j),
  });
}

/**
 * One object read on its own after a list named it (a flow's definition, a DLP policy's connector groups), or null when
 * it was deleted since the list was read (404). Goes through the HTTP pipeline (budgets, 429 back-off, link policy).
 * @throws UpstreamHttpError for any other refusal.
 */
export async function readOneOrNull(ctx: StreamContext, api: 'flow' | 'bap', url: string, token: (force: boolean) => Promise<string>): Promise<Json | null> {
  try {
    return obj((await ctx.http.send<Json | null>({ api, url, token, tenantId: ctx.tenantId })).body);
  } catch (e) {
    if (e instanceof UpstreamHttpError && e.status === 404) return null;
    throw e;
  }
}
