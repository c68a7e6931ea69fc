import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
});
