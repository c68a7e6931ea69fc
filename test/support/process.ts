import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { TEST_ENV } from '../e2e/harness.ts';

/**
 * The CLI as shipped: bin/vigil.mjs running the compiled dist/ (vitest's global set-up, test/support/build.ts,
 * compiles what changed before any test runs). Arguments for `spawn(process.execPath, [...CLI, …])`.
 */
export const CLI = ['bin/vigil.mjs'];

/** Runs the real `vigil` CLI in a child process with `env` (on top of the test environment); resolves its exit code and output. */
export function vigil(args: string[], env: Record<string, string>, stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(stdin);
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** Polls `fn` every 50 ms until it returns a truthy value (returned), or fails after `timeoutMs` naming `what`. */
export async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A `vigil` process left running (serve, worker): its exit code when it exits, and its output so far. */
export interface VigilProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

/** Processes started by {@link startVigil} and not yet exited: killed when the test worker exits, whatever failed. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts the real `vigil` CLI with `env` on top of this process's environment, without waiting for it. The process
 * is killed when the test worker exits if the test did not stop it (a failed assertion leaves nothing running).
 */
export function startVigil(args: string[], env: Record<string, string>): VigilProcess {
  const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, exited: new Promise((r) => child.once('exit', (code) => r(code))), output: () => out };
}

/**
 * A TCP port free on 127.0.0.1 right now (for a server whose URL must be known before it starts), drawn at random
 * from 20000–32767: below Linux's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`, 32768–60999 by default),
 * so no outgoing connection (Chromium's, a database client's) takes it between this check and the server's bind — a
 * port the kernel handed out from that range did get taken so ("Port … is already in use") in a full suite run.
 * @throws Error when 50 draws found no free port.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free TCP port on 127.0.0.1 between 20000 and 32767 after 50 draws');
}
