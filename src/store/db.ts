import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Migration, type MigrationProvider, type Transaction } from 'kysely';
import { VigilError } from '../core/errors.ts';
import * as m0001 from './migrations/0001_initial.ts';
import type { Database } from './schema.ts';

/** A database handle or an open transaction: repositories accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** Migrations in order; frozen once released. */
const MIGRATIONS: Record<string, Migration> = { '0001_initial': m0001 };

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** File name of the SQLite database inside the data directory. */
export const SQLITE_FILE = 'vigil.db';

/**
 * Opens the SQLite store at `<dataDir>/vigil.db` (WAL mode, foreign keys on, 5 s busy timeout so a CLI command and
 * a running collection can share it) and applies pending migrations.
 *
 * Source: SQLite WAL (https://sqlite.org/wal.html); Kysely migrations (kysely.dev/docs/migrations).
 * @throws VigilError `configuration` / `MIGRATION_FAILED` when a migration fails.
 */
export async function openStore(dataDir: string): Promise<Kysely<Database>> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(join(dataDir, SQLITE_FILE));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db);
  return db;
}

/**
 * Applies every pending migration.
 * @throws VigilError `configuration` / `MIGRATION_FAILED` naming the migration.
 */
export async function migrate(db: Kysely<Database>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new VigilError('configuration', 'MIGRATION_FAILED', `Database migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** Current time as ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}
