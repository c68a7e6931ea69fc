import { RECORD_TYPES } from '../../core/audit.ts';
import { copilotAdminActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * UserType values of the common schema that are not an administrator: 0 Regular, 10 Guest. Admin (2), DcAdmin (3),
 * System (4) and application identities do not alert; a record without UserType is not judged.
 */
const NON_ADMIN = new Set([0, 10]);

/** A Copilot plugin was created by an account that is not an administrator (RecordType 310). */
export const detection: Detection = {
  metadata: {
    id: 'copilot_plugin_created_by_non_admin',
    title: 'Copilot plugin created by a non-administrator',
    severity: 'medium',
    description:
      'A Copilot plugin was created (RecordType 310 CreateCopilotPlugin) by a regular or guest account (UserType 0 or 10): a plugin can bring new tools, prompts and data paths into Copilot sessions. Administrators, system and application identities do not alert.',
    response:
      'Check the plugin (its endpoints, authentication and who can use it) with its creator; remove it, or restrict who may add custom plugins (Security Copilot owner settings: "Who can add and manage custom plugins"), if it was not expected.',
    references: [
      'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema',
      'https://learn.microsoft.com/copilot/security/manage-plugins',
    ],
    frameworks: {
      'owasp-llm-2025': ['LLM03: Supply Chain', 'LLM06: Excessive Agency'],
      'mitre-attack': ['T1546: Event Triggered Execution', 'T1098: Account Manipulation'],
    },
    peers: ['Sentinel "Copilot - Plugin Created by Non-Admin User" (same logic; guests alert, a record without a user type is not judged)'],
    recordTypes: [RECORD_TYPES.CreateCopilotPlugin],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (e.userType === null || !NON_ADMIN.has(e.userType)) return [];
      const a = copilotAdminActivity(e);
      const plugin = a?.changes.find((c) => c.property)?.property ?? e.objectId ?? 'a plugin';
      return [
        {
          dedupeKey: e.id,
          title: `Copilot plugin ${plugin} created by ${e.userType === 10 ? 'guest' : 'non-administrator'} ${e.userId}`,
          eventIds: [e.id],
          detail: { user: e.userId, userType: e.userType, plugin, clientIp: e.clientIp },
        },
      ];
    }),
};
