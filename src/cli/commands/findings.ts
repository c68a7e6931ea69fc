import { type Command, Option } from 'commander';
import { SEVERITIES, type Severity } from '../../core/types.ts';
import { getIntegration } from '../../onboarding/integrations.ts';
import { listFindings } from '../../store/repositories/findings.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil findings` */
export function registerFindings(program: Command, host: CommandHost): void {
  program
    .command('findings')
    .description('List findings (failed checks), most severe first')
    .option('--integration <integration>', 'only this integration (id or name)')
    .addOption(new Option('--status <status>', 'finding status').choices(['open', 'resolved', 'all']).default('open'))
    .addOption(new Option('--severity <severity>', 'only this severity').choices([...SEVERITIES]))
    .option('--check <id>', 'only this check id')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { integration?: string; status: string; severity?: Severity; check?: string; json?: boolean }) => {
        const integrationId = opts.integration ? (await getIntegration(rt.db, opts.integration)).id : undefined;
        const rows = await listFindings(rt.db, { integrationId, status: opts.status === 'all' ? undefined : (opts.status as 'open' | 'resolved'), severity: opts.severity, checkId: opts.check });
        const findings = rows.map((f) => ({
          id: f.id,
          integrationId: f.integration_id,
          checkId: f.check_id,
          severity: f.severity,
          status: f.status,
          resourceType: f.resource_type,
          resourceId: f.resource_id,
          resourceName: f.resource_name,
          reason: f.detail ? (JSON.parse(f.detail) as { reason?: string }).reason ?? null : null,
          firstSeenAt: f.first_seen_at,
          lastSeenAt: f.last_seen_at,
          resolvedAt: f.resolved_at,
        }));
        if (opts.json) return printJson(findings);
        if (findings.length === 0) return print('No findings.');
        print(table([['SEVERITY', 'CHECK', 'RESOURCE', 'REASON'], ...findings.map((f) => [f.severity, f.checkId, `${f.resourceName ?? f.resourceId}`, f.reason ?? ''])]));
      }),
    );
}
