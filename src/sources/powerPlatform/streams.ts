import type {
  ConnectionAttrs,
  ConnectorAttrs,
  ConnectorReference,
  DlpPolicyAttrs,
  FlowAttrs,
  FlowHttpTarget,
  FlowStepSummary,
  PowerAppAttrs,
  PowerPlatformPrincipal,
  TenantIsolationAttrs,
  TenantSettingsObjectAttrs,
} from '../../core/estate/powerPlatform.ts';
import type { EstateObject, ParentRow, StreamRecords } from '../../core/inventory.ts';
import { UpstreamHttpError } from '../../platform/http/client.ts';
import { odataPages } from '../../platform/http/odata.ts';
import { odataListStream } from '../odata.ts';
import { REFRESH_SECONDS, type Slice, type Stream, type StreamContext } from '../stream.ts';
import { str, num, bool, obj, arr, type Json } from '../../core/json.ts';

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
 * All need the application registered as a Power Platform admin management application: before that the APIs answer
 * 403 "does not have permission to access the path" and the slice is recorded errored (checks say not evaluated).
 */


/** API versions used. */
export const POWER_APPS_API_VERSION = '2023-06-01';
export const CONNECTORS_API_VERSION = '2019-05-01';
export const CONNECTIONS_API_VERSION = '2016-11-01';
export const FLOW_API_VERSION = '2016-11-01';
export const TENANT_SETTINGS_API_VERSION = '2020-10-01';

/** Connectors that call a URL given in the action (`request/url`). */
export const HTTP_CONNECTOR_IDS: readonly string[] = ['shared_webcontents'];

/** Parallel single-flow reads per page of flows. */
const DEFINITION_CONCURRENCY = 8;

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

function principal(v: unknown): PowerPlatformPrincipal {
  const o = obj(v);
  return { id: str(o.id) ?? str(o.objectId), displayName: str(o.displayName), userPrincipalName: str(o.userPrincipalName) ?? str(o.email) };
}

/** One slice per stored environment (key = environment name). */
export function environmentSliceOf(row: ParentRow): Slice {
  return { key: row.id, params: { environment: row.id } };
}

const enc = encodeURIComponent;

/**
 * A per-environment list of the Power Apps admin API (`api.powerapps.com`): apps, connectors, connections. Read in
 * full (no incremental read upstream), reused within the environment-inventory refresh interval, paged by `nextLink`.
 */
function powerAppsListStream<S extends 'powerApps' | 'connectors' | 'connections'>(
  name: S,
  map: (environmentId: string, j: Json) => StreamRecords[S],
  firstUrl: (ctx: StreamContext, environment: string) => string,
): Stream<S> {
  return odataListStream<S>({
    name,
    primaryKey: ['id'],
    parent: 'environments',
    refreshSeconds: REFRESH_SECONDS.environmentInventory,
    slice: environmentSliceOf,
    resource: (ctx) => ctx.cloud.powerApps.resource,
    request: (ctx, slice, cursor) => ({ api: 'powerApps', url: cursor ?? firstUrl(ctx, slice.params.environment as string) }),
    map: (j, slice) => map(slice.params.environment as string, j),
  });
}

// --- powerApps -------------------------------------------------------------------------------------------------------

