import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PRODUCT_NODE_FLAGS } from './peak.ts';

/**
 * Running Vigil as shipped from a benchmark: `node <product flags> bin/vigil.mjs …` over the compiled `dist/`, one
 * process per command, measured by /usr/bin/time (GNU time: `%e` wall seconds, `%U` + `%S` CPU seconds, `%M` peak
 * resident set in KiB). Baselines are measured the same way.
 */

/** The project folder. */
export const ROOT = join(import.meta.dirname, '..');
const VIGIL = join(ROOT, 'bin', 'vigil.mjs');
const TIME = '/usr/bin/time';

/**
 * Fails early when the benchmark cannot measure the product as shipped.
 * @throws Error naming the fix: /usr/bin/time missing (Debian package `time`), or `dist/` not built.
 */
export function assertShippedBenchReady(): void {
  if (!existsSync(TIME)) throw new Error('this benchmark needs /usr/bin/time (Debian package `time`: apt-get install -y time)');
  if (!existsSync(join(ROOT, 'dist', 'src', 'main', 'cli.js'))) throw new Error('Vigil is not built: run `npm run build:js` first');
}

/** What /usr/bin/time measured of one process, with its standard output and error. */
export interface Measured {
  stdout: string;
  stderr: string;
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMiB: number;
}

/**
 * Runs `node …nodeArgs` under /usr/bin/time with `env` added to this process's environment. Asynchronous, so an
 * emulator serving from this process keeps serving.
 * @throws Error with the tail of its standard error when it exits non-zero.
 */
export function measure(nodeArgs: string[], env: Record<string, string>): Promise<Measured> {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-time-')), 'time');
  return new Promise((resolve, reject) => {
    execFile(
      TIME,
      ['-f', '%e %U %S %M', '-o', out, process.execPath, ...nodeArgs],
      { env: { ...process.env, ...env }, maxBuffer: 256 << 20 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${nodeArgs.join(' ')} failed: ${err.message}\n${stderr.slice(-3000)}`));
        const [wall, user, sys, rssKiB] = readFileSync(out, 'utf8').trim().split('\n').pop()!.split(' ').map(Number) as [number, number, number, number];
        resolve({ stdout, stderr, wallSeconds: wall, cpuSeconds: user + sys, peakRssMiB: rssKiB / 1024 });
      },
    );
  });
}

/**
 * `vigil …args` as shipped (bin/vigil.mjs with the product's Node flags), measured. To profile it, name more Node flags
 * in BENCH_VIGIL_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; Node refuses them in NODE_OPTIONS).
 */
export function vigil(env: Record<string, string>, ...args: string[]): Promise<Measured> {
  const extra = process.env.BENCH_VIGIL_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return measure([...PRODUCT_NODE_FLAGS, ...extra, VIGIL, ...args], env);
}

/**
 * Adds a customer-app integration through the CLI as a user does (`integrations add --mode customer-app`, the
 * secret from the environment variable `BENCH_SECRET` of `env`).
 * @returns the integration id.
 */
export async function addIntegration(env: Record<string, string>, tenantId: string, clientId: string): Promise<string> {
  const out = await vigil(
    env,
    'integrations',
    'add',
    '--mode',
    'customer-app',
    '--tenant-id',
    tenantId,
    '--client-id',
    clientId,
    '--client-secret-env',
    'BENCH_SECRET',
    '--json',
  );
  // `integrations add --json` prints the integration's detail, as GET /api/v1/integrations/{id} answers it.
  return (JSON.parse(out.stdout) as { integration: { id: string } }).integration.id;
}

/** Where a benchmark runs Vigil against a running emulator: its work folder, the emulator's endpoints file, the app and the environment. */
export interface BenchSetting {
  work: string;
  endpoints: string;
  app: { appId: string };
  env: { VIGIL_DATA_DIR: string; VIGIL_ENDPOINTS_FILE: string; BENCH_SECRET: string } & Record<string, string>;
}

/**
 * A work folder (`prefix-…` under the temporary directory) with the emulator's endpoints file and CA, the tenant's
 * connector app, and the environment Vigil runs with: data directory `<work>/data`, the endpoints file, warnings-only
 * logs, the app's secret in `BENCH_SECRET`, the emulator CA trusted (also by baselines using Node's fetch).
 */
export function benchSetting(
  emulator: { writeEndpointsFile(dir: string): string },
  tenant: { connectorAppId?: string; apps: { appId: string; secrets: { value: string }[] }[] },
  prefix: string,
): BenchSetting {
  const work = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const endpoints = emulator.writeEndpointsFile(join(work, 'emulator'));
  const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId);
  if (!app) throw new Error('the generated tenant has no connector app');
  const env = {
    VIGIL_DATA_DIR: join(work, 'data'),
    VIGIL_ENDPOINTS_FILE: endpoints,
    VIGIL_LOG_LEVEL: 'warn',
    BENCH_SECRET: app.secrets[0]!.value,
    NODE_EXTRA_CA_CERTS: join(dirname(endpoints), 'ca.pem'),
  };
  return { work, endpoints, app, env };
}
