import { spawn } from 'node:child_process';
import { TEST_ENV } from '../e2e/harness.ts';

/** Runs the real `vigil` CLI in a child process with `env` (on top of the test environment); resolves its exit code and output. */
export function vigil(args: string[], env: Record<string, string>, stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', ...args], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
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
