import type { Detection } from '../types.ts';

/** A custom connector was created or imported. */
export const detection: Detection = {
  metadata: {
    id: 'custom_connector_created',
    title: 'Custom connector created',
    severity: 'medium',
    description: 'A maker created a custom connector: apps, flows and agents can now call an arbitrary external API, outside the reviewed catalogue of connectors.',
    response: 'Review the connector\'s host and authentication; add its URL pattern to the DLP policy\'s custom connector rules (allow or block) for the environment.',
    references: ['https://learn.microsoft.com/power-platform/admin/logging-powerapps', 'https://learn.microsoft.com/power-platform/admin/dlp-custom-connector-parity'],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-attack': ['T1567: Exfiltration Over Web Service'] },
  },
  run: (ctx) =>
    ctx.events.flatMap((e) =>
      /(create|put|import)[a-z ]*custom ?connector|customconnector(create|put)/i.test(e.operation ?? '')
        ? [{ dedupeKey: e.id, title: `Custom connector ${e.objectId ?? ''} created by ${e.userId}`.replace('  ', ' '), eventIds: [e.id], detail: { user: e.userId, connector: e.objectId, operation: e.operation } }]
        : [],
    ),
};
