import type { Command } from 'commander';
import { consentLink } from '../../onboarding/consent.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson } from '../output.ts';

/** `vigil consent-url --tenant <tenant id or primary domain>` (Mode B, step 1). */
export function registerConsent(program: Command, host: CommandHost): void {
  program
    .command('consent-url')
    .description("Print the admin consent link of the operator-managed application for a customer tenant (Mode B, step 1)")
    .requiredOption('--tenant <tenant>', 'tenant id (GUID) or primary domain')
    .option('--tenant-id <guid>', 'when --tenant is a domain: the tenant id it must belong to')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { tenant: string; tenantId?: string; json?: boolean }) => {
        const link = await consentLink(rt, opts.tenant, opts.tenantId);
        if (opts.json) return printJson(link);
        print(`Admin consent link for tenant ${link.tenantId}:`, '', link.url, '', ...link.instructions.map((i) => `- ${i}`), `- After consent the browser returns to ${link.redirectUri}.`);
      }),
    );
}
