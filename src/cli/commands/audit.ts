import { type Command, Option } from 'commander';
import { VigilError } from '../../core/errors.ts';
import { ALERT_STATUSES } from '../../store/repositories/audit.ts';
import { ALERT_SORTS, type AlertSort } from '../../store/repositories/queries.ts';
import { SEVERITIES } from '../../core/types.ts';
import { ingestAndDetect } from '../../sync/audit.ts';
import { listAlertsPage, listEventsPage, listEventsWithRaw, setAlertStatus } from '../../reporting/index.ts';
import type { CommandHost } from '../host.ts';
import { killAfterPages } from '../killhook.ts';
import { shortIds } from '../../core/ids.ts';
import { allPages, limitRows, listOptions, parseLimit, resolveId, type ListOptions } from '../input.ts';
import { operatorScope, ORGANIZATION_FILTER_HELP, ORGANIZATION_OBJECT_HELP } from '../scope.ts';
import { print, printJson, severityText, table, terminalWidth, wrap } from '../output.ts';
import { createProgress, silentProgress } from '../progress.ts';

/** Options of `vigil alerts`: the alerts query of `GET /api/v1/alerts` (ruleId, severity, environmentId, q, since, until, sort, order). */
interface AlertListOptions {
  integration?: string;
  organization?: string;
  status?: string;
  rule?: string;
  severity?: string;
  environment?: string;
  search?: string;
  since?: string;
  until?: string;
  sort?: AlertSort;
  order?: 'asc' | 'desc';
}

