import type { Kysely } from 'kysely';
import type { Runtime, RuntimeOptions } from '../cli/host.ts';
import { unreachableRemediation } from '../config/cloud.ts';
import { loadConfig, type VigilConfig } from '../config/index.ts';
import { envelopeKeyId, loadKeyEncryptionKey, type KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import { privateDirectory } from '../platform/files/index.ts';
import { HttpClient } from '../platform/http/client.ts';
import { LinkPolicy } from '../platform/http/links.ts';
import { createLogger } from '../platform/log/index.ts';
import { openStore } from '../store/db.ts';
import { SharedBudget, tenantUserCount } from '../store/repositories/budgets.ts';
import { listSecretEnvelopes } from '../store/repositories/integrations.ts';
import type { Database } from '../store/schema.ts';
import { createSinks } from '../sinks/index.ts';

/*
 * Composition root: the one place that wires concrete parts (configuration, logger, store, HTTP pipeline, master
 * key) together for the CLI and the demo. The shape it builds, `Runtime`, is declared where commands receive it
 * (src/cli/host.ts), so the CLI depends on the shape and never on this module.
 */
export type { Runtime, RuntimeOptions };

/** Key ids of the secrets stored in the database; none before the first migration made the integrations table. */
async function storedSecretKeyIds(db: Kysely<Database>): Promise<string[]> {
  try {
    return (await listSecretEnvelopes(db)).map((e) => envelopeKeyId(e.secret_envelope) ?? 'unknown');
  } catch (e) {
    // SQLite "no such table", PostgreSQL 42P01 (undefined_table): a store not migrated yet (`vigil db migrate`).
    if ((e as { code?: string }).code === '42P01' || /no such table/.test((e as Error).message)) return [];
    throw e;
  }
}

/**
 * Builds the runtime.
 * @throws VigilError `configuration` for bad variables, an unsafe key file, a failed migration, or a missing master key
 *   while the database holds encrypted secrets (`MASTER_KEY_MISSING`: never generated then, see loadKeyEncryptionKey).
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const base = loadConfig(options.env ?? process.env, { dataDir: options.dataDir });
  const config: VigilConfig = options.cloud ? Object.freeze({ ...base, cloud: options.cloud }) : base;
  // The data directory holds the database, the key file and the log: owner-only (0700), tightened when it existed.
  const dataDirTightened = privateDirectory(config.dataDir);
  const logger = createLogger({ level: options.verbose ? 'debug' : config.logLevel, dataDir: config.dataDir, stderr: options.verbose ?? false });
  if (dataDirTightened) logger.warn(dataDirTightened, 'permissions of an existing file tightened to owner-only');
  const db = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.database?.url,
    schema: config.database?.schema,
    migrate: options.migrate,
    ...(options.walAutocheckpointPages !== undefined ? { walAutocheckpointPages: options.walAutocheckpointPages } : {}),
    onTightened: (t) => logger.warn(t, 'permissions of an existing file tightened to owner-only'),
  });
  let kek: KeyEncryptionKey;
  try {
    // The key is loaded after the store is open: whether a missing key file may be generated depends on the secrets
    // the database already holds (on PostgreSQL, shared by every Vigil process whatever its data directory).
    const storedKeyIds = config.masterKey ? [] : await storedSecretKeyIds(db);
    kek = loadKeyEncryptionKey(config.dataDir, config.masterKey, { storedKeyIds, replaceLostKey: options.replaceLostKey });
  } catch (e) {
    await db.destroy();
    throw e;
  }
  // Every service's documented limits (platform/http/budget.ts); the identity tier of a tenant from its stored users.
  const budget = new SharedBudget(db, config.budgets, (tenantId) => tenantUserCount(db, tenantId));
  // prom-client is loaded only for a runtime that keeps metrics (see RuntimeOptions.metrics).
  const metrics = options.metrics === false ? undefined : new (await import('../platform/metrics/index.ts')).Metrics();
  const http = new HttpClient({
    links: LinkPolicy.fromProfile(config.cloud),
    caPem: config.cloud.caPem,
    maxAttempts: config.http.maxAttempts,
    maxWaitSeconds: config.http.maxWaitSeconds,
    logger,
    budget,
    metrics,
    unreachableHint: (host) => unreachableRemediation(config.cloud, (options.env ?? process.env).VIGIL_ENDPOINTS_FILE, host),
  });
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
