import { RECORD_TYPES } from '../../core/audit.ts';
import { powerPlatformAdminActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * Environment SKUs treated as sensitive: production environments hold the business data and automations people rely
 * on (the collected environments inventory, BAP `environmentSku`). Sandbox, Developer, Trial and the Default
 * environment are not.
 */
const SENSITIVE_SKUS = new Set(['production']);

/**
 * A connection was created or updated (`PutConnection`, RecordType 256) in a production environment. Sentinel's rule
 * reads the same activity with `powerplatform.analytics.resource.connection.id` and `…environment.id` against a
 * hand-kept list; Vigil takes "sensitive" from the collected environments inventory (SKU Production), so an
 * environment not collected yet is not judged (no alert until the inventory names its SKU).
 */
export const detection: Detection = {
  metadata: {
    id: 'connection_in_production_environment',
    title: 'Connector connection added in a production environment',
    severity: 'low',
    description:
      'A connection to a connector was created or updated (PutConnection, RecordType 256) in a Power Platform environment whose SKU is Production in the collected inventory: a new path for apps and flows to read or send business data. Connections in sandbox, developer, trial or the default environment, and in environments not collected yet, do not alert.',
    response:
      "Review the connection's connector and owner (Power Platform admin center > environment > Connections); check the environment's DLP policy classifies the connector, and remove the connection if it was not expected.",
    references: [
      'https://learn.microsoft.com/power-platform/admin/activity-logging-auditing/activity-logs-power-apps',
      'https://learn.microsoft.com/power-platform/admin/environments-overview',
    ],
    frameworks: { 'mitre-attack': ['T1567: Exfiltration Over Web Service', 'T1537: Transfer Data to Cloud Account'] },
    peers: [
      'Sentinel "Power Platform - Connector added to a sensitive environment" (exceeds: sensitive environments come from the collected inventory instead of a hand-kept list)',
    ],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) => {
    const puts = ctx.events.flatMap((e) => {
      if (e.operation !== 'PutConnection') return [];
      const p = powerPlatformAdminActivity(e);
      return p?.environmentId ? [{ e, p, env: p.environmentId.replace(/^\/providers\/Microsoft\.BusinessAppPlatform\/environments\//i, '') }] : [];
    });
    if (puts.length === 0) return [];
    const envs = await ctx.environments(puts.map((x) => x.env));
    return puts.flatMap(({ e, p, env }) => {
      const known = envs.get(env);
      if (!known || !SENSITIVE_SKUS.has(known.sku?.toLowerCase() ?? '')) return [];
      const name = known.displayName ?? p.environmentName ?? env;
      return [
        {
          dedupeKey: e.id,
          title: `Connection ${p.connectionId ?? ''} added in production environment ${name} by ${e.userId}`.replace('  ', ' '),
          eventIds: [e.id],
          detail: { user: e.userId, connectionId: p.connectionId, environmentId: env, environmentName: name, sku: known.sku, clientIp: e.clientIp },
        },
      ];
    });
  },
};
