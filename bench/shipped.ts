import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ThrottlingState } from '../emulator/throttling.ts';
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

/** What /usr/bin/time wrote to `file` (`%e %U %S %M`: wall s, user s, system s, peak RSS KiB), with the process's output. */
function readTime(file: string, stdout: string, stderr: string): Measured {
  const [wall, user, sys, rssKiB] = readFileSync(file, 'utf8').trim().split('\n').pop()!.split(' ').map(Number) as [number, number, number, number];
  return { stdout, stderr, wallSeconds: wall, cpuSeconds: user + sys, peakRssMiB: rssKiB / 1024 };
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
        if (err) return reject(new Error(`${nodeArgs.join(' ')} failed: ${err.message}\n${stderr.slice(-3000)}${stdout.slice(-1000)}`));
        resolve(readTime(out, stdout, stderr));
      },
    );
  });
}

/** A long-running process (`vigil serve`, `vigil worker`) under /usr/bin/time, started by {@link start}. */
export interface Running {
  /** What the process printed so far. */
  output(): { stdout: string; stderr: string };
  /**
   * Resolves with the first match of `pattern` in its standard output.
   * @throws Error when it exits first, or after `timeoutMs` (default 60,000), with the tail of its standard error.
   */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Settles when /usr/bin/time exits: its exit code (the process's, or 128 + signal for a killed one). */
  exited: Promise<number>;
  /**
   * Sends SIGTERM to the process (not to /usr/bin/time, which would die without reporting), then SIGKILL after
   * `graceSeconds` (default 45); resolves with what /usr/bin/time measured over its whole life.
   * @throws Error when it had already exited, or exits non-zero, with the tail of its standard error.
   */
  stop(graceSeconds?: number): Promise<Measured>;
}

/** The pid of the one child of `pid` (Linux: /proc/<pid>/task/<pid>/children), or undefined when it has none. */
function childOf(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts `node …nodeArgs` under /usr/bin/time with `env` added to this process's environment, for as long as the
 * benchmark needs it; {@link Running.stop} ends it and reads its wall time, CPU and peak RSS. Linux only (the node
 * child is found through /proc). Every started process must be stopped, also when the benchmark fails.
 */
export function start(nodeArgs: string[], env: Record<string, string>): Running {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-time-')), 'time');
  const child = spawn(TIME, ['-f', '%e %U %S %M', '-o', out, process.execPath, ...nodeArgs], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let code: number | undefined;
  const waiters = new Set<() => void>();
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of waiters) w();
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number>((resolve) =>
    child.once('close', (c, signal) => {
      code = c ?? 128 + (signal ? constants.signals[signal] : 0);
      for (const w of waiters) w();
      resolve(code);
    }),
  );
  const what = nodeArgs.filter((a) => !a.startsWith('-')).join(' ');
  return {
    output: () => ({ stdout, stderr }),
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(stdout);
          if (m) return done(() => resolve(m));
          if (code !== undefined) done(() => reject(new Error(`${what} exited (${code}) before printing ${pattern}:\n${stderr.slice(-3000)}`)));
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`${what} did not print ${pattern} within ${timeoutMs} ms:\n${stderr.slice(-3000)}`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    async stop(graceSeconds = 45) {
      if (code !== undefined) throw new Error(`${what} had already exited (${code}):\n${stderr.slice(-3000)}`);
      const pid = childOf(child.pid!);
      if (pid === undefined) child.kill('SIGKILL');
      else process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => {
        const p = childOf(child.pid!);
        if (p !== undefined) process.kill(p, 'SIGKILL');
      }, graceSeconds * 1000);
      const c = await exited;
      clearTimeout(timer);
      if (c !== 0) throw new Error(`${what} exited ${c} when stopped:\n${stderr.slice(-3000)}`);
      return readTime(out, stdout, stderr);
    },
  };
}

/**
 * `vigil …args` as shipped (bin/vigil.mjs with the product's Node flags), measured. To profile it, name more Node flags
 * in BENCH_VIGIL_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; Node refuses them in NODE_OPTIONS).
 */
export function vigil(env: Record<string, string>, ...args: string[]): Promise<Measured> {
  return measure(vigilArgs(args), env);
}

/** `vigil …args` as shipped, started for as long as the benchmark needs it (`serve`, `worker`): see {@link start}. */
export function startVigil(env: Record<string, string>, ...args: string[]): Running {
  return start(vigilArgs(args), env);
}

function vigilArgs(args: string[]): string[] {
  const extra = process.env.BENCH_VIGIL_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return [...PRODUCT_NODE_FLAGS, ...extra, VIGIL, ...args];
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

/**
 * The throttle floor of a throttled collection, seconds, for the tightest rate-limited bucket the emulator charged (the
 * one whose admitted requests need the longest beyond its initial capacity):
 * `pacedSeconds` — its admitted requests ÷ the limit's rate (capacity ÷ window), issue 18's definition ("the total cost
 * of its requests ÷ the tightest budget's rate"); `seconds` — the same after the bucket's initial capacity is spent at
 * once (a client that bursts to the full bucket first). Graph identity's resource-unit buckets are left out (the
 * counters count requests, not units; at the documented tiers they are far from the tightest).
 */
export function throttleFloor(state: ThrottlingState): { seconds: number; pacedSeconds: number; limit: string } {
  let best = { seconds: 0, pacedSeconds: 0, limit: 'none' };
  for (const b of state.buckets) {
    const l = state.limits[b.limit] as { capacity?: number; windowSeconds?: number };
    if (typeof l !== 'object' || l.capacity === undefined || l.windowSeconds === undefined) continue;
    const rate = l.capacity / l.windowSeconds;
    const admitted = b.requests - b.throttled;
    const seconds = Math.max(0, admitted - l.capacity) / rate;
    // The tightest limit is the one whose admitted requests outrun its bucket the longest (an hourly quota whose
    // bucket holds every request never binds, however slow its rate).
    if (seconds > best.seconds) best = { seconds, pacedSeconds: admitted / rate, limit: b.limit };
  }
  return best;
}
