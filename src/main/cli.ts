#!/usr/bin/env node
import { Command } from 'commander';
import { registerAgents } from '../cli/commands/agents.ts';
import { registerAudit } from '../cli/commands/audit.ts';
import { registerChecks } from '../cli/commands/checks.ts';
import { registerCollect } from '../cli/commands/collect.ts';
import { registerTenants } from '../cli/commands/tenants.ts';
import { registerOrganizations } from '../cli/commands/organizations.ts';
import { registerConsent } from '../cli/commands/consent.ts';
import { registerDb } from '../cli/commands/db.ts';
import { registerMasterKey } from '../cli/commands/master-key.ts';
import { registerDemo } from '../cli/commands/demo.ts';
import { registerEmulator } from '../cli/commands/emulator.ts';
import { registerEnvironments } from '../cli/commands/environments.ts';
import { registerFindings } from '../cli/commands/findings.ts';
import { registerIntegrations } from '../cli/commands/integrations.ts';
import { registerJobs } from '../cli/commands/jobs.ts';
import { registerRegister } from '../cli/commands/register.ts';
import { registerSafelist } from '../cli/commands/safelist.ts';
import { registerService } from '../cli/commands/service.ts';
import { registerAccess } from '../cli/commands/access.ts';
import { registerSinks } from '../cli/commands/sinks.ts';
import { createHost } from '../cli/host.ts';
import { runProgram } from '../cli/run.ts';
import { EXIT_CODES_HELP } from '../cli/output.ts';
import { invalidInput } from '../core/errors.ts';
import { createRuntime } from './runtime.ts';

/**
 * The `vigil` command line: composition root wiring commands to the runtime. The server, the queue, the demo and the
 * emulator are loaded only by the commands that run them (they weigh ≈ 0.7 s of CPU at start-up, paid by every
 * `vigil collect` and `vigil audit` otherwise).
 */
const service = () => import('./service.ts');
const program = new Command()
  .name('vigil')
  .description('Security monitor for the Power Platform, Copilot Studio and Microsoft 365 Copilot estate of a Microsoft Entra ID tenant')
  .version('0.1.0')
  .option('--data-dir <dir>', 'data directory (default: $VIGIL_DATA_DIR, else ./.vigil)')
  .option('--verbose', 'log to stderr too')
  .addHelpText('after', EXIT_CODES_HELP);

const host = createHost(program, createRuntime);
registerIntegrations(program, host);
registerConsent(program, host);
registerRegister(program, host);
registerEnvironments(program, host);
registerCollect(program, host);
registerFindings(program, host);
registerAgents(program, host);
registerChecks(program);
registerAudit(program, host);
registerSinks(program, host);
registerAccess(program, host);
registerTenants(program, host);
registerOrganizations(program, host);
registerDb(program, host);
registerMasterKey(program, host);
registerService(program, host, { serve: async (rt, p) => (await service()).runServe(rt, p), worker: async (rt, p) => (await service()).runWorker(rt, p) });
registerJobs(program, host, async (rt) => {
  if (!rt.config.database) throw invalidInput('DATABASE_URL', 'The shared job queue needs PostgreSQL.', 'Set DATABASE_URL, or on SQLite use `vigil collect <integration>` and `vigil serve`.');
  return (await service()).createQueue(rt);
});
registerSafelist(program);
registerDemo(program, async (o) => (await import('./demo.ts')).runDemo(o));
registerEmulator(program, async (o) => (await import('./emulator.ts')).runEmulator(o));

/** The whole command tree, without running it (the docs test walks it: test/unit/docs-sync.test.ts). */
export function buildProgram(): Command {
  return program;
}

// VIGIL_CLI_IMPORT_ONLY=1: imported for its command tree (by a test), not run.
if (process.env.VIGIL_CLI_IMPORT_ONLY !== '1') await runProgram(program, process.argv);
