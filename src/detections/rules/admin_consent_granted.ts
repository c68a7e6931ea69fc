import { properties } from '../helpers.ts';
import type { Detection } from '../types.ts';

/** Admin consent was granted to an application (tenant-wide permissions). */
export const detection: Detection = {
  metadata: {
    id: 'admin_consent_granted',
    title: 'Admin consent granted to an application',
    severity: 'high',
    description: 'An administrator consented to an application for the whole organization ("Consent to application." with IsAdminConsent true): the application can now use its permissions on every user\'s data.',
    response: 'Check the application and its publisher under Enterprise applications > Permissions; revoke the grant if it was not expected (illicit consent grant).',
    references: ['https://learn.microsoft.com/defender-office-365/detect-and-remediate-illicit-consent-grants', 'https://learn.microsoft.com/entra/identity/monitoring-health/reference-audit-activities'],
    frameworks: { 'mitre-attack': ['T1098.003: Additional Cloud Roles', 'T1528: Steal Application Access Token'] },
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^consent to application/i.test(e.operation ?? '')) return [];
      const admin = properties(e).get('consentcontext.isadminconsent');
      if (!admin || !/true/i.test(admin)) return [];
      return [{ dedupeKey: e.id, title: `Admin consent granted to ${e.objectId ?? 'an application'} by ${e.userId}`, eventIds: [e.id], detail: { user: e.userId, application: e.objectId } }];
    }),
};
