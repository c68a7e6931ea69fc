import type { Command } from 'commander';
import type { Runtime, RuntimeOptions } from '../main/runtime.ts';
import { reportError } from './output.ts';

/**
 * What commands get from the composition root: an `action` wrapper that opens the runtime from the global
 * options, runs the command, reports errors with the documented exit code, and always closes the runtime.
 */
export interface CommandHost {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  action<A extends any[]>(fn: (rt: Runtime, ...args: A) => Promise<void>, options?: Pick<RuntimeOptions, 'migrate' | 'replaceLostKey'>): (...args: A) => Promise<void>;
}

/** Creates the host over a runtime factory (injected by `main/`). */
export function createHost(program: Command, open: (options: RuntimeOptions) => Promise<Runtime>): CommandHost {
  return {
    action(fn, options = {}) {
      return async (...args) => {
        const global = program.opts<{ dataDir?: string; verbose?: boolean }>();
        // Commander passes (…positionals, options, command): `--json` sits in the options object.
        const opts = args[args.length - 2] as { json?: boolean } | undefined;
        let rt: Runtime | undefined;
        try {
          rt = await open({ dataDir: global.dataDir, verbose: global.verbose, ...options });
          await fn(rt, ...args);
        } catch (e) {
          rt?.logger.error({ err: { code: (e as { code?: string }).code, message: (e as Error).message } }, 'command failed');
          process.exitCode = reportError(e, Boolean(opts?.json));
        } finally {
          await rt?.close();
        }
      };
    },
  };
}
