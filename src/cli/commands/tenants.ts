import type { Command } from 'commander';
import { getOrganizationByName } from '../../access/index.ts';
import { bindTenant, listTenantBindings, unbindTenant } from '../../onboarding/tenants.ts';
import type { CommandHost } from '../host.ts';
import { limitRows, listOptions, type ListOptions } from '../input.ts';
import { print, printJson, table } from '../output.ts';

/**
 * `vigil tenants`: which organization each Microsoft Entra tenant belongs to, and the operator's explicit binding
 * (method `operator`) — the way to move a tenant between organizations or to bind one without the consent sign-in.
 */
export function registerTenants(program: Command, host: CommandHost): void {
  const tenants = program.command('tenants').description('Tenant bindings: the organization each tenant belongs to (list, bind, unbind)');
  listOptions(tenants.command('list').description('List bound tenants with their organization, how they were proven, by whom and when'), 100)
    .option('--organization <name>', 'only the tenants of this organization (must exist)')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions & { organization?: string }) => {
        const org = opts.organization !== undefined ? await getOrganizationByName(rt.db, opts.organization) : undefined;
        const { rows: list, more } = limitRows(
          (await listTenantBindings(rt.db)).filter((b) => !org || b.organizationId === org.id),
          opts,
          100,
        );
        if (opts.json) return printJson(list);
        print(
          table(
            [
              ['TENANT', 'ORGANIZATION', 'METHOD', 'PROVEN BY', 'PROVEN AT'],
              ...list.map((b) => [b.tenantId, b.organization, b.method, b.provenBy ?? '', b.provenAt]),
            ],
            { wide: opts.wide },
          ),
        );
        if (more) print(more);
      }),
    );
  tenants
    .command('bind')
    .description('Bind a tenant to an existing organization (replaces any binding; recorded as method "operator")')
    .requiredOption('--tenant-id <guid>', 'the Microsoft Entra tenant id')
    .requiredOption('--organization <name>', 'the organization (must exist)')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { tenantId: string; organization: string; json?: boolean }) => {
        const b = await bindTenant(rt.db, { tenantId: opts.tenantId, organization: opts.organization, by: 'operator (vigil tenants bind)' });
        if (opts.json) return printJson(b);
        print(`Tenant ${b.tenantId} is bound to organization ${b.organization}.`);
      }),
    );
  tenants
    .command('unbind')
    .description('Remove a tenant binding (existing integrations stay; new ones need a new proof)')
    .requiredOption('--tenant-id <guid>', 'the Microsoft Entra tenant id')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { tenantId: string; json?: boolean }) => {
        const r = await unbindTenant(rt.db, opts.tenantId);
        if (opts.json) return printJson(r);
        print(`Tenant ${r.tenantId} is no longer bound to an organization.`);
      }),
    );
}
