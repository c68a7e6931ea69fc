#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx vigil` works from a clone without a build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/main/cli.ts');
