import { RECORD_TYPES } from '../../core/audit.ts';
import { strings } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** Hosts that are not "external" for this rule: Microsoft's own service endpoints. */
const MICROSOFT_HOSTS = /(^|\.)(microsoft\.com|microsoftonline\.com|office\.com|office365\.com|sharepoint\.com|dynamics\.com|powerapps\.com|azure\.com|windows\.net|powerplatform\.com|logic\.azure\.com)$/i;

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
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (e.recordType !== RECORD_TYPES.MicrosoftFlow && e.workload !== 'MicrosoftFlow' && e.workload !== 'PowerAutomate') return [];
      const hosts = new Set<string>();
      for (const s of strings(e.raw)) {
        for (const m of s.matchAll(/https?:\/\/([a-z0-9.-]+)/gi)) if (!MICROSOFT_HOSTS.test(m[1]!)) hosts.add(m[1]!.toLowerCase());
      }
      return hosts.size ? [{ dedupeKey: `${e.objectId ?? e.id}|${[...hosts].sort().join(',')}`, title: `Flow ${e.objectId ?? ''} posts to ${[...hosts].join(', ')}`.replace('  ', ' '), eventIds: [e.id], detail: { user: e.userId, flow: e.objectId, hosts: [...hosts] } }] : [];
    }),
};
