import type { EstateObject } from '../../../core/inventory.ts';
import { str, obj, arr, type Json } from '../../../core/json.ts';
import { odataPages } from '../../../platform/http/odata.ts';
import { REFRESH_SECONDS, type Stream } from '../../stream.ts';
import { connectorIdOf, hostOf, environmentSliceOf, enc, readOneOrNull, FLOW_API_VERSION } from '../admin.ts';
import type { ConnectorReference } from '../admin.ts';

/** A trigger or action type of a flow (`definitionSummary`). */
interface FlowStepSummary {
  /** Workflow definition type: `Request`, `Recurrence`, `Http`, `HttpWebhook`, `OpenApiConnection`, … */
  type: string;
  /** Trigger kind (`Button`, `Http`) when given. */
  kind: string | null;
  /** Connector name for connector steps. */
  connectorId: string | null;
}

/** An HTTP call a flow makes. */
interface FlowHttpTarget {
  /** `Http`, `HttpWebhook`, or the HTTP connector's name (`shared_webcontents`). */
  via: string;
  method: string | null;
  /** The URL as written in the definition (may hold expressions). */
  url: string;
  /** Lower-case host of the URL, or null when it is not an absolute URL (an expression). */
  host: string | null;
}

/**
 * Attributes of a cloud flow (admin `v2/flows`).
 *
 * Sources: reference §3.3 (admin inventory endpoints); pnp/cli-microsoft365 `flow list` (flow shape: `state`, `creator`,
 * `definitionSummary`). Dates are ISO 8601 UTC as the API returns them; `null` means the API did not return the field.
 */
export interface FlowAttrs {
  environmentId: string;
  displayName: string | null;
  /** `Started`, `Stopped` or `Suspended`. */
  state: string | null;
  /** `properties.creator`: Entra object id and user id of the maker. */
  creator: { objectId: string | null; userId: string | null; userType: string | null };
  createdTime: string | null;
  lastModifiedTime: string | null;
  triggers: FlowStepSummary[];
  actions: FlowStepSummary[];
  /** True when a trigger is an HTTP request trigger (`Request` of kind `Http`): anyone with the URL can start it. */
  hasHttpTrigger: boolean;
  /** True when an action is `Http`, `HttpWebhook` or an HTTP connector. */
  hasHttpAction: boolean;
  /**
   * The URLs of the HTTP actions. The list API carries no URIs: they come from the flow's definition, read only for
   * flows whose summary shows an HTTP action (`definitionRead`). Empty otherwise.
   */
  httpTargets: FlowHttpTarget[];
  /** Connectors used (from the summary), with connection names when the definition was read. */
  connectionReferences: ConnectorReference[];
  /** Whether the single-flow definition was read for this flow. */
  definitionRead: boolean;
}

/** Parallel single-flow reads per page of flows. */
const DEFINITION_CONCURRENCY = 8;

/** Connectors that call a URL given in the action (`request/url`). */
const HTTP_CONNECTOR_IDS: readonly string[] = ['shared_webcontents'];

function stepSummary(v: unknown): FlowStepSummary {
  const o = obj(v);
  return { type: str(o.type) ?? 'Unknown', kind: str(o.kind), connectorId: connectorIdOf(obj(o.api).id) ?? str(obj(o.api).name) };
}

const isHttpStep = (t: FlowStepSummary): boolean =>
  t.type === 'Http' || t.type === 'HttpWebhook' || (t.connectorId !== null && HTTP_CONNECTOR_IDS.includes(t.connectorId));

/** HTTP targets in a flow definition (`properties.definition.actions`, nested scopes included). */
function httpTargetsOf(definition: unknown): FlowHttpTarget[] {
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
        if (connector && HTTP_CONNECTOR_IDS.includes(connector) && url)
          out.push({ via: connector, method: str(params['request/method']), url, host: hostOf(url) });
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
    if (step.connectorId && !refs.has(step.connectorId))
      refs.set(step.connectorId, { connectorId: step.connectorId, displayName: null, connectionName: null, isCustom: null });
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
export const flowsStream: Stream<'flows', EstateObject<FlowAttrs>, 'flows'> = {
  name: 'flows',
  inventory: { kind: 'flows', position: 30, environment: true },
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
            const detail = needsDefinition
              ? await readOneOrNull(ctx, 'flow', `${base}/flows/${enc(String(j.name))}?api-version=${FLOW_API_VERSION}`, token)
              : null;
            records[i + k] = toFlow(env, j, detail);
          }),
        );
      }
      yield { records, nextCursor: page.nextLink ?? null };
    }
  },
};
