#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `npm ci` runs through the `prepare` script).
// No V8 flags (issue 18): memory is to come down by allocating less, not by trading CPU. --optimize-for-size, used
// until then, nearly doubled the CPU of `vigil audit` over 1,000,000 records (63.6 s with it, 35 without) while it
// halved the peak memory (288 MiB against about 600: bench/README.md, bench:audit).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  // An older system Node (Node 20 is past its end of life and crashes better-sqlite3 13): run again on the Node this
  // project pins as a development dependency (node_modules/.bin/node, the registry's `node` package) when installed.
  const pinned = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (existsSync(pinned)) {
    const r = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  process.stderr.write(
    `error: Vigil needs Node.js 22.12 or later; this is ${process.version}.\n  fix: install Node.js 24 LTS (or 22.12+), or run \`npx vigil\` in a clone after \`npm ci\` (it installs the Node the project is tested with).\n`,
  );
  process.exit(2);
}
const entry = new URL('../dist/src/main/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('error: Vigil is not built (dist/src/main/cli.js is missing).\n  fix: run `npm run build` in the project folder (`npm ci` runs it).\n');
  process.exit(2);
}
await (await import(entry.href)).main(process.argv);
