/**
 * Scale-out benchmark: tenants collected per minute by 1 and by 2 `vigil worker` processes sharing one PostgreSQL
 * queue and store, against the emulator over real HTTPS. Prints one line per worker count.
 *
 * Run: npm run bench:scale [-- tenants users-per-tenant]   (needs PostgreSQL: VIGIL_BENCH_DATABASE_URL or the local server)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { PRODUCT_NODE_FLAGS } from './peak.ts';
import { loadCustomProfile } from '../src/config/cloud.ts';
import { PgBossQueue } from '../src/jobs/pgboss.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../src/onboarding/integrations.ts';
import { silentLogger } from '../src/platform/log/index.ts';

const databaseUrl = process.env.VIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const tenantCount = Number(process.argv[2] ?? 12);
const usersPerTenant = Number(process.argv[3] ?? 1500);

async function dropSchemas(...schemas: string[]): Promise<void> {
  const admin = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl, max: 1 }) }) });
  for (const s of schemas) await sql`drop schema if exists ${sql.id(s)} cascade`.execute(admin);
  await admin.destroy();
}

function worker(env: Record<string, string>): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, [...PRODUCT_NODE_FLAGS, 'bin/vigil.mjs', 'worker'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  return { child, ready };
}

const tenants = Array.from({ length: tenantCount }, (_, i) =>
  generateTenant({
    seed: `scale-bench-${i}`,
    sizes: {
      users: usersPerTenant,
      guests: Math.round(usersPerTenant / 20),
      groups: Math.round(usersPerTenant / 50),
      environments: 4,
      agents: Math.round(usersPerTenant / 25),
    },
  }),
);
const emulator = await startEmulator({ tenants });
const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'bench-emu-')));
console.log(
  `${tenantCount} tenants of ${usersPerTenant} users (+5 % guests, ${Math.round(usersPerTenant / 50)} groups, 4 environments, ${Math.round(usersPerTenant / 25)} agents) on PostgreSQL`,
);
console.log('workers  concurrency/worker  seconds  tenants/minute');
for (const workers of [1, 2]) {
  const schema = `vigil_bench_${randomBytes(4).toString('hex')}`;
  const env = {
    DATABASE_URL: databaseUrl,
    VIGIL_DATABASE_SCHEMA: schema,
    VIGIL_ENDPOINTS_FILE: endpointsFile,
    VIGIL_MASTER_KEY: randomBytes(32).toString('base64'),
    VIGIL_LOG_LEVEL: 'warn',
    VIGIL_WORKER_CONCURRENCY: '2',
  };
  const rt = await createRuntime({ dataDir: mkdtempSync(join(tmpdir(), 'bench-data-')), cloud: loadCustomProfile(endpointsFile), env });
  const ids: string[] = [];
  for (const t of tenants) {
    const app = t.apps.find((a) => a.appId === t.connectorAppId)!;
    ids.push((await addCustomerAppIntegration(rt, { tenantId: t.id, clientId: app.appId, clientSecret: app.secrets[0]!.value })).integration.id);
  }
  const procs = Array.from({ length: workers }, () => worker(env));
  await Promise.all(procs.map((p) => p.ready));
  const queue = new PgBossQueue({ connectionString: databaseUrl, schema: `${schema}_pgboss`, logger: silentLogger() });
  await queue.start();
  const started = Date.now();
  for (const id of ids) await queue.enqueueCollection(id);
  for (;;) {
    const rows = await rt.db.selectFrom('collection_runs').select('status').execute();
    if (rows.length === ids.length && rows.every((r) => r.status !== 'running')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`${String(workers).padEnd(8)} ${'2'.padEnd(19)} ${seconds.toFixed(1).padEnd(8)} ${((tenantCount / seconds) * 60).toFixed(1)}`);
  for (const p of procs) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => new Promise((r) => p.child.once('exit', r))));
  await queue.stop();
  await rt.close();
  await dropSchemas(schema, `${schema}_pgboss`);
}
await emulator.close();
