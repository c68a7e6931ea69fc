import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Migration,
  type MigrationInfo,
  type MigrationProvider,
  type MigrationResultSet,
  type Transaction,
} from 'kysely';
import { VigilError } from '../core/errors.ts';
import { privateDirectory, privateFile, type Tightened } from '../platform/files/index.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_schedules_budgets.ts';
import * as m0003 from './migrations/0003_credential_state.ts';
import * as m0004 from './migrations/0004_audit.ts';
import * as m0005 from './migrations/0005_audit_segments.ts';
import * as m0006 from './migrations/0006_finding_lifecycle.ts';
import * as m0007 from './migrations/0007_stream_states.ts';
import * as m0008 from './migrations/0008_estate_objects.ts';
import * as m0009 from './migrations/0009_sink_outbox.ts';
import * as m0010 from './migrations/0010_access.ts';
import * as m0011 from './migrations/0011_slice_read_mode.ts';
import * as m0012 from './migrations/0012_consent_binding.ts';
import * as m0013 from './migrations/0013_budget_pace.ts';
import * as m0014 from './migrations/0014_protection.ts';
import * as m0015 from './migrations/0015_containment.ts';
import * as m0016 from './migrations/0016_alert_history.ts';
import * as m0017 from './migrations/0017_transcript_turns.ts';
import * as m0018 from './migrations/0018_posture_days.ts';
import type { Database } from './schema.ts';
import { StorableTextPlugin } from './text.ts';

/** A database handle or an open transaction: repositories accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** Runs `fn` in a transaction: a new one, or the caller's when `db` already is one (Kysely does not nest them). */
export function inTransaction<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** Migrations in order; frozen once released. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_schedules_budgets': m0002,
  '0003_credential_state': m0003,
  '0004_audit': m0004,
  '0005_audit_segments': m0005,
  '0006_finding_lifecycle': m0006,
  '0007_stream_states': m0007,
  '0008_estate_objects': m0008,
  '0009_sink_outbox': m0009,
  '0010_access': m0010,
  '0011_slice_read_mode': m0011,
  '0012_consent_binding': m0012,
  '0013_budget_pace': m0013,
  '0014_protection': m0014,
  '0015_containment': m0015,
  '0016_alert_history': m0016,
  '0017_transcript_turns': m0017,
  '0018_posture_days': m0018,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** File name of the SQLite database inside the data directory. */
export const SQLITE_FILE = 'vigil.db';

/** Where the store lives: a SQLite file in the data directory, or PostgreSQL when a URL is given. */
export interface StoreOptions {
  dataDir: string;
  /** PostgreSQL connection string (`DATABASE_URL`); SQLite when absent. */
  databaseUrl?: string | undefined;
  /** PostgreSQL schema for Vigil's tables (created if missing). @default 'public' */
  schema?: string | undefined;
  /** Pool size on PostgreSQL. @default 10 */
  poolSize?: number;
  /** Apply pending migrations on open. @default true */
  migrate?: boolean;
  /** Told of each existing SQLite file or data directory whose permissions were tightened (to log it). */
  onTightened?: (t: Tightened) => void;
  /**
   * SQLite: pages of write-ahead log after which a commit checkpoints it (https://sqlite.org/pragma.html#pragma_wal_autocheckpoint).
   * @default 10000
   */
  walAutocheckpointPages?: number;
}

/** The dialect of an open store, for the few places that differ (capability flags, not scattered ifs). */
export type Dialect = 'sqlite' | 'postgres';

/** The configured PostgreSQL schema of a store opened by {@link openStore} (none on SQLite). */
const schemas = new WeakMap<Kysely<Database>, string>();

/**
 * The dialect of a store, from its Kysely adapter: also right for a handle derived from the store (`withPlugin`,
 * `withSchema`, a transaction), which a registry of the handles {@link openStore} made would not know.
 */
