import { defineConfig } from 'vitest/config';

/**
 * Suites that share their worker's loaded modules instead of importing the whole graph again for every file: none
 * mocks a module or stubs a global, the one fake clock (e2e/audit.test.ts) is restored in a `finally`, and each keeps
 * its state in the stores, servers and processes it creates itself. Measured on the 2-core CI machine: unit, checks and
 * corpus 62 s → 20 s; emulator and store 102 s → 69 s; the whole `vitest run` 946 s → 808 s with api as well; e2e's
 * imports 10 s in all. The browser suites, the job queue's (fake timers) and the SIGKILL suites keep a fresh module
 * graph per file.
 */
const SHARED_MODULES = ['unit', 'checks', 'corpus', 'emulator', 'store', 'api', 'e2e'].map((dir) => `test/${dir}/**/*.test.ts`);

export default defineConfig({
  test: {
    // Compiles dist/ (incrementally) first: CLI tests spawn the shipped bin/vigil.mjs.
    globalSetup: ['test/support/build.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most suites wait on child processes and HTTPS round trips: two workers on a 2-core machine (vitest's default
    // is cores − 1 = one) roughly halve the wall time without starving either.
    maxWorkers: 2,
    // `expect.poll` waits for what a server or a browser does next; vitest's 1 s default failed browser steps when
    // the two workers and Chromium shared the 2 cores (CI's load), though the same step took 0.2 s alone.
    expect: { poll: { timeout: 15_000 } },
    projects: [
      { extends: true, test: { name: 'in-process', include: SHARED_MODULES, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: SHARED_MODULES } },
    ],
  },
});
