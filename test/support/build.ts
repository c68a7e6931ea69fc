import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Set once the build ran in this vitest process (each project of vitest.config.ts runs the global set-up). */
const BUILT = Symbol.for('vigil.test.built');

/**
 * vitest global set-up: `npm run build:js` (tsc into dist/, incremental, and the checks' metadata copied), so the
 * tests that spawn the CLI run it as shipped (bin/vigil.mjs → dist/) and never a stale build. `npm test` builds just
 * before and says so (`VIGIL_DIST_BUILT=1`); this keeps `npx vitest run <file>` honest. Once per run, though every
 * project calls it.
 */
export default function setup(): void {
  const g = globalThis as { [BUILT]?: true };
  if (g[BUILT] || process.env.VIGIL_DIST_BUILT === '1') return;
  execFileSync('npm', ['run', '-s', 'build:js'], { cwd: join(import.meta.dirname, '..', '..'), stdio: 'inherit' });
  g[BUILT] = true;
}
