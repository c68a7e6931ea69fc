import { RECORD_TYPES, type AuditEvent } from '../../core/audit.ts';
import { flowActivity, type FlowActivity } from '../../sources/managementActivity/views.ts';
import type { FlowAttrs } from '../../sources/powerPlatform/streams/flows.ts';
import type { Detection, DetectionHit } from '../types.ts';

/** Hosts that are not "external" for this rule: Microsoft's own service endpoints. */
const MICROSOFT_HOSTS =
  /(^|\.)(microsoft\.com|microsoftonline\.com|office\.com|office365\.com|sharepoint\.com|dynamics\.com|powerapps\.com|azure\.com|windows\.net|powerplatform\.com|logic\.azure\.com)$/i;

/** How far the inventory's `lastModifiedTime` may trail the record and still describe the version it audits. */
const SAME_VERSION_MS = 5 * 60_000;

/**
 * The inventory's flow when it describes the version the record audits: its definition was read and it was last
 * modified no earlier than the record (less a few minutes of clock skew). Otherwise null: the record is newer.
 */
function currentInventory(e: AuditEvent, flow: FlowAttrs | undefined): FlowAttrs | null {
  if (!flow?.definitionRead || !flow.lastModifiedTime) return null;
  const modified = Date.parse(flow.lastModifiedTime);
  return Number.isFinite(modified) && modified >= Date.parse(e.creationTime) - SAME_VERSION_MS ? flow : null;
}

/**
 * One flow create/edit record → an alert or nothing. Real records hold connector names, not action URLs, so:
 * - the collected inventory describes this version of the flow → alert when one of its HTTP actions calls a host
 *   outside Microsoft's services (a flow whose HTTP actions call only Microsoft hosts does not alert);
 * - otherwise → alert when the record's `FlowConnectorNames` lists the HTTP or HTTP Webhook connector, with the
 *   targets unknown until the next collection reads the definition.
 */
function evaluate(e: AuditEvent, f: FlowActivity, flow: FlowAttrs | null): DetectionHit[] {
  const name = flow?.displayName ?? f.flowId ?? 'a flow';
  if (flow) {
    const hosts = [...new Set(flow.httpTargets.flatMap((t) => (t.host && !MICROSOFT_HOSTS.test(t.host) ? [t.host] : [])))].sort();
    if (hosts.length === 0) return [];
    const targets = flow.httpTargets.filter((t) => t.host !== null && hosts.includes(t.host)).map((t) => ({ via: t.via, method: t.method, url: t.url }));
    return [
      {
        dedupeKey: `${f.flowId ?? e.id}|${hosts.join(',')}`,
        title: `Flow ${name} sends data to ${hosts.join(', ')}`,
        eventIds: [e.id],
        detail: { user: e.userId, flowId: f.flowId, environmentId: f.environmentId, basis: 'inventory', hosts, targets },
      },
    ];
  }
  if (f.httpConnectors.length === 0) return [];
  return [
    {
      dedupeKey: `${f.flowId ?? e.id}|connector`,
      title: `Flow ${name} uses the ${f.httpConnectors.join(' and ')} connector: its targets are not collected yet`,
      eventIds: [e.id],
      detail: { user: e.userId, flowId: f.flowId, environmentId: f.environmentId, basis: 'connectorNames', hosts: [], connectors: f.connectors },
    },
  ];
}

/** A flow sends data to an external HTTP endpoint. */
export const detection: Detection = {
  metadata: {
    id: 'flow_external_http',
    title: 'Flow sends data to an external HTTP endpoint',
    severity: 'medium',
    description:
      "A Power Automate flow (RecordType 30) was created or changed and calls an HTTP endpoint outside Microsoft's services: a path for data to leave the tenant that DLP connector groups do not cover unless the HTTP connector is blocked. The audit record names the flow's connectors, not its URLs: the targets come from the collected flow definitions; a flow not collected yet alerts when its record lists the HTTP connector.",
    response:
      "Review the flow's HTTP actions and the data they send; block or restrict the HTTP connector in the environment's DLP policy, or add the host to an endpoint filtering rule.",
    references: [
      'https://learn.microsoft.com/power-platform/admin/activity-logging-auditing/activity-logs-power-automate',
      'https://learn.microsoft.com/power-platform/admin/connector-endpoint-filtering',
    ],
    frameworks: { 'mitre-attack': ['T1567: Exfiltration Over Web Service'] },
    peers: [],
    recordTypes: [RECORD_TYPES.MicrosoftFlow],
  },
  run: async (ctx) => {
    const changes = ctx.events.flatMap((e) => {
      // The operation (a column) first: only creations and edits need the raw record.
      if (!/^(CreateFlow|EditFlow)$/i.test(e.operation ?? '')) return [];
      const f = flowActivity(e);
      return f ? [{ e, f }] : [];
    });
    if (changes.length === 0) return [];
    const inventory = await ctx.flows(changes.flatMap(({ f }) => (f.flowId ? [f.flowId] : [])));
    return changes.flatMap(({ e, f }) => evaluate(e, f, currentInventory(e, f.flowId ? inventory.get(f.flowId) : undefined)));
  },
};
