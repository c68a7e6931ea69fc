import { renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { renderChecksMarkdown } from '../../checks/docs.ts';
import { loadChecks } from '../../checks/loader.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil checks list|doc`: the built-in posture checks and their documentation. Needs no database. */
export function registerChecks(program: Command): void {
  const checks = program.command('checks').description('The built-in posture checks');
  checks
    .command('list', { isDefault: true })
    .description('List every check with its severity, area and peer checks')
    .option('--area <area>', 'only this area')
    .option('--json', 'print JSON (the validated metadata)')
    .action(async (opts: { area?: string; json?: boolean }) => {
      const all = (await loadChecks()).filter((c) => !opts.area || c.metadata.area === opts.area);
      if (opts.json) return printJson(all.map((c) => c.metadata));
      print(table([['CHECK', 'SEVERITY', 'AREA', 'RESOURCE', 'TITLE'], ...all.map(({ metadata: m }) => [m.id, m.severity, m.area, m.resourceType, m.title])]));
      print(`${all.length} checks.`);
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