export function dialectOf(db: Kysely<Database>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

const sqliteHandles = new WeakMap<Kysely<Database>, SQLite.Database>();

/**
 * The better-sqlite3 connection under a SQLite store, for the one hot path that needs a prepared statement reused
 * across rows (audit event inserts: measured 6.4 µs per row against 9.8 µs for the best single-statement form).
 * Use it only inside `db.transaction().execute(...)`, which holds Kysely's lock on this single connection, so the
 * statements run in that transaction and in no other.
 * @returns undefined for PostgreSQL stores.
 */
export function sqliteHandle(db: Kysely<Database>): SQLite.Database | undefined {
  return sqliteHandles.get(db);
}

/** Prepared statements kept per SQLite connection (the most recently used; see {@link cachingStatements}). */
const STATEMENT_CACHE = 100;

/**
 * The better-sqlite3 connection as Kysely's SQLite dialect sees it, with its prepared statements reused: Kysely's
 * SQLite driver calls `prepare` for every query it runs, and preparing is most of the CPU of a small query (a page's
 * checkpoint and heartbeat) and a large share of a 200-row upsert's (issue 18). The last {@link STATEMENT_CACHE}
 * statements are kept by SQL text, least recently used dropped; a statement busy in an `iterate()` (Kysely's
 * `stream()`) is never handed out twice: a fresh one is prepared. Statements run through Kysely's connection as before,
 * so they run under its lock and inside its transactions. SQLite prepares a kept statement again by itself when the
 * schema changed (migrations). Source: better-sqlite3 API (`Database#prepare`, `Statement#busy`,
 * github.com/WiseLibs/better-sqlite3/blob/master/docs/api.md).
 */
function cachingStatements(sqlite: SQLite.Database): Pick<SQLite.Database, 'prepare' | 'close'> {
  const kept = new Map<string, SQLite.Statement>();
  return {
    prepare(source: string) {
      const hit = kept.get(source);
      if (hit && !hit.busy) {
        kept.delete(source);
        kept.set(source, hit);
        return hit;
      }
      const stmt = sqlite.prepare(source);
      if (hit) return stmt;
      if (kept.size >= STATEMENT_CACHE) kept.delete(kept.keys().next().value!);
      kept.set(source, stmt);
      return stmt;
    },
    close() {
      kept.clear();
      return sqlite.close();
    },
  } as Pick<SQLite.Database, 'prepare' | 'close'>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the store and applies pending migrations.
 * - SQLite: `<dataDir>/vigil.db`, WAL mode, foreign keys on, 5 s busy timeout so a CLI command and a running
 *   collection can share it. The data directory is made 0700 and the database file 0600 before SQLite opens it, also
 *   when they already existed (wider existing ones are tightened and reported to `onTightened`); SQLite gives the
 *   `-wal` and `-shm` files the database file's mode.
 * - PostgreSQL (`databaseUrl`): a `pg` pool whose `search_path` is the given schema.
 * On both, every string parameter has U+0000 replaced by U+FFFD ({@link StorableTextPlugin}, see store/text.ts):
 * PostgreSQL text cannot hold it, and both dialects keep the same data.
 *
 * Sources: SQLite WAL (https://sqlite.org/wal.html); Kysely dialects and migrations (kysely.dev/docs/migrations);
 * node-postgres pooling (node-postgres.com/apis/pool).
 * @throws VigilError `configuration` for a bad schema name, an unreachable database or a failed migration.
 */
export async function openStore(options: StoreOptions | string): Promise<Kysely<Database>> {
  const o: StoreOptions = typeof options === 'string' ? { dataDir: options } : options;
  let db: Kysely<Database>;
  if (o.databaseUrl) {
    const schema = o.schema ?? 'public';
    if (!SCHEMA_NAME.test(schema)) {
      throw new VigilError('SCHEMA_INVALID', `Schema name '${schema}' is not a plain PostgreSQL identifier.`, {
        field: 'VIGIL_DATABASE_SCHEMA',
      });
    }
    // node-postgres is loaded only for PostgreSQL: SQLite commands start without it.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: o.databaseUrl, max: o.poolSize ?? 10, options: `-c search_path=${schema}` });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [new StorableTextPlugin()] });
    schemas.set(db, schema);
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    } catch (e) {
      await db.destroy();
      throw new VigilError('DATABASE_UNREACHABLE', `Cannot use the PostgreSQL database: ${(e as Error).message}`, {
        field: 'DATABASE_URL',
        cause: e,
      });
    }
  } else {
    const file = join(o.dataDir, SQLITE_FILE);
    const tightened = [
      privateDirectory(o.dataDir),
      privateFile(file, { create: true }),
      privateFile(`${file}-wal`, { create: false }),
      privateFile(`${file}-shm`, { create: false }),
    ];
    for (const t of tightened) if (t) o.onTightened?.(t);
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    // Checkpoint the WAL every ≈ 40 MB instead of 4 MB: bulk audit writes touch the same pages again and again, and
    // fewer checkpoints write them fewer times (measured: bench/README.md, bench:audit).
    // `vigil serve` passes 1,000 (the SQLite default, ≈ 4 MB): a checkpoint runs inside the commit that triggers it, on
    // the event loop, and one of 40 MB held runtime-protection answers for 50–80 ms (bench:protect).
    sqlite.pragma(`wal_autocheckpoint = ${Math.max(100, Math.floor(o.walAutocheckpointPages ?? 10000))}`);
    // SQLite's own page cache size (2 MiB) instead of better-sqlite3's build default of 16 MiB per connection
    // (compiled with SQLITE_DEFAULT_CACHE_SIZE=-16000): the cache fills as a collection writes its tables and stays
    // allocated for the life of the process, a fixed 16 MiB of `vigil collect`'s resident memory (issue 18). Pages it
    // no longer holds are read again from the operating system's file cache.
    // Sources: https://sqlite.org/pragma.html#pragma_cache_size; better-sqlite3 docs/compilation.md.
    sqlite.pragma('cache_size = -2000');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }), plugins: [new StorableTextPlugin()] });
    sqliteHandles.set(db, sqlite);
  }
  if (o.migrate !== false) await (o.databaseUrl ? migrate(db) : withMigrationLock(o.dataDir, () => migrate(db)));
  return db;
}

