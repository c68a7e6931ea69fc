import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationInfo, type MigrationProvider, type Transaction } from 'kysely';
import pg from 'pg';
import { VigilError } from '../core/errors.ts';
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
import type { Database } from './schema.ts';

/** A database handle or an open transaction: repositories accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** Migrations in order; frozen once released. */
const MIGRATIONS: Record<string, Migration> = { '0001_initial': m0001, '0002_schedules_budgets': m0002, '0003_credential_state': m0003, '0004_audit': m0004, '0005_audit_segments': m0005, '0006_finding_lifecycle': m0006, '0007_stream_states': m0007, '0008_estate_objects': m0008, '0009_sink_outbox': m0009, '0010_access': m0010, '0011_slice_read_mode': m0011 };

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
}

/** The dialect of an open store, for the few places that differ (capability flags, not scattered ifs). */
export type Dialect = 'sqlite' | 'postgres';

const dialects = new WeakMap<Kysely<Database>, Dialect>();

/** The dialect of a store opened by {@link openStore}. */
export function dialectOf(db: Kysely<Database>): Dialect {
  return dialects.get(db) ?? 'sqlite';
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

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the store and applies pending migrations.
 * - SQLite: `<dataDir>/vigil.db`, WAL mode, foreign keys on, 5 s busy timeout so a CLI command and a running
 *   collection can share it.
 * - PostgreSQL (`databaseUrl`): a `pg` pool whose `search_path` is the given schema.
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
      throw new VigilError('configuration', 'SCHEMA_INVALID', `Schema name '${schema}' is not a plain PostgreSQL identifier.`, { field: 'VIGIL_DATABASE_SCHEMA', remediation: 'Use lower-case letters, digits and underscores.' });
    }
    const pool = new pg.Pool({ connectionString: o.databaseUrl, max: o.poolSize ?? 10, options: `-c search_path=${schema}` });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    dialects.set(db, 'postgres');
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    } catch (e) {
      await db.destroy();
      throw new VigilError('configuration', 'DATABASE_UNREACHABLE', `Cannot use the PostgreSQL database: ${(e as Error).message}`, {
        field: 'DATABASE_URL',
        remediation: 'Check DATABASE_URL (postgres://user:password@host:5432/database) and that the server accepts connections.',
        cause: e,
      });
    }
  } else {
    mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
    const sqlite = new SQLite(join(o.dataDir, SQLITE_FILE));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    // Checkpoint the WAL every ≈ 40 MB instead of 4 MB: bulk audit writes touch the same pages again and again, and
    // fewer checkpoints write them fewer times (measured: bench/README.md, bench:audit).
    sqlite.pragma('wal_autocheckpoint = 10000');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    dialects.set(db, 'sqlite');
    sqliteHandles.set(db, sqlite);
  }
  if (o.migrate !== false) await migrate(db);
  return db;
}

function migrator(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider });
}

/**
 * Applies every pending migration; returns the names applied.
 * @throws VigilError `configuration` / `MIGRATION_FAILED` naming the migration.
 */
export async function migrate(db: Kysely<Database>): Promise<string[]> {
  let { error, results } = await migrator(db).migrateToLatest();
  // Kysely's migrator introspects every schema of a PostgreSQL database; a schema or table dropped by someone else
  // at that moment (3F000, 42P01) fails the introspection, not our migration: try again.
  for (let attempt = 1; error && attempt < 4 && ['3F000', '42P01'].includes((error as { code?: string }).code ?? ''); attempt++) {
    await new Promise((r) => setTimeout(r, 100 * attempt));
    ({ error, results } = await migrator(db).migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new VigilError('configuration', 'MIGRATION_FAILED', `Database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Applies pending migrations up to and including `name` (upgrade tests start from an older schema with it).
 * @throws VigilError `configuration` / `MIGRATION_FAILED` naming the migration.
 */
export async function migrateTo(db: Kysely<Database>, name: string): Promise<void> {
  const { error, results } = await migrator(db).migrateTo(name);
  if (error) throw new VigilError('configuration', 'MIGRATION_FAILED', `Database migration ${results?.find((r) => r.status === 'Error')?.migrationName ?? name} failed: ${(error as Error).message}`, { cause: error });
}

/** Every known migration and when it was applied (undefined when pending). */
export async function migrationStatus(db: Kysely<Database>): Promise<readonly MigrationInfo[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrator(db).getMigrations();
    } catch (e) {
      if (attempt >= 4 || !['3F000', '42P01'].includes((e as { code?: string }).code ?? '')) throw e;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

/** Current time as ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}
