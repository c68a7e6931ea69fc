import type { Command } from 'commander';
import { getOrganizationByName } from '../../access/index.ts';
import { consentLink } from '../../onboarding/consent.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson } from '../output.ts';

/**
 * `vigil consent-url --tenant <tenant id or primary domain> [--organization <name>]` (Mode B, step 1): the link works
 * once, and the administrator's sign-in after consent binds the tenant to the organization (default: Default).
 */
export function registerConsent(program: Command, host: CommandHost): void {
  program
    .command('consent-url')
    .description('Print the admin consent link of the operator-managed application for a customer tenant (Mode B, step 1)')
    .requiredOption('--tenant <tenant>', 'tenant id (GUID) or primary domain')
    .option('--tenant-id <guid>', 'when --tenant is a domain: the tenant id it must belong to')
    .option('--organization <name>', 'the organization the tenant joins once its administrator signs in (must exist; default: the default organization)')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { tenant: string; tenantId?: string; organization?: string; json?: boolean }) => {
        const organizationId = opts.organization ? (await getOrganizationByName(rt.db, opts.organization)).id : undefined;
        const link = await consentLink(rt, opts.tenant, opts.tenantId, { organizationId, initiatedBy: 'operator' });
        if (opts.json) return printJson(link);
        print(
          `Admin consent link for tenant ${link.tenantId}:`,
          '',
          link.url,
          '',
          ...link.instructions.map((i) => `- ${i}`),
          `- After consent the browser returns to ${link.redirectUri}.`,
        );
      }),
    );
}
