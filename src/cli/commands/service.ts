import type { Command } from 'commander';
import type { Runtime } from '../../main/runtime.ts';
import type { CommandHost } from '../host.ts';
import { print } from '../output.ts';

/** `vigil serve` and `vigil worker` — runners injected by main/. */
export function registerService(program: Command, host: CommandHost, runners: { serve: (rt: Runtime, p: (l: string) => void) => Promise<void>; worker: (rt: Runtime, p: (l: string) => void) => Promise<void> }): void {
  program
    .command('serve')
    .description('Run the service: /healthz and /readyz, the collection scheduler, and (on SQLite) the collection workers')
    .addHelpText('after', '\nListens on VIGIL_HOST:VIGIL_PORT (default 127.0.0.1:8080). Stops gracefully on SIGTERM. See docs/configuration.md.')
    .action(host.action(async (rt) => runners.serve(rt, (l) => print(l))));
  program
    .command('worker')
    .description('Run collection jobs from the shared PostgreSQL queue (any number of workers, on any machine)')
    .addHelpText('after', '\nNeeds DATABASE_URL. Runs VIGIL_WORKER_CONCURRENCY collections at once. Stops gracefully on SIGTERM.')
    .action(host.action(async (rt) => runners.worker(rt, (l) => print(l))));
}
