import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openStore } from '../../src/store/db.ts';
import type { Database } from '../../src/store/schema.ts';

/**
 * Every store test runs on both dialects: SQLite in a temporary directory, and PostgreSQL (the machine's server)
 * in a schema of its own, dropped afterwards. Model: kysely `test/node/src/test-setup.ts`.
 */

/** The PostgreSQL server the tests use. */
export const TEST_DATABASE_URL = process.env.VIGIL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const DIALECTS = ['sqlite', 'postgres'] as const;
export type TestDialect = (typeof DIALECTS)[number];

/** A fresh, migrated store of the dialect, and how to drop it. */
export interface TestStore {
  db: Kysely<Database>;
  /** Environment that points a Vigil runtime at the same store. */
  env: Record<string, string>;
  dataDir: string;
  drop(): Promise<void>;
}

/** Opens a fresh store (migrated unless `migrate` is false). */
export async function freshStore(dialect: TestDialect, options: { migrate?: boolean } = {}): Promise<TestStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vigil-store-'));
  if (dialect === 'sqlite') {
    const db = await openStore({ dataDir, migrate: options.migrate });
    return { db, env: {}, dataDir, drop: () => db.destroy() };
  }
  const schema = `vigil_test_${randomBytes(6).toString('hex')}`;
  const db = await openStore({ dataDir, databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4, migrate: options.migrate });
  return {
    db,
    env: { DATABASE_URL: TEST_DATABASE_URL, VIGIL_DATABASE_SCHEMA: schema },
    dataDir,
    async drop() {
      await db.destroy();
      await dropSchema(schema);
      await dropSchema(`${schema}_pgboss`); // the job queue's tables, when a test started one
    },
  };
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 }) }) });
  try {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin);
  } finally {
    await admin.destroy();
  }
}
