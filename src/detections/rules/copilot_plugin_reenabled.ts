import { RECORD_TYPES } from '../../core/audit.ts';
import { copilotAdminActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * A disabled Copilot plugin was enabled again: an EnableCopilotPlugin (313) record whose change goes from `Disabled`
 * to `Enabled` (Sentinel's rule reads `Resource[0].OriginalValue` / `NewValue`). Enabling a new plugin (no previous
 * value) does not alert.
 */
export const detection: Detection = {
  metadata: {
    id: 'copilot_plugin_reenabled',
    title: 'Disabled Copilot plugin enabled again',
    severity: 'medium',
    description:
      'A Copilot plugin that had been disabled was enabled again (RecordType 313 EnableCopilotPlugin, Disabled to Enabled): a plugin turned off for a reason, or a backdoor being restored.',
    response: 'Find out why the plugin had been disabled and who enabled it; disable it again if the re-enabling was not approved.',
    references: [
      'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema',
      'https://learn.microsoft.com/copilot/security/manage-plugins',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM03: Supply Chain'], 'mitre-attack': ['T1562: Impair Defenses'] },
    peers: ['Sentinel "Copilot - Plugin Enabled After Being Disabled" (exceeds: reads the change at any position of the list and names the plugin)'],
    recordTypes: [RECORD_TYPES.EnableCopilotPlugin],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const change = copilotAdminActivity(e)?.changes.find((c) => /^disabled$/i.test(c.originalValue ?? '') && /^enabled$/i.test(c.newValue ?? ''));
      if (!change) return [];
      const plugin = change.property ?? e.objectId ?? 'a plugin';
      return [
        {
          dedupeKey: e.id,
          title: `Copilot plugin ${plugin} enabled again by ${e.userId}`,
          eventIds: [e.id],
          detail: { user: e.userId, clientIp: e.clientIp, plugin },
        },
      ];
    }),
};
