import type { Command } from 'commander';
import type { DemoOptions, DemoSummary } from '../demo.ts';
import { print, printJson, reportError, table } from '../../cli/output.ts';
import { createProgress } from '../../cli/progress.ts';

function positiveInt(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number ≥ 0 (got '${v}')`);
    return n;
  };
}

/** Renders the demo summary for people. */
function renderDemo(s: DemoSummary): string {
  const missing = s.integration.missingPermissions.length ? s.integration.missingPermissions.map((m) => `${m.api} ${m.permission}`).join(', ') : 'none';
  const lines = [
    '',
    'Integration',
    `  verified: ${s.integration.verified ? 'yes' : 'no'}  service principal Object ID: ${s.integration.servicePrincipalObjectId}`,
    `  missing permissions: ${missing}`,
    `  management app registered: ${s.integration.managementApp ? 'yes' : 'no'}`,
    `  environments Vigil cannot read: ${s.integration.environmentsNotReadable.join(', ') || 'none'}`,
    '',
    `Collected (run ${s.run.status}, ${(s.run.durationMs / 1000).toFixed(1)} s)`,
    table(Object.entries(s.collected).map(([k, v]) => [`  ${k}`, String(v)])),
    '',
    `Findings: ${s.findings.total} open (${
      Object.entries(s.findings.bySeverity)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ') || 'none'
    }); ${s.notEvaluated} results not evaluated`,
    table([['  SEVERITY', 'CHECK', 'RESOURCE', 'REASON'], ...s.findings.top.map((f) => [`  ${f.severity}`, f.checkId, f.resource, f.reason ?? ''])]),
    '',
    `Audit: ${s.audit.eventsIngested} events ingested (${s.audit.duplicatesDropped} duplicates dropped)${s.audit.contentTypesUnavailable.length ? `; not available: ${s.audit.contentTypesUnavailable.join(', ')}` : ''}`,
    `Alerts: ${s.audit.alertsRaised} raised (${
      Object.entries(s.audit.byRule)
        .map(([r, n]) => `${n} ${r}`)
        .join(', ') || 'none'
    })`,
    table([['  SEVERITY', 'RULE', 'TITLE'], ...s.audit.top.map((a) => [`  ${a.severity}`, a.ruleId, a.title])]),
    '',
    `Runtime protection (block mode, endpoint ${s.protection.baseUrl}, ${s.protection.validated ? 'validated by Copilot Studio' : 'NOT validated'}): agent ${s.protection.agent}`,
    `  ${s.protection.benignAllowed} of ${s.protection.benign} benign conversations ran; ${s.protection.attacksBlocked} of ${s.protection.attacks} attacks stopped (${
      Object.entries(s.protection.blockedBy)
        .map(([d, n]) => `${n} ${d}`)
        .join(', ') || 'none'
    })${s.protection.alertedOnly.length ? `; alerted, not blocked (these detectors alert by default): ${s.protection.alertedOnly.join(', ')}` : ''}`,
    `  ${s.protection.steps} tool calls recorded: npx vigil --data-dir ${s.database.replace(/\/vigil\.db$/, '')} protection events <integration>`,
    '',
    `Database: ${s.database}`,
    'Next: npx vigil --data-dir ' + s.database.replace(/\/vigil\.db$/, '') + ' findings   (and: alerts, events)',
  ];
  return lines.join('\n');
}

/** `vigil demo` — registered with the demo runner injected by main/. */
export function registerDemo(program: Command, run: (o: DemoOptions) => Promise<DemoSummary>): void {
  program
    .command('demo')
    .description('Run the main job against the built-in emulator: onboard a generated tenant, collect, check, ingest the audit feed, detect, summarise')
    .option('--json', 'print one JSON object')
    .option('--seed <seed>', 'seed of the generated tenant', '42')
    .option('--users <n>', 'member users', positiveInt('--users'))
    .option('--guests <n>', 'guest users', positiveInt('--guests'))
    .option('--groups <n>', 'groups', positiveInt('--groups'))
    .option('--environments <n>', 'Power Platform environments', positiveInt('--environments'))
    .option('--agents <n>', 'Copilot Studio agents', positiveInt('--agents'))
    .action(async (opts: { json?: boolean; seed: string; users?: number; guests?: number; groups?: number; environments?: number; agents?: number }) => {
      const global = program.opts<{ dataDir?: string; verbose?: boolean }>();
      const progress = opts.json ? { update: () => undefined, done: () => undefined } : createProgress();
      const sizes = Object.fromEntries(
        Object.entries({ users: opts.users, guests: opts.guests, groups: opts.groups, environments: opts.environments, agents: opts.agents }).filter(
          ([, v]) => v !== undefined,
        ),
      );
      try {
        const summary = await run({
          dataDir: global.dataDir,
          verbose: global.verbose,
          seed: opts.seed,
          sizes,
          onStep: opts.json ? undefined : (s) => process.stderr.write(`• ${s}\n`),
          onProgress: (p) => progress.update(p),
        });
        progress.done();
        if (opts.json) printJson(summary);
        else print(renderDemo(summary));
      } catch (e) {
        progress.done();
        process.exitCode = reportError(e, Boolean(opts.json));
      }
    });
}
