import type { Command } from 'commander';
import { scoreAgents, type AgentRisk } from '../../checks/risk.ts';
import { VigilError } from '../../core/errors.ts';
import { getIntegration } from '../../onboarding/integrations.ts';
import { listFindings } from '../../store/repositories/findings.ts';
import { listIntegrations } from '../../store/repositories/integrations.ts';
import { listAgents } from '../../store/repositories/inventory.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil agents`: Copilot Studio agents ranked by risk score (findings × reach). */
export function registerAgents(program: Command, host: CommandHost): void {
  program
    .command('agents')
    .description('Copilot Studio agents ranked by risk score: open findings weighted by severity, plus how far the agent reaches')
    .option('--integration <integration>', 'only this integration (id or name)')
    .option('--limit <n>', 'at most this many', (v) => Number(v), 50)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: { integration?: string; limit: number; json?: boolean }) => {
        if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new VigilError('invalid-input', 'INVALID_INPUT', `--limit '${opts.limit}' is not a positive whole number.`, { field: '--limit', remediation: 'Give a number such as 50.' });
        const integrations = opts.integration ? [await getIntegration(rt.db, opts.integration)] : await listIntegrations(rt.db);
        const ranked: (AgentRisk & { integrationId: string })[] = [];
        for (const i of integrations) {
          // Suppressed findings are accepted risk: they do not count.
          const open = await listFindings(rt.db, { integrationId: i.id, status: 'open' });
          for (const r of scoreAgents(await listAgents(rt.db, i.id), open)) ranked.push({ integrationId: i.id, ...r });
        }
        ranked.sort((a, b) => b.score - a.score);
        const shown = ranked.slice(0, opts.limit);
        if (opts.json) return printJson(shown);
        if (shown.length === 0) return print('No agents collected yet (run `vigil collect <integration>`).');
        print(table([['SCORE', 'AGENT', 'REACH', 'FINDINGS', 'WHY'], ...shown.map((a) => [String(a.score), a.name ?? a.agentId, a.reach, String(a.openFindings), a.reasons.join('; ')])]));
        print('What agents can touch (tools, knowledge, connections) is not evaluated in this release.');
      }),
    );
}
