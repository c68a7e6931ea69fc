import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTenant, groundTruth, startEmulator, type GenerateOptions, type GroundTruth, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { loadCustomProfile, type CloudProfile } from '../../src/config/cloud.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import type { Database } from '../../src/store/schema.ts';
import type { Kysely } from 'kysely';

/**
 * End-to-end harness: a generated tenant served by the emulator over real HTTPS, and a Vigil runtime in a fresh
 * data directory pointed at it through an endpoints file (the same path users take).
 */
export interface World {
  tenant: Tenant;
  truth: GroundTruth;
  emulator: RunningEmulator;
  endpointsFile: string;
  cloud: CloudProfile;
  app: Tenant['apps'][number];
  secret: string;
  /** Opens a runtime on a data directory (a fresh one unless given). */
  runtime(dataDir?: string, env?: Record<string, string>): Promise<Runtime>;
  close(): Promise<void>;
}

/**
 * Fast retries for tests: Retry-After values from the emulator stay ≤ 1 s, backoff is capped at 1 s. Budgets ten times
 * Microsoft's figures, as the emulator enforces none unless a test turns its limits on (test/e2e/throttling.test.ts
 * then keeps the documented figures).
 */
export const TEST_ENV = { VIGIL_HTTP_MAX_WAIT_SECONDS: '1', VIGIL_LOG_LEVEL: 'debug', VIGIL_BUDGET_SCALE: '10' };

/**
 * A tenant for the tests: set up as Microsoft documents it for Power BI unless `permissions` says otherwise (the
 * emulator's `documented` preset: the seed's quick list without Power BI permissions).
 */
export async function world(options: GenerateOptions): Promise<World> {
  const tenant = generateTenant({ permissions: 'documented', ...options });
  const emulator = await startEmulator({ tenants: [tenant] });
  const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')));
  const cloud = loadCustomProfile(endpointsFile);
  const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
  const opened: Runtime[] = [];
  return {
    tenant,
    truth: groundTruth(tenant),
    emulator,
    endpointsFile,
    cloud,
    app,
    secret: app.secrets[0]!.value,
    async runtime(dataDir, env = {}) {
      const rt = await createRuntime({ dataDir: dataDir ?? mkdtempSync(join(tmpdir(), 'vigil-data-')), cloud, env: { ...TEST_ENV, ...env } });
      opened.push(rt);
      return rt;
    },
    async close() {
      for (const rt of opened) await rt.close().catch(() => undefined);
      await emulator.close();
    },
  };
}

/** Writes a variant of an endpoints file with some fields replaced; returns its path. */
export function endpointsVariant(file: string, patch: (json: Record<string, unknown>) => void): string {
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  patch(json);
  const out = file.replace(/endpoints\.json$/, `endpoints-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(out, JSON.stringify(json));
  return out;
}

/** The six core inventory tables and the columns that order their rows (dumps compare them in that order). */
export const INVENTORY: { table: keyof Database; order: string[] }[] = [
  { table: 'directory_users', order: ['id'] },
  { table: 'directory_groups', order: ['id'] },
  { table: 'group_memberships', order: ['group_id', 'member_id'] },
  { table: 'environments', order: ['id'] },
  { table: 'dataverse_users', order: ['environment_id', 'id'] },
  { table: 'agents', order: ['environment_id', 'id'] },
];

/**
 * What a collection stored, without the per-database noise (integration id, timestamps, run ids): every inventory row
 * with its raw JSON and deleted flag, check results and findings. Two databases holding the same data dump equal.
 */
export async function dumpDatabase(db: Kysely<Database>): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const { table, order } of INVENTORY) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let q = (db as any).selectFrom(table).selectAll();
    for (const o of order) q = q.orderBy(o);
    const rows = (await q.execute()) as Record<string, unknown>[];
    out[table] = rows.map(({ integration_id: _i, first_seen_at: _f, last_seen_at: _l, last_seen_run: _r, deleted_at, ...rest }) => ({
      ...rest,
      deleted: deleted_at !== null,
    }));
  }
  out.check_results = await db
    .selectFrom('check_results')
    .select(['check_id', 'resource_id', 'status', 'reason'])
    .orderBy('check_id')
    .orderBy('resource_id')
    .execute();
  out.findings = await db.selectFrom('findings').select(['check_id', 'resource_id', 'status', 'severity']).orderBy('check_id').orderBy('resource_id').execute();
  return out;
}
