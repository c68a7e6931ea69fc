import type { Command } from 'commander';
import type { EmulatorRunOptions } from '../emulator.ts';
import { print, reportError } from '../../cli/output.ts';

function count(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a whole number ≥ 0, got '${v}'`);
  return n;
}

/** `vigil emulator` — registered with the runner injected by main/. */
export function registerEmulator(program: Command, run: (o: EmulatorRunOptions) => Promise<void>): void {
  program
    .command('emulator')
    .description('Serve the local Microsoft cloud emulator with a generated tenant (for trying Vigil without a tenant)')
    .option('--port <port>', 'port on 127.0.0.1 (default: random)', count)
    .option('--seed <seed>', 'seed of the generated tenant', '42')
    .option('--dir <dir>', 'where to write endpoints.json, ca.pem and the connector secret', '.vigil/emulator')
    .option('--users <n>', 'member users', count)
    .option('--guests <n>', 'guest users', count)
    .option('--groups <n>', 'groups', count)
    .option('--environments <n>', 'environments', count)
    .option('--agents <n>', 'agents', count)
    .action(
      async (opts: { port?: number; seed: string; dir: string; users?: number; guests?: number; groups?: number; environments?: number; agents?: number }) => {
        const sizes = Object.fromEntries(
          Object.entries({ users: opts.users, guests: opts.guests, groups: opts.groups, environments: opts.environments, agents: opts.agents }).filter(
            ([, v]) => v !== undefined,
          ),
        );
        try {
          await run({ port: opts.port, seed: opts.seed, dir: opts.dir, sizes, print: (l) => print(l) });
        } catch (e) {
          process.exitCode = reportError(e, false);
        }
      },
    );
}
