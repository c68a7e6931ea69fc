import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * vitest global set-up: `npm run build:js` (tsc into dist/, incremental: a few seconds when nothing changed, and the
 * checks' metadata copied), so the tests that spawn the CLI run it as shipped (bin/vigil.mjs → dist/) and never a
 * stale build. `npm test` builds first anyway; this keeps `npx vitest run <file>` honest too.
 */
export default function setup(): void {
  execFileSync('npm', ['run', '-s', 'build:js'], { cwd: join(import.meta.dirname, '..', '..'), stdio: 'inherit' });
}
