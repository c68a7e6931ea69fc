/**
 * `npm run bench:cli [-- runs]`: start-up time of the CLI as shipped (bin/vigil.mjs → dist/, on the Node that runs
 * this script, which `npm run` takes from the pinned `node` devDependency) for `vigil --version`, `vigil findings
 * --json` on the demo's database and `vigil checks`, beside two baselines measured in the same run, interleaved run
 * by run: Node starting an empty script (the floor), and the same command from source through tsx (how Vigil ran
 * before it shipped compiled JavaScript). Goals (issue 16): ≤ 0.3 s for `--version`, ≤ 0.6 s for the others.
 * Writes its table into bench/README.md; exits 1 when a command failed (a partial run says so) or a goal is missed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBenchSection } from './readme.ts';

const ROOT = join(import.meta.dirname, '..');
const RUNS = Number(process.argv[2] ?? 15);
if (!Number.isInteger(RUNS) || RUNS < 3) throw new Error(`runs must be a whole number ≥ 3, got '${process.argv[2]}'`);
if (!existsSync(join(ROOT, 'dist', 'src', 'main', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm ci does)');

const node = process.execPath;
const dataDir = mkdtempSync(join(tmpdir(), 'vigil-bench-cli-'));
const demoDir = join(dataDir, 'demo');

/** Runs a command once; returns its wall time in seconds, or throws with its output when it fails. */
function timeOnce(args: string[]): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(node, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`'${args.join(' ')}' exited ${r.status}: ${(r.stderr || r.stdout).slice(0, 400)}`);
  return seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  process.stderr.write('bench:cli — preparing the demo database (vigil demo)…\n');
  timeOnce(['bin/vigil.mjs', 'demo', '--data-dir', demoDir, '--json']);

  const cases = [
    { label: 'vigil --version', args: ['--version'], goal: 0.3 },
    { label: 'vigil findings --json', args: ['--data-dir', demoDir, 'findings', '--json'], goal: 0.6 },
    { label: 'vigil checks', args: ['checks'], goal: 0.6 },
  ];
  const floor: number[] = [];
  const rows: string[] = [];
  let missed = 0;
  for (const c of cases) {
    const shipped: number[] = [];
    const tsx: number[] = [];
    timeOnce(['bin/vigil.mjs', ...c.args]); // warm-up (file cache)
    for (let i = 0; i < RUNS; i++) {
      shipped.push(timeOnce(['bin/vigil.mjs', ...c.args]));
      tsx.push(timeOnce(['--import', 'tsx', 'src/main/cli.ts', ...c.args]));
      floor.push(timeOnce(['-e', '0']));
    }
    const m = median(shipped);
    const met = m <= c.goal;
    if (!met) missed++;
    rows.push(
      `| \`${c.label}\` | ${m.toFixed(2)} (${Math.min(...shipped).toFixed(2)}–${Math.max(...shipped).toFixed(2)}) | ${median(tsx).toFixed(2)} | ${(median(tsx) / m).toFixed(1)}× | ≤ ${c.goal} s: ${met ? 'met' : '**missed**'} |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  }
  const body = [
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:cli\` (${RUNS} runs of each command, interleaved with its baselines; medians in seconds, min–max in brackets), Node ${process.version}, ${process.platform}/${process.arch}. Node starting an empty script (\`node -e 0\`): ${median(floor).toFixed(2)} s.`,
    '',
    '| command | shipped (bin/vigil.mjs → dist/) | from source through tsx | speed-up | goal |',
    '|---|---:|---:|---:|---|',
    ...rows,
  ].join('\n');
  writeBenchSection('cli', body);
  process.stdout.write(body + '\n');
  if (missed) {
    process.stderr.write(`bench:cli: ${missed} goal(s) missed\n`);
    process.exitCode = 1;
  }
} catch (e) {
  process.stderr.write(`bench:cli: partial run, nothing written to bench/README.md: ${(e as Error).message}\n`);
  process.exitCode = 1;
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
