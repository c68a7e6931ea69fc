import type { Command } from 'commander';
import { VigilError } from '../../core/errors.ts';
import type { Runtime } from '../host.ts';
import type { Sinks } from '../../sinks/index.ts';
import type { CommandHost } from '../host.ts';
import { EXIT, print, printJson, table } from '../output.ts';

function configured(rt: Runtime): Sinks {
  if (!rt.sinks) {
    throw new VigilError('NO_SINK', 'No SIEM sink is configured.', {
      field: 'VIGIL_WEBHOOK_URL',
      remediation: 'Set VIGIL_WEBHOOK_URL and VIGIL_WEBHOOK_SECRET, or VIGIL_SYSLOG_TARGET (docs/configuration.md, "SIEM sinks").',
    });
  }
  return rt.sinks;
}

/** `vigil sinks test` and `vigil sinks deliver`: the SIEM sinks (webhook, syslog). */
export function registerSinks(program: Command, host: CommandHost): void {
  const sinks = program.command('sinks').description('SIEM sinks (webhook, syslog): send a test event, deliver pending events');
  sinks
    .command('test')
    .description('Send one test event (an informational OCSF Detection Finding) to each configured sink and report the outcome; exit code 6 when a sink failed')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { json?: boolean }) => {
        const results = await configured(rt).test();
        if (results.some((r) => !r.ok)) process.exitCode = EXIT.upstream;
        if (opts.json) return printJson(results);
        print(
          table([['SINK', 'TARGET', 'RESULT'], ...results.map((r) => [r.sink, r.target, r.ok ? 'delivered' : `failed: ${r.error ?? ''}`])], { wide: true }),
        ); // one row a sink: errors whole
      }),
    );
  sinks
    .command('deliver')
    .description('Send the events still pending in the outbox (also done after every evaluation and detection run)')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { json?: boolean }) => {
        const results = await configured(rt).deliver(rt.db);
        if (results.some((r) => r.error)) process.exitCode = EXIT.upstream;
        if (opts.json) return printJson(results);
        print(
          table([['SINK', 'DELIVERED', 'PENDING', 'LAST ERROR'], ...results.map((r) => [r.sink, String(r.delivered), String(r.pending), r.error ?? ''])], {
            wide: true,
          }),
        );
      }),
    );
}