/** Maps an admin app to {@link PowerAppAttrs}. */
export function toPowerApp(environmentId: string, j: Json): EstateObject<PowerAppAttrs> {
  const p = obj(j.properties);
  const rawType = str(j.appType) ?? str(p.appType);
  const appType = rawType === 'ClassicCanvasApp' || rawType === 'CanvasApp' ? 'canvas' : rawType === 'ModelDrivenApp' ? 'model-driven' : rawType;
  const perms = Array.isArray(p.permissions) ? p.permissions.map(obj) : null;
  const refs: ConnectorReference[] = Object.values(obj(p.connectionReferences)).map((v) => {
    const r = obj(v);
    return { connectorId: connectorIdOf(r.id) ?? str(r.id) ?? '', displayName: str(r.displayName), connectionName: null, isCustom: bool(r.isCustomApiConnection) };
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
export const powerAppsStream = powerAppsListStream('powerApps', toPowerApp, (ctx, env) => `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/scopes/admin/environments/${enc(env)}/apps?api-version=${POWER_APPS_API_VERSION}&$expand=permissions`);

// --- flows -----------------------------------------------------------------------------------------------------------

function stepSummary(v: unknown): FlowStepSummary {
  const o = obj(v);
  return { type: str(o.type) ?? 'Unknown', kind: str(o.kind), connectorId: connectorIdOf(obj(o.api).id) ?? str(obj(o.api).name) };
}

const isHttpStep = (t: FlowStepSummary): boolean => t.type === 'Http' || t.type === 'HttpWebhook' || (t.connectorId !== null && HTTP_CONNECTOR_IDS.includes(t.connectorId));

/** HTTP targets in a flow definition (`properties.definition.actions`, nested scopes included). */
export function httpTargetsOf(definition: unknown): FlowHttpTarget[] {
  const out: FlowHttpTarget[] = [];
  const visit = (steps: unknown): void => {
    for (const v of Object.values(obj(steps))) {
      const step = obj(v);
      const type = str(step.type);
      const inputs = obj(step.inputs);
      if (type === 'Http') {
        const url = str(inputs.uri);
        if (url) out.push({ via: 'Http', method: str(inputs.method), url, host: hostOf(url) });
      } else if (type === 'HttpWebhook') {
        const sub = obj(inputs.subscribe);
        const url = str(sub.uri);
        if (url) out.push({ via: 'HttpWebhook', method: str(sub.method), url, host: hostOf(url) });
      } else if (type === 'OpenApiConnection' || type === 'ApiConnection') {
        const host = obj(inputs.host);
        const connector = connectorIdOf(host.apiId) ?? str(host.connectionName);
        const params = obj(inputs.parameters);
        const url = str(params['request/url']) ?? str(params.url);
        if (connector && HTTP_CONNECTOR_IDS.includes(connector) && url) out.push({ via: connector, method: str(params['request/method']), url, host: hostOf(url) });
      }
      // Scopes, conditions, loops and switches nest their actions.
      visit(step.actions);
      visit(obj(step.else).actions);
      for (const c of Object.values(obj(step.cases))) visit(obj(c).actions);
      visit(step.default ? obj(step.default).actions : undefined);
    }
  };
  const d = obj(definition);
  visit(d.actions);
  visit(d.triggers);
  return out;
}

/**
 * Maps an admin flow (list item, and the single flow when its definition was read) to {@link FlowAttrs}.
 * @param detail the single-flow answer, or null when not read.
 */
export function toFlow(environmentId: string, j: Json, detail: Json | null): EstateObject<FlowAttrs> {
  const p = obj(j.properties);
  const summary = obj(p.definitionSummary);
  const triggers = arr(summary.triggers).map(stepSummary);
  const actions = arr(summary.actions).map(stepSummary);
  const dp = detail ? obj(detail.properties) : null;
  const refs = new Map<string, ConnectorReference>();
  for (const step of [...triggers, ...actions]) {
    if (step.connectorId && !refs.has(step.connectorId)) refs.set(step.connectorId, { connectorId: step.connectorId, displayName: null, connectionName: null, isCustom: null });
  }
  for (const [key, v] of Object.entries(obj(dp?.connectionReferences))) {
    const r = obj(v);
    const id = connectorIdOf(r.id) ?? key;
    refs.set(id, { connectorId: id, displayName: str(r.displayName), connectionName: str(r.connectionName) ?? str(obj(r.connection).name), isCustom: null });
  }
  const creator = obj(p.creator);
  const name = String(j.name);
  return {
    sliceKey: environmentId,
    id: name,
    name: str(p.displayName),
    attrs: {
      environmentId,
      displayName: str(p.displayName),
      state: str(p.state),
      creator: { objectId: str(creator.objectId), userId: str(creator.userId), userType: str(creator.userType) },
      createdTime: str(p.createdTime),
      lastModifiedTime: str(p.lastModifiedTime),
      triggers,
      actions,
      hasHttpTrigger: triggers.some((t) => t.type === 'Request' && t.kind === 'Http'),
      hasHttpAction: actions.some(isHttpStep),
      httpTargets: dp ? httpTargetsOf(dp.definition) : [],
      connectionReferences: [...refs.values()],
      definitionRead: dp !== null,
    },
    raw: j,
  };
}

/** Cloud flows of each environment (definitions read only for flows with HTTP actions). */
export const flowsStream: Stream<'flows'> = {
  name: 'flows',
  primaryKey: ['id'],
  parent: 'environments',
  refreshSeconds: REFRESH_SECONDS.environmentInventory,
  slice: environmentSliceOf,
  resource: (ctx) => ctx.cloud.flow.resource,
  async *read(ctx, slice, cursor) {
    const env = slice.params.environment as string;
    const base = `${ctx.cloud.flow.baseUrl}/providers/Microsoft.ProcessSimple/scopes/admin/environments/${enc(env)}`;
    const token = ctx.tokens.bearer(ctx.cloud.flow.resource);
    const url = cursor ?? `${base}/v2/flows?api-version=${FLOW_API_VERSION}`;
    for await (const page of odataPages<Json>(ctx.http, { api: 'flow', url, token, tenantId: ctx.tenantId })) {
      const records: EstateObject<FlowAttrs>[] = new Array(page.items.length);
      for (let i = 0; i < page.items.length; i += DEFINITION_CONCURRENCY) {
        await Promise.all(
          page.items.slice(i, i + DEFINITION_CONCURRENCY).map(async (j, k) => {
            const summary = obj(obj(j.properties).definitionSummary);
            const needsDefinition = arr(summary.actions).map(stepSummary).some(isHttpStep);
            const detail = needsDefinition ? await readFlow(ctx, `${base}/flows/${enc(String(j.name))}?api-version=${FLOW_API_VERSION}`, token) : null;
            records[i + k] = toFlow(env, j, detail);
          }),
        );
      }
      yield { records, nextCursor: page.nextLink ?? null };
    }
  },
};

/** The single flow, or null when it was deleted since the list was read (404). */
async function readFlow(ctx: StreamContext, url: string, token: (force: boolean) => Promise<string>): Promise<Json | null> {
  try {
    return obj((await ctx.http.send<Json | null>({ api: 'flow', url, token, tenantId: ctx.tenantId })).body);
  } catch (e) {
    if (e instanceof UpstreamHttpError && e.status === 404) return null;
    throw e;
  }
}

// --- connectors ------------------------------------------------------------------------------------------------------

/** Maps a connector of the `apis` list to {@link ConnectorAttrs} (id `{env}/{connector}`). */
export function toConnector(environmentId: string, j: Json): EstateObject<ConnectorAttrs> {
  const p = obj(j.properties);
  const connectorId = str(j.name) ?? connectorIdOf(j.id) ?? String(j.id);
  const swagger = obj(p.swagger);
  const swaggerHost = str(swagger.host);
  const scheme = str(arr(swagger.schemes)[0]) ?? 'https';
  const backendUrl = str(obj(p.backendService).serviceUrl) ?? (swaggerHost ? `${scheme}://${swaggerHost}${str(swagger.basePath) ?? ''}` : null);
  const isCustom = bool(p.isCustomApi) ?? false;
  return {
    sliceKey: environmentId,
    id: `${environmentId}/${connectorId}`,
    name: str(p.displayName),
    attrs: {
      environmentId,
      connectorId,
      displayName: str(p.displayName),
      isCustom,
      publisher: str(p.publisher),
      tier: str(p.tier),
      backendUrl,
      backendHost: hostOf(backendUrl),
      createdBy: p.createdBy ? principal(p.createdBy) : null,
      createdTime: str(p.createdTime),
    },
    raw: j,
  };
}

/** Connectors (standard and custom) listed in each environment. */
export const connectorsStream = powerAppsListStream('connectors', toConnector, (ctx, env) => `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/apis?api-version=${CONNECTORS_API_VERSION}&$filter=${enc(`environment eq '${env}'`)}`);

// --- connections -----------------------------------------------------------------------------------------------------

/** Maps an admin connection to {@link ConnectionAttrs} (id `{env}/{connection}`). */
export function toConnection(environmentId: string, j: Json): EstateObject<ConnectionAttrs> {
  const p = obj(j.properties);
  const statuses = arr(p.statuses).map((x) => str(obj(x).status)).filter((x): x is string => x !== null);
  const params = obj(p.connectionParameters);
  const set = obj(p.connectionParametersSet);
  const authenticationType = str(set.name) ?? (str(params['token:grantType']) ? 'oauth' : null) ?? str(params.authType) ?? (params.api_key !== undefined ? 'apiKey' : null);
  const createdBy = principal(p.createdBy);
  const grants = arr(p.permissions).map((x) => obj(obj(x).properties));
  const others = grants.filter((g) => str(g.roleName) !== 'Owner');
  const name = String(j.name);
  return {
    sliceKey: environmentId,
    id: `${environmentId}/${name}`,
    name: str(p.displayName),
    attrs: {
      environmentId,
      connectorId: connectorIdOf(p.apiId) ?? connectorIdOf(j.id),
      displayName: str(p.displayName),
      createdBy,
      createdTime: str(p.createdTime),
      lastModifiedTime: str(p.lastModifiedTime),
      statuses,
      isErrored: statuses.some((x) => x !== 'Connected'),
      authenticationType,
      accountName: str(p.accountName),
      isShared: others.length > 0,
      sharedWithTenant: others.some((g) => str(obj(g.principal).type)?.toLowerCase() === 'tenant'),
      sharedWith: others.filter((g) => str(obj(g.principal).type)?.toLowerCase() !== 'tenant').map((g) => str(obj(g.principal).id)).filter((x): x is string => x !== null),
    },
    raw: j,
  };
}

/** Connections of each environment. */
export const connectionsStream = powerAppsListStream('connections', toConnection, (ctx, env) => `${ctx.cloud.powerApps.baseUrl}/providers/Microsoft.PowerApps/scopes/admin/environments/${enc(env)}/connections?api-version=${CONNECTIONS_API_VERSION}`);

// --- DLP policies ----------------------------------------------------------------------------------------------------

/**
 * Maps one DLP policy as `GET …/PowerPlatform.Governance/v2/policies/{name}` answers it to {@link DlpPolicyAttrs}.
 * Connector ids are kept as the policy spells them after the `/providers/Microsoft.PowerApps/apis/` prefix
 * (`shared_webcontents`); the built-in HTTP connectors have no prefix and keep their case (`Http`, `HttpWebhook`,
 * `HttpRequestReceived`: Microsoft Learn, connectors/powerplatformforadmins "Known issues and limitations").
 * A list item (no `connectorGroups`) maps to empty groups with `connectorGroupsRead: false`: only the single-policy
 * answer is complete.
 */
export function toDlpPolicy(j: Json): EstateObject<DlpPolicyAttrs> {
  const d = obj(j.policyDefinition);
  const groups = arr(d.connectorGroups).map(obj);
  const group = (classification: string): string[] =>
    groups
      .filter((g) => str(g.classification) === classification)
      .flatMap((g) => arr(g.connectors).map((c) => connectorIdOf(obj(c).id) ?? str(obj(c).id)))
      .filter((x): x is string => x !== null);
  const name = str(d.name) ?? str(j.name) ?? '';
  return {
    sliceKey: '*',
    id: name,
    name: str(d.displayName),
    attrs: {
      displayName: str(d.displayName),
      environmentType: str(d.environmentType),
      environments: arr(d.environments).map((e) => str(obj(e).name)).filter((x): x is string => x !== null),
      defaultConnectorsClassification: str(d.defaultConnectorsClassification),
      business: group('Confidential'),
      nonBusiness: group('General'),
      blocked: group('Blocked'),
      connectorGroupsRead: Array.isArray(d.connectorGroups),
      createdTime: str(d.createdTime),
      lastModifiedTime: str(d.lastModifiedTime),
    },
    raw: j,
  };
}

/** Parallel single-policy reads per page of the policy list. */
const POLICY_CONCURRENCY = 4;

/**
 * DLP (data) policies of the tenant: the v2 list, then each policy read on its own for its connector groups (the
 * list does not carry them). Each read goes through the HTTP pipeline (budgets, 429 back-off, link policy). A policy
 * deleted between the list and its read (404) is left out of the page, so a complete round marks it deleted.
 */
export const dlpPoliciesStream: Stream<'dlpPolicies'> = {
  name: 'dlpPolicies',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.bap.resource,
  async *read(ctx, _slice, cursor) {
    const base = `${ctx.cloud.bap.baseUrl}/providers/PowerPlatform.Governance/v2/policies`;
    const token = ctx.tokens.bearer(ctx.cloud.bap.resource);
    for await (const page of odataPages<Json>(ctx.http, { api: 'bap', url: cursor ?? base, token, tenantId: ctx.tenantId })) {
      const read: (Json | null)[] = new Array(page.items.length);
      for (let i = 0; i < page.items.length; i += POLICY_CONCURRENCY) {
        await Promise.all(
          page.items.slice(i, i + POLICY_CONCURRENCY).map(async (item, k) => {
            const name = str(obj(item.policyDefinition).name) ?? str(item.name);
            read[i + k] = name ? await readDlpPolicy(ctx, `${base}/${enc(name)}`, token) : null;
          }),
        );
      }
      yield { records: read.filter((j): j is Json => j !== null).map(toDlpPolicy), nextCursor: page.nextLink ?? null };
    }
  },
};

/** One DLP policy, or null when it was deleted since the list was read (404). */
async function readDlpPolicy(ctx: StreamContext, url: string, token: (force: boolean) => Promise<string>): Promise<Json | null> {
  try {
    return obj((await ctx.http.send<Json | null>({ api: 'bap', url, token, tenantId: ctx.tenantId })).body);
  } catch (e) {
    if (e instanceof UpstreamHttpError && e.status === 404) return null;
    throw e;
  }
}

// --- tenant settings -------------------------------------------------------------------------------------------------

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
export const tenantSettingsStream: Stream<'tenantSettings'> = {
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
