import { RECORD_TYPES } from '../../core/audit.ts';
import { directoryChange } from '../../sources/managementActivity/views.ts';
import type { Detection } from '../types.ts';

/**
 * What was added, from the types of the keys the change added (not every key the object holds after it: the new
 * `KeyDescription` lists the old keys too, so a secret added beside an existing certificate is a secret).
 */
function credentialNoun(types: string[]): string {
  const secret = types.includes('Password');
  const cert = types.includes('AsymmetricX509Cert');
  if (secret && cert) return 'Certificate and client secret';
  if (cert) return 'Certificate';
  if (secret) return 'Client secret';
  return 'Credential';
}

/** Credentials (a secret or certificate) were added to a service principal or application. */
export const detection: Detection = {
  metadata: {
    id: 'service_principal_credentials_added',
    title: 'Credentials added to a service principal',
    severity: 'high',
    description:
      'A password or certificate credential was added to a service principal or application: whoever holds it can act as that application with all its permissions.',
    response:
      'Confirm the owner added it; remove unknown credentials under App registrations > Certificates & secrets (or the service principal via Graph) and review the sign-ins of the application.',
    references: ['https://learn.microsoft.com/entra/identity/monitoring-health/reference-audit-activities', 'https://attack.mitre.org/techniques/T1098/001/'],
    frameworks: { 'mitre-attack': ['T1098.001: Additional Cloud Credentials'] },
    peers: [],
    recordTypes: [RECORD_TYPES.AzureActiveDirectory],
  },
  run: (ctx) =>
    ctx.events.flatMap((e) => {
      if (!/^(add service principal credentials|update application . certificates and secrets management)/i.test(e.operation ?? '')) return [];
      const d = directoryChange(e);
      const target = d?.targetName ?? d?.targetAppId ?? e.objectId ?? 'a service principal';
      return [
        {
          dedupeKey: e.id,
          title: `${credentialNoun(d?.keyTypes ?? [])} added to ${target} by ${e.userId}`,
          eventIds: [e.id],
          detail: {
            user: e.userId,
            target: d?.targetName ?? null,
            appId: d?.targetAppId ?? null,
            servicePrincipal: e.objectId,
            keyTypes: d?.keyTypes ?? [],
            keysAdded: d?.keysAdded ?? [],
          },
        },
      ];
    }),
};
