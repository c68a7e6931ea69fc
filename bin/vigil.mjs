#!/usr/bin/env -S node --optimize-for-size
// Runs the TypeScript CLI through tsx's loader, so `npx vigil` works from a clone without a build step.
// --optimize-for-size: V8 grows the heap by a smaller factor and keeps a smaller young generation. A collection
// holds little at once (pages, slices, one check's inventory) but allocates a lot; without it V8 lets garbage pile
// up to ~400 MiB RSS on a 50,000-user tenant, with it the peak stays near 200 MiB (bench/README.md). The same flag is
// in the Dockerfile's ENTRYPOINT and the npm scripts; it cannot go in NODE_OPTIONS.
import { register } from 'tsx/esm/api';
register();
await import('../src/main/cli.ts');
