import { RECORD_TYPES } from '../../core/audit.ts';
import { copilotInteraction } from '../../sources/managementActivity/views.ts';
import { isGuest } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** A guest's Copilot interaction touched a resource carrying a sensitivity label. */
export const detection: Detection = {
  metadata: {
    id: 'copilot_guest_sensitive_access',
    title: 'Guest used Microsoft 365 Copilot on labelled content',
    severity: 'high',
    description:
      "A guest account's Copilot interaction (RecordType 261) accessed a resource with a sensitivity label: Copilot surfaced classified content to someone outside the organization.",
    response:
      'Review what the guest asked and which labelled files were accessed; check the guest still needs access to those sites; tighten sharing or label protection (encryption, EXTRACT rights).',
    references: ['https://learn.microsoft.com/office/office-365-management-api/copilot-schema', 'https://learn.microsoft.com/purview/sensitivity-labels'],
    frameworks: { 'owasp-llm-2025': ['LLM02: Sensitive Information Disclosure'], 'mitre-atlas': ['AML.T0057: LLM Data Leakage'] },
    peers: [],
    recordTypes: [RECORD_TYPES.CopilotInteraction],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      // Guests first: a column test that spares reading the raw record of every member's interaction.
      if (!isGuest(e)) return [];
      const c = copilotInteraction(e);
      if (!c) return [];
      const labelled = c.accessedResources.filter((r) => r.sensitivityLabelId);
      if (labelled.length === 0) return [];
      return [
        {
          dedupeKey: e.id,
          title: `Guest ${e.userId} used Copilot on ${labelled.length} labelled resource(s)`,
          eventIds: [e.id],
          detail: {
            user: e.userId,
            appHost: c.appHost,
            resources: labelled.map((r) => ({ name: r.name, siteUrl: r.siteUrl, sensitivityLabelId: r.sensitivityLabelId })),
          },
        },
      ];
    }),
};
