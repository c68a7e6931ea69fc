import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { VigilError } from '../../core/errors.ts';
import { SEVERITIES, type Severity } from '../../core/types.ts';
import {
  checkCatalogue,
  exportFindingsOf,
  findingDetail,
  listFindingsPage,
  suppressFinding,
  unsuppressFinding,
  type FindingsFilter,
  type FindingView,
} from '../../reporting/index.ts';
import { FINDING_SORTS, type FindingSort } from '../../store/repositories/queries.ts';
import { VIGIL_VERSION } from '../../sinks/index.ts';
import type { CommandHost } from '../host.ts';
import { operatorScope, ORGANIZATION_FILTER_HELP, ORGANIZATION_OBJECT_HELP } from '../scope.ts';
import { shortIds } from '../../core/ids.ts';
import { allPages, limitRows, listOptions, resolveId, type ListOptions } from '../input.ts';
import { print, printJson, severityText, table } from '../output.ts';

/** The check's reason for a finding (in its detail), or null. */
function reasonOf(f: FindingView): string | null {
  const reason = f.detail?.['reason'];
  return typeof reason === 'string' ? reason : null;
}

/** The filter and order options `vigil findings` and `vigil findings export` share with the API's findings query. */
interface FindingFilterOptions {
  integration?: string;
  organization?: string;
  status: 'open' | 'resolved' | 'suppressed' | 'all';
  severity?: Severity;
  check?: string;
  resource?: string;
  environment?: string;
  suppressed?: 'true' | 'false';
  search?: string;
  since?: string;
  until?: string;
  sort?: FindingSort;
  order?: 'asc' | 'desc';
}

/**
 * Adds the findings query's filters and order (`GET /api/v1/findings`: severity, checkId, resourceId, environmentId,
 * suppressed, q, since, until, sort, order) to a command, with `--status` defaulting to `status`.
 */
function findingFilterOptions(cmd: Command, status: 'open' | 'all'): Command {
  return cmd
    .option('--integration <integration>', 'only this integration (id or name)')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .addOption(new Option('--status <status>', 'finding status').choices(['open', 'resolved', 'suppressed', 'all']).default(status))
    .addOption(new Option('--severity <severity>', 'only this severity').choices([...SEVERITIES]))
    .option('--check <id>', 'only this check id')
    .option('--resource <id>', 'only findings on this resource id')
    .option('--environment <id>', 'only findings on this Power Platform environment or on a resource in it')
    .addOption(
      new Option('--suppressed <bool>', 'only suppressed findings (true) or only unsuppressed ones (false), whatever the status').choices(['true', 'false']),
    )
    .option('--search <text>', "only findings with this text (any case) in the check's title or id, the resource, the reason or the suppression's reason")
    .option('--since <time>', 'only findings first seen at or after this ISO 8601 time')
    .option('--until <time>', 'only findings first seen before this ISO 8601 time')
    .addOption(new Option('--sort <field>', 'order by (default severity)').choices([...FINDING_SORTS]))
    .addOption(new Option('--order <order>', 'ascending or descending (default desc)').choices(['asc', 'desc']));
}

/** The findings filter of {@link findingFilterOptions}' options (the API's query fields). */
function findingFilterOf(opts: FindingFilterOptions, integrationId: string | undefined): Omit<FindingsFilter, 'cursor' | 'limit'> {
  return {
    integrationId,
    status: opts.status,
    severity: opts.severity,
    checkId: opts.check,
    resourceId: opts.resource,
    environmentId: opts.environment,
    suppressed: opts.suppressed === undefined ? undefined : opts.suppressed === 'true',
    q: opts.search,
    since: opts.since,
    until: opts.until,
    sort: opts.sort,
    order: opts.order,
  };
}

