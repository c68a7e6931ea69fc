import { type Command, Option } from 'commander';
import { VigilError } from '../../core/errors.ts';
import { alertEventIds, ALERT_STATUSES, listAlerts, listEvents, setAlertStatus, withRaw } from '../../store/repositories/audit.ts';
import { nowIso } from '../../store/db.ts';
import { ingestAndDetect } from '../../sync/audit.ts';
import { alertView, eventView } from '../../reporting/index.ts';
import type { CommandHost } from '../host.ts';
import { killAfterPages } from '../killhook.ts';
import { requireCount } from '../input.ts';
import { integrationScope, ORGANIZATION_FILTER_HELP } from '../scope.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil audit`, `vigil events`, `vigil alerts`. */
export function registerAudit(program: Command, host: CommandHost): void {
  program
    .command('audit <integration>')
    .description('Ingest the Office 365 Management Activity feed and Power BI activity events of an integration up to now (resumes from its cursors), then run the detections')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, integration: string, opts: { json?: boolean }) => {
        const { ingest: r, detections } = await ingestAndDetect(rt, integration, { publisherId: rt.config.publisherId, concurrency: rt.config.auditConcurrency, afterBlob: killAfterPages(rt.config.testKillAfterPages) });
        if (opts.json) return printJson({ ...r, detections });
        print(table([['CONTENT TYPE', 'STATUS', 'STORED', 'DUPLICATES', 'BLOBS', 'EXPIRED', 'CURSOR'], ...Object.entries(r.contentTypes).map(([ct, o]) => [ct, o.status, String(o.stored), String(o.duplicates), String(o.blobs), String(o.expiredBlobs), o.cursor ?? '-'])]));
        for (const [ct, o] of Object.entries(r.contentTypes)) if (o.reason) print(`  ${ct}: ${o.reason}`);
        if (r.dataLossAlerts.length) print(`${r.dataLossAlerts.length} data-loss alert(s) raised: vigil alerts --rule audit_data_loss`);
        print(`Detections: ${detections.events} new event(s) evaluated, ${detections.alertsRaised} alert(s) raised${detections.alertsRaised ? ' (vigil alerts)' : ''}.`);
      }),
    );

  program
    .command('events')
    .description('List ingested audit events, newest first')
    .option('--integration <integration>', 'only this integration')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .option('--since <iso>', 'only events at or after this instant (ISO 8601)')
    .option('--operation <name>', 'only this Operation')
    .option('--user <upn>', 'only this UserId')
    .option('--limit <n>', 'at most this many', (v) => Number(v), 100)
    .option('--raw', 'with --json: include each event\'s raw record as the API sent it')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { integration?: string; organization?: string; since?: string; operation?: string; user?: string; limit: number; raw?: boolean; json?: boolean }) => {
        requireCount(opts.limit, '--limit');
        if (opts.since && Number.isNaN(Date.parse(opts.since))) throw new VigilError('invalid-input', 'INVALID_INPUT', `--since '${opts.since}' is not a date.`, { field: '--since', remediation: 'Give an ISO 8601 date, e.g. 2026-11-20 or 2026-11-20T08:00:00Z.' });
        const integrationIds = await integrationScope(rt.db, opts);
        const rows = await listEvents(rt.db, { integrationIds, since: opts.since ? new Date(opts.since).toISOString() : undefined, operation: opts.operation, userId: opts.user, limit: opts.limit });
        const events = rows.map(eventView);
        if (opts.json && opts.raw) {
          const raws = await withRaw(rt.db, rows);
          return printJson(events.map((e, i) => ({ ...e, raw: raws[i]!.raw })));
        }
        if (opts.json) return printJson(events);
        print(table([['TIME', 'OPERATION', 'WORKLOAD', 'USER', 'CLIENT IP'], ...events.map((e) => [e.creationTime, e.operation ?? '', e.workload ?? '', e.userId ?? '', e.clientIp ?? ''])]));
      }),
    );

  const alerts = program.command('alerts').description('Alerts (data loss and detections): list, acknowledge, close');
  alerts
    .command('list', { isDefault: true })
    .description('List alerts, newest first')
    .option('--integration <integration>', 'only this integration')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .addOption(new Option('--status <status>', 'only this status').choices([...ALERT_STATUSES]))
    .option('--rule <id>', 'only this rule')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { integration?: string; organization?: string; status?: string; rule?: string; json?: boolean }) => {
        const integrationIds = await integrationScope(rt.db, opts);
        const alertRows = await listAlerts(rt.db, { integrationIds, status: opts.status, ruleId: opts.rule });
        const linked = opts.json ? await alertEventIds(rt.db, alertRows.map((a) => a.id)) : new Map<string, string[]>();
        const rows = alertRows.map((a) => ({ ...alertView(a), eventIds: linked.get(a.id) ?? [] }));
        if (opts.json) return printJson(rows);
        if (rows.length === 0) return print('No alerts.');
        print(table([['ALERT', 'SEVERITY', 'STATUS', 'RULE', 'TITLE'], ...rows.map((a) => [a.id, a.severity, a.status, a.ruleId, a.title])]));
      }),
    );
  for (const [verb, status] of [['ack', 'acknowledged'], ['close', 'closed'], ['reopen', 'new']] as const) {
    alerts
      .command(`${verb} <alert>`)
      .description(`Mark an alert ${status}`)
      .action(
        host.action(async (rt, id: string) => {
          if (!(await setAlertStatus(rt.db, id, status, nowIso()))) throw new VigilError('not-found', 'ALERT_NOT_FOUND', `No alert '${id}'.`, { field: 'alert', remediation: 'Run `vigil alerts` for the ids.' });
          print(`Alert ${id} is ${status}.`);
        }),
      );
  }
}
