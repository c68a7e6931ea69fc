import { flowActivity, RECORD_TYPES } from '../../core/audit.ts';
import type { Detection } from '../types.ts';

/** Hosts that are not "external" for this rule: Microsoft's own service endpoints. */
const MICROSOFT_HOSTS = /(^|\.)(microsoft\.com|microsoftonline\.com|office\.com|office365\.com|sharepoint\.com|dynamics\.com|powerapps\.com|azure\.com|windows\.net|powerplatform\.com|logic\.azure\.com)$/i;

/** The lower-cased host of a URI, or null when it is not an absolute http(s) URI. */
function hostOf(uri: string): string | null {
  try {
    const u = new URL(uri);
    return /^https?:$/.test(u.protocol) ? u.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** A flow sends data to an external HTTP endpoint. */
export const detection: Detection = {
  metadata: {
    id: 'flow_external_http',
    title: 'Flow sends data to an external HTTP endpoint',
    severity: 'medium',
    description: 'A Power Automate flow (RecordType 30) was created or changed with an HTTP action targeting a host outside Microsoft\'s services: a path for data to leave the tenant that DLP connector groups do not cover unless the HTTP connector is blocked.',
    response: 'Review the flow\'s HTTP actions and the data they send; block or restrict the HTTP connector in the environment\'s DLP policy, or add the host to an endpoint filtering rule.',
    references: ['https://learn.microsoft.com/power-platform/admin/logging-power-automate', 'https://learn.microsoft.com/power-platform/admin/connector-endpoint-filtering'],
    frameworks: { 'mitre-attack': ['T1567: Exfiltration Over Web Service'] },
    recordTypes: [RECORD_TYPES.MicrosoftFlow],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const f = flowActivity(e);
      if (!f || !/^(CreateFlow|EditFlow)$/i.test(e.operation ?? '')) return [];
      const hosts = new Set<string>();
      for (const a of f.httpActions) {
        const host = hostOf(a.uri);
        if (host && !MICROSOFT_HOSTS.test(host)) hosts.add(host);
      }
      return hosts.size ? [{ dedupeKey: `${f.flowId ?? e.id}|${[...hosts].sort().join(',')}`, title: `Flow ${f.flowId ?? ''} sends data to ${[...hosts].join(', ')}`.replace('  ', ' '), eventIds: [e.id], detail: { user: e.userId, flowId: f.flowId, environmentId: f.environmentId, hosts: [...hosts], actions: f.httpActions } }] : [];
    }),
};
