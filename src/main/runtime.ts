import type { Kysely } from 'kysely';
import type { CloudProfile } from '../config/cloud.ts';
import { loadConfig, type VigilConfig } from '../config/index.ts';
import { loadKeyEncryptionKey, type KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import { HttpClient } from '../platform/http/client.ts';
import { LinkPolicy } from '../platform/http/links.ts';
import { createLogger, type Logger } from '../platform/log/index.ts';
import { Metrics } from '../platform/metrics/index.ts';
import { openStore } from '../store/db.ts';
import { SharedBudget } from '../store/repositories/budgets.ts';
import type { Database } from '../store/schema.ts';
import { createSinks, type Sinks } from '../sinks/index.ts';

/**
 * Composition root: the one place that wires concrete parts (configuration, logger, store, HTTP pipeline, master
 * key) together for the CLI and the demo.
 */
export interface Runtime {
  config: VigilConfig;
  /** The cloud profile in use (= `config.cloud`). */
  cloud: CloudProfile;
  logger: Logger;
  db: Kysely<Database>;
  http: HttpClient;
  /** Prometheus metrics of this runtime (own registry): upstream requests, throttling waits, runs, events, API. */
  metrics: Metrics;
  kek: KeyEncryptionKey;
  pageSize: { graph: number; dataverse: number };
  /** SIEM sinks (webhook, syslog), undefined when none is configured. */
  sinks: Sinks | undefined;
  close(): Promise<void>;
}

/** Options of {@link createRuntime}. */
export interface RuntimeOptions {
  dataDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Replaces the cloud profile from the environment (the demo passes the emulator's). */
  cloud?: CloudProfile;
  /** Also log to stderr. */
  verbose?: boolean;
  /** Apply pending migrations on open. @default true */
  migrate?: boolean;
}

/**
 * Builds the runtime.
 * @throws VigilError `configuration` for bad variables, an unsafe key file or a failed migration.
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const base = loadConfig(options.env ?? process.env, { dataDir: options.dataDir });
  const config: VigilConfig = options.cloud ? Object.freeze({ ...base, cloud: options.cloud }) : base;
  const logger = createLogger({ level: options.verbose ? 'debug' : config.logLevel, dataDir: config.dataDir, stderr: options.verbose ?? false });
  const kek = loadKeyEncryptionKey(config.dataDir, config.masterKey);
  const db = await openStore({ dataDir: config.dataDir, databaseUrl: config.database?.url, schema: config.database?.schema, migrate: options.migrate });
  const budget = new SharedBudget(db, {
    graph: { capacity: config.budgets.graphRuPer10s, windowSeconds: 10 },
    managementActivity: { capacity: config.budgets.managementPerMinute, windowSeconds: 60 },
    dataverse: { capacity: config.budgets.dataversePer5min, windowSeconds: 300 },
  });
  const metrics = new Metrics();
  const http = new HttpClient({ links: LinkPolicy.fromProfile(config.cloud), caPem: config.cloud.caPem, maxAttempts: config.http.maxAttempts, maxWaitSeconds: config.http.maxWaitSeconds, logger, budget, metrics });
  return {
    config,
    cloud: config.cloud,
    logger,
    db,
    http,
    metrics,
    kek,
    pageSize: config.pageSize,
    sinks: createSinks(config.sinks, logger),
    async close() {
      await http.close();
      await db.destroy();
      logger.flush();
    },
  };
}
