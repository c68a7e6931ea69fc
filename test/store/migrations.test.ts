import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, migrateTo, migrationStatus, openStore } from '../../src/store/db.ts';
import * as m0001 from '../../src/store/migrations/0001_initial.ts';
import * as m0002 from '../../src/store/migrations/0002_schedules_budgets.ts';
import type { Database } from '../../src/store/schema.ts';
import { vigil } from '../support/process.ts';
import { dropSchema, TEST_DATABASE_URL } from './dialects.ts';

/**
 * Issue 14, point 9: on PostgreSQL Vigil's migration table is its own schema's, whatever other schemas of the database
 * hold. On SQLite, Kysely's migration lock does nothing across processes: Vigil's own lock makes first commands
 * started together on a new data directory take turns.
 */

const schemaName = (tag: string) => `vigil_mig_${tag}_${randomBytes(5).toString('hex')}`;

function admin(searchPath?: string): Kysely<unknown> {
  return new Kysely<unknown>({
    dialect: new PostgresDialect({
      pool: new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, ...(searchPath ? { options: `-c search_path=${searchPath}` } : {}) }),
    }),
  });
}

async function tablesNamed(name: string, schemas: string[]): Promise<string[]> {
  const a = admin();
  try {
    const r = await sql<{
      table_schema: string;
    }>`select table_schema from information_schema.tables where table_name = ${name} and table_schema in (${sql.join(schemas)}) order by table_schema`.execute(
      a,
    );
    return r.rows.map((x) => x.table_schema);
  } finally {
    await a.destroy();
  }
}

describe('migrations on postgres', () => {
  const dropped: string[] = [];
  const opened: Kysely<unknown>[] = [];
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.destroy();
    for (const s of dropped.splice(0)) await dropSchema(s);
  });

  it("another schema's kysely_migration table, listing Vigil's own migration names and others, is not taken as Vigil's", async () => {
    // The other application's schema: its migration table says 0001…0003 (Vigil's first names) and one of its own are
    // applied. Before the fix Vigil's migrator found this table (it looks in every schema), skipped creating its own
    // and failed on `relation "kysely_migration" does not exist`, or, with that schema on the search path, skipped
    // Vigil's first migrations.
    const other = schemaName('other');
    const mine = schemaName('mine');
    dropped.push(other, mine);
    const a = admin();
    opened.push(a);
    await sql`create schema ${sql.id(other)}`.execute(a);
    await sql`create table ${sql.id(other, 'kysely_migration')} (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(a);
    await sql`create table ${sql.id(other, 'kysely_migration_lock')} (id varchar(255) primary key, is_locked integer not null default 0)`.execute(a);
    await sql`insert into ${sql.id(other, 'kysely_migration')} values ('0001_initial', '2020-01-01'), ('0002_schedules_budgets', '2020-01-01'), ('0003_credential_state', '2020-01-01'), ('2020_other_app', '2020-01-01')`.execute(
      a,
    );

    const db = await openStore({ dataDir: '/nonexistent', databaseUrl: TEST_DATABASE_URL, schema: mine, poolSize: 2, migrate: false });
    opened.push(db as unknown as Kysely<unknown>);
    await migrateTo(db, '0004_audit');
    expect((await migrationStatus(db)).filter((m) => m.executedAt).map((m) => m.name)).toEqual([
      '0001_initial',
      '0002_schedules_budgets',
      '0003_credential_state',
      '0004_audit',
    ]);
    const applied = await migrate(db);
    expect(applied[0]).toBe('0005_audit_segments');
    // Vigil's tables and its migration table are in its schema; the other schema's table is untouched.
    expect(await tablesNamed('integrations', [mine, other])).toEqual([mine]);
    expect(await tablesNamed('kysely_migration', [mine, other]).then((s) => s.sort())).toEqual([mine, other].sort());
    const otherRows = await sql<{ name: string }>`select name from ${sql.id(other, 'kysely_migration')} order by name`.execute(a);
    expect(otherRows.rows.map((r) => r.name)).toEqual(['0001_initial', '0002_schedules_budgets', '0003_credential_state', '2020_other_app']);
  });

  it('a deployment migrated before the schema was named keeps its migration table: only pending migrations run', async () => {
    // What earlier Vigil did: a Migrator without migrationTableSchema over a pool whose search_path is the configured
    // schema alone. In a database with no other kysely_migration table (a database of its own here: the shared test
    // database has other tests' schemas, which is the very bug), its table lands in that schema.
    const database = schemaName('db');
    const a = admin();
    opened.push(a);
    await sql`create database ${sql.id(database)}`.execute(a);
    const url = TEST_DATABASE_URL.replace(/\/[^/]*$/, `/${database}`);
    try {
      const mine = 'vigil';
      const old = new Kysely<Database>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${mine}` }) }),
      });
      await sql`create schema ${sql.id(mine)}`.execute(old);
      const first: Record<string, Migration> = { '0001_initial': m0001, '0002_schedules_budgets': m0002 };
      const r = await new Migrator({ db: old, provider: { getMigrations: async () => first } }).migrateToLatest();
      expect(r.error).toBeUndefined();
      const where = await sql<{ table_schema: string }>`select table_schema from information_schema.tables where table_name = 'kysely_migration'`.execute(old);
      expect(where.rows.map((x) => x.table_schema)).toEqual([mine]);
      await old.destroy();

      const db = await openStore({ dataDir: '/nonexistent', databaseUrl: url, schema: mine, poolSize: 2, migrate: false });
      try {
        const applied = await migrate(db);
        expect(applied[0]).toBe('0003_credential_state');
        expect(applied).not.toContain('0001_initial');
      } finally {
        await db.destroy();
      }
    } finally {
      // pg's Pool.end() resolves before its sockets have closed: wait for the backends to go, so that FORCE never
      // terminates a connection a client is still closing (its FATAL 57P01 would surface as an unhandled error).
      for (let i = 0; i < 50; i++) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = ${database}`.execute(a);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await sql`drop database if exists ${sql.id(database)} with (force)`.execute(a);
    }
  });
});

describe('migrations on sqlite', () => {
  it('first commands started at once on a new data directory all succeed: one migrates, the others wait for it', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'vigil-first-')), 'data');
    const runs = await Promise.all(Array.from({ length: 6 }, () => vigil(['integrations', 'list', '--json'], { VIGIL_DATA_DIR: dataDir })));
    for (const r of runs) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([]);
    }
    const db = await openStore({ dataDir, migrate: false });
    try {
      expect((await migrationStatus(db)).every((m) => m.executedAt)).toBe(true);
    } finally {
      await db.destroy();
    }
  });

  it('stores opened at once in one process take turns migrating', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-twice-'));
    const dbs = await Promise.all([openStore(dataDir), openStore(dataDir), openStore(dataDir)]);
    try {
      for (const db of dbs) expect((await migrationStatus(db)).every((m) => m.executedAt)).toBe(true);
    } finally {
      for (const db of dbs) await db.destroy();
    }
  });
});
