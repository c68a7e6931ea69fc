import type { Command } from 'commander';
import { riskiestAgents } from '../../reporting/index.ts';
import type { CommandHost } from '../host.ts';
import { listOptions, parseLimit, type ListOptions } from '../input.ts';
import { operatorScope, ORGANIZATION_FILTER_HELP } from '../scope.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil agents`: Copilot Studio agents ranked by risk score (findings × reach). */
export function registerAgents(program: Command, host: CommandHost): void {
  listOptions(
    program
      .command('agents')
      .description(
        'Copilot Studio agents ranked by risk score: open findings weighted by severity, plus how far the agent reaches (who can use it, what it can touch)',
      ),
    50,
  )
    .option('--integration <integration>', 'only this integration (id or name)')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions & { integration?: string; organization?: string }) => {
        const limit = parseLimit(opts.limit, 50);
        const { caller, integrationId } = await operatorScope(rt.db, opts);
        const shown = await riskiestAgents(rt.db, caller, { integrationId, limit });
        if (opts.json) return printJson(shown);
        if (shown.length === 0) return print('No agents collected yet (run `vigil collect <integration>`).');
        const touch = (a: (typeof shown)[number]) =>
          a.touch.status === 'evaluated'
            ? `${a.touch.tools} tool(s), ${Object.values(a.touch.knowledge).reduce((n, k) => n + k, 0)} knowledge`
            : 'not evaluated';
        print(
          table(
            [
              ['SCORE', 'AGENT', 'REACH', 'TOUCHES', 'FINDINGS', 'WHY'],
              ...shown.map((a) => [String(a.score), a.name ?? a.agentId, a.reach, touch(a), String(a.openFindings), a.reasons.join('; ')]),
            ],
            { wide: opts.wide, shrink: [5, 1] },
          ),
        );
      }),
    );
}