/** `vigil findings` (list, show, suppress, unsuppress). */
export function registerFindings(program: Command, host: CommandHost): void {
  const findings = program.command('findings').description('Findings (failed checks): list, show with history, suppress, unsuppress');
  findingFilterOptions(
    listOptions(findings.command('list', { isDefault: true }).description('List findings, most severe first (open = not suppressed)'), 100),
    'open',
  )
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions & FindingFilterOptions) => {
        const { caller, integrationId } = await operatorScope(rt.db, opts);
        const checks = await checkCatalogue();
        const filter = findingFilterOf(opts, integrationId);
        const rows = await allPages((page) => listFindingsPage(rt.db, caller, checks, { ...filter, ...page }));
        const { rows: list, more } = limitRows(rows, opts, 100);
        if (opts.json) return printJson(list);
        if (list.length === 0) return print('No findings.');
        const short = opts.wide ? undefined : shortIds(list.map((f) => f.id));
        const withStatus = opts.status === 'all';
        print(
          table(
            [
              ['FINDING', 'SEVERITY', ...(withStatus ? ['STATUS'] : []), 'CHECK', 'RESOURCE', 'REASON'],
              ...list.map((f) => [
                short?.get(f.id) ?? f.id,
                severityText(f.severity),
                ...(withStatus ? [f.suppression ? 'suppressed' : f.status] : []),
                f.checkId,
                `${f.resourceName ?? f.resourceId}`,
                f.suppression ? `(suppressed: ${f.suppression.reason})` : (reasonOf(f) ?? ''),
              ]),
            ],
            { wide: opts.wide, shrink: withStatus ? [4, 5] : [3, 4] },
          ),
        );
        if (more) print(more);
      }),
    );

  findingFilterOptions(
    findings
      .command('export')
      .description(
        'Export findings for other tools: json (an array), csv (one row per finding, RFC 4180), sarif (SARIF 2.1.0 log) or ocsf (OCSF Detection Finding events, a JSON array; --ndjson for one per line); the same filters and order as the list and GET /api/v1/exports/findings',
      )
      .addOption(new Option('--format <format>', 'output format').choices(['json', 'csv', 'sarif', 'ocsf']).makeOptionMandatory())
      .option('--ndjson', 'with --format ocsf: one event per line (newline-delimited JSON) instead of an array'),
    'all',
  )
    .option('--output <file>', 'write to this file (written whole, then renamed into place) instead of standard output')
    .action(
      host.action(async (rt, opts: FindingFilterOptions & { format: 'json' | 'csv' | 'sarif' | 'ocsf'; ndjson?: boolean; output?: string }) => {
        if (opts.ndjson && opts.format !== 'ocsf')
          throw new VigilError('INVALID_INPUT', '--ndjson applies to --format ocsf only.', {
            field: '--ndjson',
            remediation: 'Use --format ocsf --ndjson, or leave --ndjson out.',
          });
        const { caller, integrationId } = await operatorScope(rt.db, opts);
        const format = opts.format === 'ocsf' && opts.ndjson ? 'ocsf-ndjson' : opts.format;
        const { text, count } = await exportFindingsOf(rt.db, caller, await checkCatalogue(), {
          ...findingFilterOf(opts, integrationId),
          format,
          version: VIGIL_VERSION,
        });
        if (!opts.output) return void process.stdout.write(text);
        const target = resolve(opts.output);
        const temp = `${target}.${process.pid}.tmp`;
        try {
          writeFileSync(temp, text, { mode: 0o600 });
          renameSync(temp, target);
        } catch (e) {
          rmSync(temp, { force: true });
          throw new VigilError('OUTPUT_NOT_WRITABLE', `Cannot write ${target}: ${(e as Error).message}`, {
            field: '--output',
            remediation: 'Give a path in a directory you can write to.',
          });
        }
        print(`${count} finding(s) written to ${target} (${opts.format}).`);
      }),
    );

  findings
    .command('show <finding>')
    .description('One finding with its suppression and its history (opened, resolved, reopened, suppressed…)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, input: string, opts: { organization?: string; json?: boolean }) => {
        const id = await resolveId(rt.db, 'findings', 'fnd', input, 'finding');
        const { caller } = await operatorScope(rt.db, opts);
        const v = await findingDetail(rt.db, caller, await checkCatalogue(), id);
        if (opts.json) return printJson(v);
        const history = v.history;
        print(`${v.id}  ${v.severity}  ${v.checkId}  ${v.resourceName ?? v.resourceId}  (${v.status}${v.suppression ? ', suppressed' : ''})`);
        const reason = reasonOf(v);
        if (reason) print(`  ${reason}`);
        if (v.suppression)
          print(`  suppressed by ${v.suppression.author}${v.suppression.expiresAt ? ` until ${v.suppression.expiresAt}` : ''}: ${v.suppression.reason}`);
        print(
          table([
            ['  AT', 'EVENT', 'DETAIL'],
            ...history.map((h) => [
              `  ${h.at}`,
              h.event,
              h.detail
                ? Object.entries(h.detail)
                    .filter(([, x]) => x !== null)
                    .map(([k, x]) => `${k}: ${String(x)}`)
                    .join('; ')
                : '',
            ]),
          ]),
        );
      }),
    );

  findings
    .command('suppress <finding>')
    .description('Hide a finding from the open list, with a reason, until a date (or until lifted); its lifecycle goes on')
    .requiredOption('--reason <text>', 'why (recorded in the history)')
    .option('--until <date>', 'ISO 8601 date or date-time when the suppression ends (default: until lifted)')
    .option('--by <name>', 'who decides (default: the operating-system user)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print the finding as it now stands, as JSON (as POST /api/v1/findings/{id}/suppression answers)')
    .action(
      host.action(async (rt, input: string, opts: { reason: string; until?: string; by?: string; organization?: string; json?: boolean }) => {
        const id = await resolveId(rt.db, 'findings', 'fnd', input, 'finding');
        const { caller } = await operatorScope(rt.db, opts, opts.by);
        const f = await suppressFinding(
          rt.db,
          caller,
          await checkCatalogue(),
          id,
          { reason: opts.reason, expiresAt: opts.until },
          { reason: '--reason', expiresAt: '--until' },
        );
        if (opts.json) return printJson(f);
        const expiresAt = f.suppression?.expiresAt;
        print(`Finding ${id} suppressed by ${caller.name}${expiresAt ? ` until ${expiresAt}` : ' until lifted'}.`);
      }),
    );

  findings
    .command('unsuppress <finding>')
    .description('Lift a suppression: the finding shows again as it stands')
    .option('--by <name>', 'who decides (default: the operating-system user)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print the finding as it now stands, as JSON (as DELETE /api/v1/findings/{id}/suppression answers)')
    .action(
      host.action(async (rt, input: string, opts: { by?: string; organization?: string; json?: boolean }) => {
        const id = await resolveId(rt.db, 'findings', 'fnd', input, 'finding');
        const { caller } = await operatorScope(rt.db, opts, opts.by);
        const f = await unsuppressFinding(rt.db, caller, await checkCatalogue(), id);
        if (opts.json) return printJson(f);
        print(`Finding ${id} is no longer suppressed.`);
      }),
    );
}
