/**
 * Audit ingestion benchmark: the emulator serves a tenant's Management Activity feed holding about N records over
 * the last 48 hours; a child process ingests them all into SQLite over real HTTPS and reports records per second,
 * requests and its peak resident memory.
 *
 * Run: npm run bench:audit [-- records]   (default 1,000,000; BENCH_BLOB_SIZE records per blob, default 500;
 *      VIGIL_AUDIT_CONCURRENCY blobs in flight, default 4)
 * Profile the collector: BENCH_CHILD_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench:audit
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { PRODUCT_NODE_FLAGS } from './peak.ts';

const target = Number(process.argv[2] ?? 1_000_000);
const hours = 48;
const now = '2026-11-20T12:00:00.000Z';
const tenant = generateTenant({ seed: 'bench-audit', sizes: { users: 2000, guests: 100, groups: 20, environments: 3, agents: 50 } });
const emulator = await startEmulator({ tenants: [tenant] });
emulator.control.setClock(now);
emulator.control.configureFeed(tenant.id, {
  recordsPerHour: Math.ceil(target / hours),
  blobSize: Number(process.env.BENCH_BLOB_SIZE ?? 500),
  pageSize: 200,
  duplicateShare: 0.02,
  since: new Date(Date.parse(now) - 10 * 86_400_000).toISOString(),
});
const truth = emulator.control.auditGroundTruth(tenant.id, { from: new Date(Date.parse(now) - hours * 3_600_000).toISOString(), to: now, includeIds: false });
// Blobs are rendered before the clock starts: the upstream's cost is not the collector's (Microsoft serves stored files).
const kept = emulator.control.prerenderFeed(tenant.id, { from: new Date(Date.parse(now) - hours * 3_600_000).toISOString(), to: now });
console.log(`emulator: ${kept.blobs.toLocaleString('en-US')} content blobs pre-rendered (${Math.round(kept.bytes / 1048576)} MiB)`);
const endpoints = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'bench-emu-')));
const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
try {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [
        ...PRODUCT_NODE_FLAGS,
        ...(process.env.BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        '--import',
        'tsx',
        'bench/audit-child.ts',
        mkdtempSync(join(tmpdir(), 'bench-audit-')),
        tenant.id,
        app.appId,
        now,
        String(hours),
      ],
      { env: { ...process.env, VIGIL_ENDPOINTS_FILE: endpoints, BENCH_SECRET: app.secrets[0]!.value, VIGIL_LOG_LEVEL: 'warn' }, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => (err ? reject(err) : (process.stderr.write(stderr), resolve(stdout))),
    ),
  );
  const r = JSON.parse(out.trim().split('\n').pop()!) as { stored: number; duplicates: number; seconds: number; requests: number; maxRssMiB: number };
  console.log(
    `available unique records (ground truth): ${truth.total.unique.toLocaleString('en-US')}, delivered with duplicates: ${truth.total.records.toLocaleString('en-US')}`,
  );
  console.log(
    `stored ${r.stored.toLocaleString('en-US')} (duplicates dropped: ${r.duplicates.toLocaleString('en-US')}) in ${r.seconds.toFixed(1)} s = ${Math.round(r.stored / r.seconds).toLocaleString('en-US')} records/s`,
  );
  console.log(`requests to the Management Activity API: ${r.requests.toLocaleString('en-US')}; collector peak RSS: ${r.maxRssMiB.toFixed(0)} MiB`);
  if (r.stored !== truth.total.unique - (truth.contentTypes['DLP.All']?.unique ?? 0) && r.stored !== truth.total.unique)
    console.log('WARNING: stored count differs from the ground truth');
} finally {
  await emulator.close();
}