/** File name of the lock that serialises SQLite migrations across processes (a small SQLite database of its own). */
const MIGRATION_LOCK_FILE = 'vigil.migrate.lock';

/**
 * Runs `fn` (the migrations of a SQLite store) while holding an exclusive lock shared by every Vigil process on this
 * data directory: SQLite's own file lock on `<dataDir>/vigil.migrate.lock`, taken with `BEGIN EXCLUSIVE` and waited
 * for up to 60 s. Kysely's migration lock is a no-op on SQLite (one connection per process), so two first commands
 * at once — `vigil serve` and `vigil collect` on a new data directory — both ran migration 0001 and one failed ("table
 * integrations already exists", or "database is locked"). With the lock the second waits, then finds nothing pending.
 * Sources: SQLite locking (https://sqlite.org/lockingv3.html, BEGIN EXCLUSIVE), Kysely `SqliteAdapter.acquireMigrationLock`.
 * @throws VigilError `configuration` / `MIGRATION_FAILED` when the lock is not released within 60 s.
 */
async function withMigrationLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  // Stores opened at once in one process take turns first: the file lock below blocks the thread while it waits.
  const file = join(dataDir, MIGRATION_LOCK_FILE);
  const before = migratingHere.get(file) ?? Promise.resolve();
  const mine = before.then(() => withFileLock(file, fn));
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  migratingHere.set(file, settled);
  void settled.then(() => migratingHere.get(file) === settled && migratingHere.delete(file));
  return mine;
}