/** `vigil audit`, `vigil events`, `vigil alerts`. */
export function registerAudit(program: Command, host: CommandHost): void {
  program
    .command('audit <integration>')
    .description(
      'Ingest the Office 365 Management Activity feed and Power BI activity events of an integration up to now (resumes from its cursors), then run the detections',
    )
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, integration: string, opts: { json?: boolean }) => {
        const progress = opts.json ? silentProgress : createProgress();
        const { ingest: r, detections } = await ingestAndDetect(rt, integration, {
          publisherId: rt.config.publisherId,
          concurrency: rt.config.auditConcurrency,
          afterBlob: killAfterPages(rt.config.testKillAfterPages),
          onProgress: (p) => progress.audit(p),
          onDetect: () => progress.detect(),
        }).finally(() => progress.done());
        if (opts.json) return printJson({ ...r, detections });
        print(
          table([
            ['CONTENT TYPE', 'STATUS', 'STORED', 'DUPLICATES', 'BLOBS', 'EXPIRED', 'CURSOR'],
            ...Object.entries(r.contentTypes).map(([ct, o]) => [
              ct,
              o.status,
              String(o.stored),
              String(o.duplicates),
              String(o.blobs),
              String(o.expiredBlobs),
              o.cursor ?? '-',
            ]),
          ]),
        );
        for (const [ct, o] of Object.entries(r.contentTypes)) if (o.reason) print(`  ${wrap(`${ct}: ${o.reason}`, terminalWidth() - 2, '    ')}`);
        if (r.dataLossAlerts.length) print(`${r.dataLossAlerts.length} data-loss alert(s) raised: vigil alerts --rule audit_data_loss`);
        print(
          `Detections: ${detections.events} new event(s) evaluated, ${detections.alertsRaised} alert(s) raised${detections.alertsRaised ? ' (vigil alerts)' : ''}.`,
        );
      }),
    );

  listOptions(program.command('events').description('List ingested audit events, newest first'), 100)
    .option('--integration <integration>', 'only this integration')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .option('--since <iso>', 'only events at or after this instant (ISO 8601)')
    .option('--until <iso>', 'only events before this instant (ISO 8601)')
    .option('--operation <name>', 'only this Operation')
    .option('--user <upn>', 'only this UserId')
    .option('--raw', "with --json: include each event's raw record as the API sent it")
    .option('--json', 'print JSON')
    .action(
      host.action(
        async (
          rt,
          opts: ListOptions & {
            integration?: string;
            organization?: string;
            since?: string;
            until?: string;
            operation?: string;
            user?: string;
            raw?: boolean;
          },
        ) => {
          const limit = parseLimit(opts.limit, 100);
          if (opts.since && Number.isNaN(Date.parse(opts.since)))
            throw new VigilError('INVALID_INPUT', `--since '${opts.since}' is not a date.`, {
              field: '--since',
              remediation: 'Give an ISO 8601 date, e.g. 2026-11-20 or 2026-11-20T08:00:00Z.',
            });
          const { caller, integrationId } = await operatorScope(rt.db, opts);
          const filter = { integrationId, since: opts.since, until: opts.until, operation: opts.operation, userId: opts.user, limit };
          if (opts.json && opts.raw) return printJson(await listEventsWithRaw(rt.db, caller, filter));
          const events = (await listEventsPage(rt.db, caller, filter)).items;
          if (opts.json) return printJson(events);
          print(
            table(
              [
                ['TIME', 'OPERATION', 'WORKLOAD', 'USER', 'CLIENT IP'],
                ...events.map((e) => [e.creationTime, e.operation ?? '', e.workload ?? '', e.userId ?? '', e.clientIp ?? '']),
              ],
              { wide: opts.wide, shrink: [3] },
            ),
          );
        },
      ),
    );

  const alerts = program.command('alerts').description('Alerts (data loss and detections): list, acknowledge, close');
  listOptions(alerts.command('list', { isDefault: true }).description('List alerts, newest first'), 100)
    .option('--integration <integration>', 'only this integration')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .addOption(new Option('--status <status>', 'only this status, or all (the default)').choices([...ALERT_STATUSES, 'all']))
    .option('--rule <id>', 'only this rule')
    .addOption(new Option('--severity <severity>', 'only this severity').choices([...SEVERITIES]))
    .option('--environment <id>', 'only alerts whose detail names this Power Platform environment')
    .option('--search <text>', 'only alerts with this text (any case) in the title, rule id or detail')
    .option('--since <time>', 'only alerts created at or after this ISO 8601 time')
    .option('--until <time>', 'only alerts created before this ISO 8601 time')
    .addOption(new Option('--sort <field>', 'order by (default createdAt)').choices([...ALERT_SORTS]))
    .addOption(new Option('--order <order>', 'ascending or descending (default desc)').choices(['asc', 'desc']))
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions & AlertListOptions) => {
        const { caller, integrationId } = await operatorScope(rt.db, opts);
        const status = opts.status === 'all' ? undefined : opts.status;
        const filter = {
          integrationId,
          status,
          ruleId: opts.rule,
          severity: opts.severity,
          environmentId: opts.environment,
          q: opts.search,
          since: opts.since,
          until: opts.until,
          sort: opts.sort,
          order: opts.order,
        };
        const { rows, more } = limitRows(await allPages((page) => listAlertsPage(rt.db, caller, { ...filter, ...page })), opts, 100);
        if (opts.json) return printJson(rows);
        if (rows.length === 0) return print('No alerts.');
        const short = opts.wide ? undefined : shortIds(rows.map((a) => a.id));
        // A status filter makes the STATUS column say the same on every row: shown only when every status is listed.
        const withStatus = !opts.status || opts.status === 'all';
        print(
          table(
            [
              ['ALERT', 'SEVERITY', ...(withStatus ? ['STATUS'] : []), 'RULE', 'TITLE'],
              ...rows.map((a) => [short?.get(a.id) ?? a.id, severityText(a.severity), ...(withStatus ? [a.status] : []), a.ruleId, a.title]),
            ],
            { wide: opts.wide, shrink: [withStatus ? 4 : 3] },
          ),
        );
        if (more) print(more);
      }),
    );
  for (const [verb, status] of [
    ['ack', 'acknowledged'],
    ['close', 'closed'],
    ['reopen', 'new'],
  ] as const) {
    alerts
      .command(`${verb} <alert>`)
      .description(`Mark an alert ${status}`)
      .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
      .option('--json', 'print the alert as it now stands, as JSON')
      .action(
        host.action(async (rt, input: string, opts: { organization?: string; json?: boolean }) => {
          const id = await resolveId(rt.db, 'alerts', 'alr', input, 'alert');
          const { caller } = await operatorScope(rt.db, opts);
          const alert = await setAlertStatus(rt.db, caller, id, status);
          if (opts.json) return printJson(alert);
          print(`Alert ${id} is ${alert.status}.`);
        }),
      );
  }
}
