import { type Command, InvalidArgumentError } from 'commander';
import type { Runtime } from '../host.ts';
import type { CommandHost } from '../host.ts';
import { print } from '../output.ts';

/**
 * Parses `--port`: a whole number from 0 to 65535 (0: any free port).
 * @throws InvalidArgumentError (a usage error: exit 2) naming the value.
 */
function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 65535)
    throw new InvalidArgumentError(`'${value}' is not a port: give a whole number from 1 to 65535, e.g. --port 8081.`);
  return n;
}

/** `vigil serve` and `vigil worker` — runners injected by main/. */
export function registerService(
  program: Command,
  host: CommandHost,
  runners: { serve: (rt: Runtime, p: (l: string) => void) => Promise<void>; worker: (rt: Runtime, p: (l: string) => void) => Promise<void> },
): void {
  program
    .command('serve')
    .description('Run the service: the portal and API, /healthz and /readyz, the collection scheduler, and (on SQLite) the collection workers')
    .option('--host <address>', 'address to listen on (default: $VIGIL_HOST, else 127.0.0.1; 0.0.0.0 for every interface)')
    .option('--port <n>', 'TCP port to listen on (default: $VIGIL_PORT, else 8080)', parsePort)
    .addHelpText(
      'after',
      '\nA flag wins over its environment variable (VIGIL_HOST, VIGIL_PORT), which wins over the default 127.0.0.1:8080.\nStops gracefully on SIGTERM. See docs/configuration.md.',
    )
    // The flags stand in for their environment variables before the runtime reads its configuration, so everything
    // derived from the address (the consent redirect URI when VIGIL_API_URL is unset) follows them too.
    .hook('preAction', (_root, cmd) => {
      const o = cmd.opts<{ host?: string; port?: number }>();
      if (o.host !== undefined) process.env.VIGIL_HOST = o.host;
      if (o.port !== undefined) process.env.VIGIL_PORT = String(o.port);
    })
    // Small checkpoints: a long one runs inside a commit on the event loop and holds every answer (runtime protection).
    .action(host.action(async (rt) => runners.serve(rt, (l) => print(l)), { metrics: true, walAutocheckpointPages: 1000 }));
  program
    .command('worker')
    .description('Run collection jobs from the shared PostgreSQL queue (any number of workers, on any machine)')
    .addHelpText('after', '\nNeeds DATABASE_URL. Runs VIGIL_WORKER_CONCURRENCY collections at once. Stops gracefully on SIGTERM.')
    .action(host.action(async (rt) => runners.worker(rt, (l) => print(l)), { metrics: true }));
}