/** Migrations under way in this process, per lock file. */
const migratingHere = new Map<string, Promise<void>>();

async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  privateFile(file, { create: true });
  const lock = new SQLite(file, { timeout: 60_000 });
  try {
    try {
      lock.exec('BEGIN EXCLUSIVE');
    } catch (e) {
      throw new VigilError(
        'MIGRATION_FAILED',
        `Another Vigil process has been migrating the database beside ${file} for over a minute: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    return await fn();
  } finally {
    lock.close();
  }
}

/**
 * The migrator of a store. On PostgreSQL its tables (`kysely_migration`, `kysely_migration_lock`) live in the
 * configured schema, named explicitly: without `migrationTableSchema`, Kysely looks for its table in every schema of the
 * database and takes another schema's `kysely_migration` as Vigil's (issue 14, point 9). Kysely 0.28 has one setting
 * for both tables (`migrationTableSchema`; the lock table follows it; there is no separate lock-table schema).
 * Deployments made before this setting already have their table in that schema: the pool's `search_path` is the
 * configured schema alone, so Kysely's unqualified `create table kysely_migration` put it there.
 * Source: Kysely `MigratorProps.migrationTableSchema` (kysely.dev/docs/migrations, migrator.d.ts).
 */
function migrator(db: Kysely<Database>): Migrator {
  const schema = schemas.get(db);
  return new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
}

/**
 * PostgreSQL codes of a schema, table or column dropped or renamed by someone else while Kysely introspects the
 * database: 3F000 invalid_schema_name, 42P01 undefined_table, 42703 undefined_column (seen in CI: another schema's
 * migration altering `audit_events` while this one listed every table's columns).
 */
const TRANSIENT_INTROSPECTION = ['3F000', '42P01', '42703'];

/**
 * Runs a migrator step, trying again (up to 4 times, 100, 200, 300 ms apart) when it failed on a transient
 * introspection error: Kysely's migrator lists every schema of a PostgreSQL database, and a schema or table dropped by
 * another client at that moment (3F000, 42P01, 42703) fails that listing, not our migration.
 * @throws VigilError `configuration` / `MIGRATION_FAILED` naming the migration that failed.
 */
async function runMigrator(db: Kysely<Database>, step: (m: Migrator) => Promise<MigrationResultSet>, target: string): Promise<string[]> {
  let { error, results } = await step(migrator(db));
  for (let attempt = 1; error && attempt < 4 && TRANSIENT_INTROSPECTION.includes((error as { code?: string }).code ?? ''); attempt++) {
    await new Promise((r) => setTimeout(r, 100 * attempt));
    ({ error, results } = await step(migrator(db)));
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? target;
    throw new VigilError('MIGRATION_FAILED', `Database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Answers when the database does (`select 1`): the readiness probe of `vigil serve` (`GET /readyz`).
 * @throws the driver's error when the database cannot be reached.
 */
export async function pingStore(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * Applies every pending migration; returns the names applied.
 * @throws VigilError `configuration` / `MIGRATION_FAILED` naming the migration.
 */
export async function migrate(db: Kysely<Database>): Promise<string[]> {
  return runMigrator(db, (m) => m.migrateToLatest(), 'unknown');
}

/**
 * Applies pending migrations up to and including `name` (upgrade tests start from an older schema with it).
 * @throws VigilError `configuration` / `MIGRATION_FAILED` naming the migration.
 */
export async function migrateTo(db: Kysely<Database>, name: string): Promise<void> {
  await runMigrator(db, (m) => m.migrateTo(name), name);
}

/** Every known migration and when it was applied (undefined when pending). */
export async function migrationStatus(db: Kysely<Database>): Promise<readonly MigrationInfo[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrator(db).getMigrations();
    } catch (e) {
      if (attempt >= 4 || !TRANSIENT_INTROSPECTION.includes((e as { code?: string }).code ?? '')) throw e;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

/** Current time as ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}
