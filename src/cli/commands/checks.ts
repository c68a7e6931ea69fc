import { renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { renderChecksMarkdown } from '../../checks/docs.ts';
import { loadChecks } from '../../checks/loader.ts';
import { limitRows, listOptions, type ListOptions } from '../input.ts';
import { print, printJson, reportError, severityText, table } from '../output.ts';

/** `vigil checks list|doc`: the built-in posture checks and their documentation. Needs no database. */
export function registerChecks(program: Command): void {
  const checks = program.command('checks').description('The built-in posture checks');
  listOptions(checks.command('list', { isDefault: true }).description('List every check with its severity, area and peer checks'), 1000)
    .option('--area <area>', 'only this area')
    .option('--json', 'print JSON (the validated metadata)')
    .action(async (opts: ListOptions & { area?: string }) => {
      const matching = (await loadChecks()).filter((c) => !opts.area || c.metadata.area === opts.area);
      let shown: { rows: typeof matching; more?: string };
      try {
        shown = limitRows(matching, opts, 1000);
      } catch (e) {
        process.exitCode = reportError(e, Boolean(opts.json));
        return;
      }
      if (opts.json) return printJson(shown.rows.map((c) => c.metadata));
      print(
        table(
          [
            ['CHECK', 'SEVERITY', 'AREA', 'RESOURCE', 'TITLE'],
            ...shown.rows.map(({ metadata: m }) => [m.id, severityText(m.severity), m.area, m.resourceType, m.title]),
          ],
          { wide: opts.wide, shrink: [4] },
        ),
      );
      print(shown.more ?? `${matching.length} checks.`);
    });
  checks
    .command('doc')
    .description('Write the checks reference (Markdown) generated from the metadata')
    .option('--output <file>', 'write to this file (whole, then renamed) instead of stdout')
    .action(async (opts: { output?: string }) => {
      const md = renderChecksMarkdown(await loadChecks());
      if (!opts.output) {
        process.stdout.write(md);
        return;
      }
      writeFileSync(`${opts.output}.tmp`, md);
      renameSync(`${opts.output}.tmp`, opts.output);
      print(`Wrote ${opts.output}.`);
    });
}
