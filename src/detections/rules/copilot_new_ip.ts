import { RECORD_TYPES } from '../../core/audit.ts';
import { normalizeIp } from '../../sources/managementActivity/records.ts';
import type { Detection } from '../types.ts';

/** The first `n` addresses of `ips` (a user's history can hold thousands: not spread whole for each alert). */
function first(ips: Iterable<string>, n: number): string[] {
  const out: string[] = [];
  for (const ip of ips) {
    if (out.length === n) break;
    out.push(ip);
  }
  return out;
}

/** Copilot used from an IP address never seen for that user. */
export const detection: Detection = {
  metadata: {
    id: 'copilot_new_ip',
    title: 'Copilot used from an IP address never seen for the user',
    severity: 'low',
    description:
      "A Copilot interaction came from a client IP that none of the user's earlier audited activity came from: a new location, or a session token used from elsewhere. Users without history do not alert.",
    response: "Check the user's sign-in logs for the IP (location, device, Conditional Access result); revoke sessions if the sign-in is not the user's.",
    references: ['https://learn.microsoft.com/office/office-365-management-api/copilot-schema', 'https://attack.mitre.org/techniques/T1550/004/'],
    frameworks: { 'owasp-llm-2025': ['LLM02: Sensitive Information Disclosure'], 'mitre-attack': ['T1550.004: Web Session Cookie'] },
    peers: ['Sentinel "Copilot - Access From External IP Address" (exceeds: alerts on an address new for the user, not on every public address)'],
    recordTypes: [RECORD_TYPES.CopilotInteraction],
  },
  run: (ctx) => {
    const hits = [];
    for (const e of ctx.events) {
      // Stored events carry normalised addresses (sources/managementActivity/records.ts normalizeIp); normalising again keeps rows stored
      // before that comparable (`1.2.3.4:40927` is 1.2.3.4).
      const ip = normalizeIp(e.clientIp);
      if (!e.userId || !ip) continue;
      const seen = ctx.ipsSeenBefore(e.userId, e.creationTime);
      if (seen.size > 0 && !seen.has(ip)) {
        hits.push({
          dedupeKey: `${e.userId.toLowerCase()}|${ip}`,
          title: `${e.userId} used Copilot from new IP ${ip}`,
          eventIds: [e.id],
          detail: { user: e.userId, ip, knownIps: first(seen, 20) },
        });
      }
    }
    return hits;
  },
};
