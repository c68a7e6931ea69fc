import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import type { CloudProfile } from '../config/cloud.ts';
import type { VigilConfig } from '../config/index.ts';
import type { KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import type { HttpClient } from '../platform/http/client.ts';
import type { Logger } from '../platform/log/index.ts';
import type { Metrics } from '../platform/metrics/index.ts';
import type { Database } from '../store/schema.ts';
import type { Sinks } from '../sinks/index.ts';
import { reportError } from './output.ts';

/**
 * What a command runs with, built by the composition root (src/main/runtime.ts `createRuntime`): configuration, the
 * cloud profile, logger, store, HTTP pipeline, metrics, master key and sinks. Closed by the host after the command.
 */
export interface Runtime {
  config: VigilConfig;
  /** The cloud profile in use (= `config.cloud`). */
  cloud: CloudProfile;
  logger: Logger;
  db: Kysely<Database>;
  http: HttpClient;
  /**
   * Prometheus metrics of this runtime (own registry): upstream requests, throttling waits, runs, events, API.
   * Undefined when built without them (`RuntimeOptions.metrics` false: the one-shot CLI commands, which nothing scrapes).
   */
  metrics: Metrics | undefined;
  kek: KeyEncryptionKey;
  pageSize: { graph: number; dataverse: number };
  /** SIEM sinks (webhook, syslog), undefined when none is configured. */
  sinks: Sinks | undefined;
  close(): Promise<void>;
}

/** Options of the runtime factory (`createRuntime` in src/main/runtime.ts). */
export interface RuntimeOptions {
  dataDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Replaces the cloud profile from the environment (the demo passes the emulator's). */
  cloud?: CloudProfile;
  /** Also log to stderr. */
  verbose?: boolean;
  /** Apply pending migrations on open. @default true */
  migrate?: boolean;
  /**
   * Write a new master key file although the database holds secrets encrypted with a lost one (only
   * `vigil master-key reset --forget-secrets`). @default false: a missing key is then `MASTER_KEY_MISSING`.
   */
  replaceLostKey?: boolean;
  /**
   * Build the Prometheus metrics (prom-client's registry and its default process metrics, whose event-loop delay
   * monitor wakes the process every 10 ms: about 45 ms of CPU to load and 3.6 ms per second of the command's life).
   * The host passes false for every command but the long-running `serve` and `worker`. @default true
   */
  metrics?: boolean;
  /**
   * SQLite: pages of write-ahead log after which a commit checkpoints it (the checkpoint runs inside that commit, on
   * the event loop). `serve` passes a small value so no call waits behind a long checkpoint. @default 10000 (≈ 40 MB)
   */
  walAutocheckpointPages?: number;
}

/**
 * What commands get from the composition root: an `action` wrapper that opens the runtime from the global
 * options, runs the command, reports errors with the documented exit code, and always closes the runtime.
 */
export interface CommandHost {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  action<A extends any[]>(
    fn: (rt: Runtime, ...args: A) => Promise<void>,
    options?: Pick<RuntimeOptions, 'migrate' | 'replaceLostKey' | 'metrics' | 'walAutocheckpointPages'>,
  ): (...args: A) => Promise<void>;
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
          // Metrics only where something can read them (`serve`, `worker` ask for them): a one-shot command exits first.
          rt = await open({ dataDir: global.dataDir, verbose: global.verbose, metrics: false, ...options });
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
