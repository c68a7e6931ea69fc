import { RECORD_TYPES } from '../../core/audit.ts';
import { copilotAdminActivity } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/** The setting's `Property` name (any case, with or without the plural). */
const FILE_UPLOADS = /^file ?uploads?$/i;

/**
 * File uploads were turned off in Copilot: a change whose `Property` is `FileUploads` going from `Enabled` to
 * `Disabled`, on a DisableCopilotPlugin (314) record as Sentinel's rule reads it, or an UpdateCopilotSettings (325)
 * record (where Microsoft files tenant setting changes). Turning uploads on, or changing another setting, does not alert.
 */
export const detection: Detection = {
  metadata: {
    id: 'copilot_file_uploads_disabled',
    title: 'Copilot file uploads disabled',
    severity: 'medium',
    description:
      'A Copilot setting change (RecordType 314 DisableCopilotPlugin or 325 UpdateCopilotSettings) turned file uploads from Enabled to Disabled: a control changed by someone who may be covering tracks or disrupting investigations that rely on uploaded evidence.',
    response: 'Confirm the change with the owner of the Copilot settings; restore the setting if it was not approved and review what else the account changed.',
    references: [
      'https://learn.microsoft.com/office/office-365-management-api/office-365-management-activity-api-schema',
      'https://learn.microsoft.com/copilot/security/owner-settings',
    ],
    frameworks: { 'mitre-attack': ['T1562.001: Disable or Modify Tools'] },
    peers: [
      'Sentinel "Copilot - File Uploads Disabled" (exceeds: the change is also read from UpdateCopilotSettings records and from any position of the change list)',
    ],
    recordTypes: [RECORD_TYPES.DisableCopilotPlugin, RECORD_TYPES.UpdateCopilotSettings],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      const change = copilotAdminActivity(e)?.changes.find(
        (c) => FILE_UPLOADS.test(c.property ?? '') && /^enabled$/i.test(c.originalValue ?? '') && /^disabled$/i.test(c.newValue ?? ''),
      );
      if (!change) return [];
      return [
        {
          dedupeKey: e.id,
          title: `Copilot file uploads disabled by ${e.userId}`,
          eventIds: [e.id],
          detail: {
            user: e.userId,
            clientIp: e.clientIp,
            recordType: e.recordType,
            property: change.property,
            previous: change.originalValue,
            current: change.newValue,
          },
        },
      ];
    }),
};
