import type { Command } from 'commander';
import { REGIONS, regionById } from '../../config/regions.ts';
import { loadConfig } from '../../config/index.ts';
import { print, printJson, reportError } from '../output.ts';

/** `vigil safelist [--region]`: the source addresses customers safelist when their policy requires it. */
export function registerSafelist(program: Command): void {
  program
    .command('safelist')
    .description("Print the service's source IP addresses to safelist, and its API and portal URLs, for a region")
    .option('--region <region>', `region: ${Object.keys(REGIONS).join(' or ')} (default: VIGIL_REGION)`)
    .option('--all', 'every region')
    .option('--json', 'print JSON')
    .action((opts: { region?: string; all?: boolean; json?: boolean }) => {
      try {
        const config = loadConfig(process.env, { dataDir: program.opts<{ dataDir?: string }>().dataDir });
        const regions = opts.all ? Object.values(REGIONS) : [regionById(opts.region ?? config.region.id)];
        const urls = { apiUrl: config.region.apiUrl ?? null, portalUrl: config.region.portalUrl ?? null };
        if (opts.json)
          return printJson(regions.map((r) => ({ region: r.id, name: r.name, egressIps: r.egressIps, ...(r.id === config.region.id ? urls : {}) })));
        for (const r of regions) {
          print(`${r.name} region (${r.id}): safelist these source addresses only if your policy requires it`, ...r.egressIps.map((ip) => `  ${ip}`));
          if (r.id === config.region.id && (urls.apiUrl || urls.portalUrl))
            print(`  service API: ${urls.apiUrl ?? '-'}`, `  portal:      ${urls.portalUrl ?? '-'}`);
        }
        print("These are the hosted service's addresses; a self-hosted Vigil calls Microsoft from your own network.");
      } catch (e) {
        process.exitCode = reportError(e, Boolean(opts.json));
      }
    });
}
