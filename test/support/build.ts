import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * vitest global set-up: compiles src/ and emulator/ into dist/ (incremental: a few seconds when nothing changed) and
 * copies the checks' metadata, so the tests that spawn the CLI run it as shipped (bin/vigil.mjs → dist/) and never a
 * stale build. `npm test` builds first anyway; this keeps `npx vitest run <file>` honest too.
 */
export default function setup(): void {
  const root = join(import.meta.dirname, '..', '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/build-assets.mjs'], { cwd: root, stdio: 'inherit' });
}
