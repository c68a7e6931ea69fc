#!/usr/bin/env node
import { Command } from 'commander';
import type { CommandHost } from '../cli/host.ts';
import { createHost } from '../cli/host.ts';
import { runProgram } from '../cli/run.ts';
import { EXIT_CODES_HELP } from '../cli/output.ts';
import { invalidInput } from '../core/errors.ts';
import type { RuntimeOptions } from './runtime.ts';

/**
 * The `vigil` command line: composition root wiring commands to the runtime. Start-up loads only what the command
 * typed needs: the module of its top-level command (from {@link COMMAND_MODULES}), and the runtime, the server, the
 * queue, the demo and the emulator only when an action runs. `vigil --help`, an unknown command and `vigil help`
 * load every command module (the help lists them all). bench/cli.ts measures the start-up this buys.
 */

/** Registers one command module's commands on the program. */
type Register = (program: Command, host: CommandHost) => void;

const service = () => import('./service.ts');

/**
 * Top-level command name → the module that registers it (several names may share one module). A test
 * (test/unit/cli-manifest.test.ts) asserts that every module registers exactly the names listed for it.
 */
export const COMMAND_MODULES: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['integrations'], load: async () => (await import('../cli/commands/integrations.ts')).registerIntegrations },
  { names: ['consent-url'], load: async () => (await import('../cli/commands/consent.ts')).registerConsent },
  { names: ['register-management-app'], load: async () => (await import('../cli/commands/register.ts')).registerRegister },
  { names: ['environments'], load: async () => (await import('../cli/commands/environments.ts')).registerEnvironments },
  { names: ['collect', 'runs'], load: async () => (await import('../cli/commands/collect.ts')).registerCollect },
  { names: ['findings'], load: async () => (await import('../cli/commands/findings.ts')).registerFindings },
  { names: ['inventory'], load: async () => (await import('../cli/commands/inventory.ts')).registerInventory },
  { names: ['agents'], load: async () => (await import('../cli/commands/agents.ts')).registerAgents },
  { names: ['checks'], load: async () => (await import('../cli/commands/checks.ts')).registerChecks },
  { names: ['compliance'], load: async () => (await import('../cli/commands/compliance.ts')).registerCompliance },
  { names: ['audit', 'events', 'alerts'], load: async () => (await import('../cli/commands/audit.ts')).registerAudit },
  { names: ['sinks'], load: async () => (await import('../cli/commands/sinks.ts')).registerSinks },
  { names: ['users', 'api-keys'], load: async () => (await import('../cli/commands/access.ts')).registerAccess },
  { names: ['tenants'], load: async () => (await import('../cli/commands/tenants.ts')).registerTenants },
  { names: ['organizations'], load: async () => (await import('../cli/commands/organizations.ts')).registerOrganizations },
  { names: ['db'], load: async () => (await import('../cli/commands/db.ts')).registerDb },
  { names: ['master-key'], load: async () => (await import('../cli/commands/master-key.ts')).registerMasterKey },
  {
    names: ['serve', 'worker'],
    load: async () => {
      const { registerService } = await import('../cli/commands/service.ts');
      return (program, host) =>
        registerService(program, host, {
          serve: async (rt, p) => (await service()).runServe(rt, p),
          worker: async (rt, p) => (await service()).runWorker(rt, p),
        });
    },
  },
  {
    names: ['jobs'],
    load: async () => {
      const { registerJobs } = await import('../cli/commands/jobs.ts');
      return (program, host) =>
        registerJobs(program, host, async (rt) => {
          if (!rt.config.database)
            throw invalidInput(
              'DATABASE_URL',
              'The shared job queue needs PostgreSQL.',
              'Set DATABASE_URL, or on SQLite use `vigil collect <integration>` and `vigil serve`.',
            );
          return (await service()).createQueue(rt);
        });
    },
  },
  {
    names: ['protection'],
    load: async () => {
      const [{ registerProtection }, { registerContainment }] = await Promise.all([
        import('../cli/commands/protection.ts'),
        import('../cli/commands/containment.ts'),
      ]);
      return (program, host) => {
        registerProtection(program, host);
        registerContainment(program, host);
      };
    },
  },
  { names: ['safelist'], load: async () => (await import('../cli/commands/safelist.ts')).registerSafelist },
  {
    names: ['demo'],
    load: async () => {
      const { registerDemo } = await import('./commands/demo.ts');
      return (program) => registerDemo(program, async (o) => (await import('./demo.ts')).runDemo(o));
    },
  },
  {
    names: ['emulator'],
    load: async () => {
      const { registerEmulator } = await import('./commands/emulator.ts');
      return (program) => registerEmulator(program, async (o) => (await import('./emulator.ts')).runEmulator(o));
    },
  },
];

/**
 * The top-level command `argv` (process.argv without node and the script) names, skipping global options and the
 * value of `--data-dir`; undefined when none (`vigil --version`, `vigil --help`, no arguments).
 */
export function commandNameOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return argv[i + 1];
    if (arg === '--data-dir') {
      i++;
      continue;
    }
    if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/**
 * Builds the program with the command modules `argv` needs: the one module registering its command, or every module
 * (help, an unknown name, `all`). Nothing runs.
 */
export async function buildProgram(argv: readonly string[] | 'all' = 'all'): Promise<Command> {
  const program = new Command()
    .name('vigil')
    .description('Security monitor for the Power Platform, Copilot Studio and Microsoft 365 Copilot estate of a Microsoft Entra ID tenant')
    .version('0.1.0')
    .option('--data-dir <dir>', 'data directory (default: $VIGIL_DATA_DIR, else ./.vigil)')
    .option('--verbose', 'log to stderr too')
    .addHelpText('after', EXIT_CODES_HELP);
  const host = createHost(program, async (options: RuntimeOptions) => (await import('./runtime.ts')).createRuntime(options));
  const name = argv === 'all' ? undefined : commandNameOf(argv);
  const versionOnly =
    argv !== 'all' && name === undefined && argv.some((a) => a === '-V' || a === '--version') && !argv.some((a) => a === '-h' || a === '--help');
  if (versionOnly) return program;
  const wanted = name === undefined ? undefined : COMMAND_MODULES.find((m) => m.names.includes(name));
  for (const m of wanted ? [wanted] : COMMAND_MODULES) (await m.load())(program, host);
  return program;
}

/**
 * Runs the command line `argv` (as process.argv: node, script, arguments…) with the exit codes of `vigil --help`
 * (src/cli/run.ts); bin/vigil.mjs calls it.
 */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  await runProgram(await buildProgram(argv.slice(2)), argv);
}

// Run directly (`node --import tsx src/main/cli.ts …`, as the tests do) rather than imported by bin/vigil.mjs.
if (import.meta.filename === process.argv[1]) await main();
