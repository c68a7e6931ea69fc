import { RECORD_TYPES } from '../../core/audit.ts';
import { powerPlatformAdminActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/** A custom connector was created or imported. */
export const detection: Detection = {
  metadata: {
    id: 'custom_connector_created',
    title: 'Custom connector created',
    severity: 'medium',
    description:
      'A maker created a custom connector: apps, flows and agents can now call an arbitrary external API, outside the reviewed catalogue of connectors.',
    response:
      "Review the connector's host and authentication; add its URL pattern to the DLP policy's custom connector rules (allow or block) for the environment.",
    references: [
      'https://learn.microsoft.com/power-platform/admin/logging-powerapps',
      'https://learn.microsoft.com/power-platform/admin/dlp-custom-connector-parity',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-attack': ['T1567: Exfiltration Over Web Service'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^CreateCustomConnector$/i.test(e.operation ?? '')) return [];
      const c = powerPlatformAdminActivity(e)?.customConnector;
      const name = c?.name ?? e.objectId ?? '';
      return [
        {
          dedupeKey: e.id,
          title: `Custom connector ${name}${c?.host ? ` (${c.host})` : ''} created by ${e.userId}`,
          eventIds: [e.id],
          detail: { user: e.userId, connectorId: c?.id ?? e.objectId, connector: c?.name ?? null, host: c?.host ?? null },
        },
      ];
    }),
};
