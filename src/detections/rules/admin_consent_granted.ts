import { RECORD_TYPES } from '../../core/audit.ts';
import { directoryChange } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/** Admin consent was granted to an application (tenant-wide permissions). */
export const detection: Detection = {
  metadata: {
    id: 'admin_consent_granted',
    title: 'Admin consent granted to an application',
    severity: 'high',
    description:
      'An administrator consented to an application for the whole organization ("Consent to application." with IsAdminConsent true): the application can now use its permissions on every user\'s data.',
    response:
      'Check the application and its publisher under Enterprise applications > Permissions; revoke the grant if it was not expected (illicit consent grant).',
    references: [
      'https://learn.microsoft.com/defender-office-365/detect-and-remediate-illicit-consent-grants',
      'https://learn.microsoft.com/entra/identity/monitoring-health/reference-audit-activities',
    ],
    frameworks: { 'mitre-attack': ['T1098.003: Additional Cloud Roles', 'T1528: Steal Application Access Token'] },
    peers: [],
    recordTypes: [RECORD_TYPES.AzureActiveDirectory],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      // Only a consent record can be an admin consent (directoryChange's `adminConsent` is null otherwise): the
      // operation, a column, spares reading the raw record of every other directory change.
      if (!/^consent to application/i.test(e.operation ?? '')) return [];
      const d = directoryChange(e);
      if (!d?.adminConsent) return [];
      const app = d.targetName ?? d.targetAppId ?? e.objectId ?? 'an application';
      return [
        {
          dedupeKey: e.id,
          title: `Admin consent granted to ${app} by ${e.userId}`,
          eventIds: [e.id],
          detail: { user: e.userId, application: d.targetName, appId: d.targetAppId, servicePrincipal: e.objectId, scopes: d.scopes },
        },
      ];
    }),
};
