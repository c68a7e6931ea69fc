/**
 * Audit ingestion benchmark (issue 18): Vigil as shipped — `vigil audit <integration> --json` (bin/vigil.mjs over the
 * compiled dist/, the product's Node flags, its own process, timed by /usr/bin/time) — ingests a tenant's Office 365
 * Management Activity feed of about N records over the last 24 hours (the first run's look-back) from the emulator over
 * real HTTPS, and runs the detections, as a user's command does. In the same run, the store's insert ceiling for the
 * same rows (bench/audit-ceiling.ts: every stored event and raw segment copied into an empty database of the same
 * schema through better-sqlite3, one prepared statement per table, 10,000 rows per transaction).
 *
 * The emulator renders the blobs before the clock starts (Microsoft serves stored files; rendering is not the
 * collector's cost). A run that stores a different number of records than the ground truth, or whose content types
 * do not all end `ok`, fails the benchmark and writes nothing; otherwise the table replaces the `bench:audit` section
 * of bench/README.md.
 *
 * Run: npm run bench:audit [-- records]   (default 1,000,000; BENCH_BLOB_SIZE records per blob, default 500)
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { PRODUCT_NODE_FLAGS } from './peak.ts';
import { writeBenchSection } from './readme.ts';
import { addIntegration, assertShippedBenchReady, benchSetting, measure, ROOT, vigil } from './shipped.ts';

assertShippedBenchReady();
const target = Number(process.argv[2] ?? 1_000_000);
const hours = 24;
const loadAtStart = loadavg()[0]!;
const tenant = generateTenant({ seed: 'bench-audit', sizes: { users: 2000, guests: 100, groups: 20, environments: 3, agents: 50 } });
const emulator = await startEmulator({ tenants: [tenant] });
// Power BI serves the generated app (which holds Tenant.Read.All) so that every source of `vigil audit` ends ok.
emulator.control.setPowerBiSettings(tenant.id, { rejectServicePrincipalsWithPowerBiRoles: false });
const started = Date.now();
emulator.control.configureFeed(tenant.id, {
  recordsPerHour: Math.ceil(target / hours),
  blobSize: Number(process.env.BENCH_BLOB_SIZE ?? 500),
  pageSize: 200,
  duplicateShare: 0.02,
  since: new Date(started - 10 * 86_400_000).toISOString(),
});
// The window the CLI reads: its own now − 24 h (a few seconds after `started`) up to its now. Blobs created in the
// first minute are left out of the must-have count and rendered all the same.
const window = { from: new Date(started - hours * 3_600_000).toISOString(), to: new Date(started).toISOString() };
const kept = emulator.control.prerenderFeed(tenant.id, window);
console.log(`emulator: ${kept.blobs.toLocaleString('en')} content blobs pre-rendered (${Math.round(kept.bytes / 1048576)} MiB)`);
const { work, app, env } = benchSetting(emulator, tenant, 'bench-audit');
const n = (x: number) => Math.round(x).toLocaleString('en');
const failures: string[] = [];
let section = '';
try {
  const integrationId = await addIntegration(env, tenant.id, app.appId);
  const runStart = Date.now();
  const run = await vigil(env, 'audit', integrationId, '--json');
  const out = JSON.parse(run.stdout) as {
    contentTypes: Record<string, { status: string; stored: number; duplicates: number; reason?: string }>;
    durationMs: number;
    detections: { events: number; alertsRaised: number };
  };
  const management = Object.entries(out.contentTypes).filter(([ct]) => ct !== 'PowerBI.ActivityEvents');
  const stored = management.reduce((k, [, o]) => k + o.stored, 0);
  const duplicates = management.reduce((k, [, o]) => k + o.duplicates, 0);
  const notOk = Object.entries(out.contentTypes).filter(([, o]) => o.status !== 'ok');
  // What the run had to store: every available record whose blob was created inside its window, and at most those
  // created from the benchmark's start to the CLI's start.
  const truth = (from: number, to: number) =>
    emulator.control.auditGroundTruth(tenant.id, { from: new Date(from).toISOString(), to: new Date(to).toISOString(), includeIds: false }).total.unique;
  const mustHave = truth(runStart - hours * 3_600_000 + 60_000, started);
  const mayHave = truth(started - hours * 3_600_000, Date.now());
  if (notOk.length) failures.push(`content types not ok: ${notOk.map(([ct, o]) => `${ct} ${o.status}: ${o.reason ?? ''}`).join('; ')}`);
  if (stored < mustHave || stored > mayHave) failures.push(`stored ${stored} records; the ground truth says between ${mustHave} and ${mayHave}`);

  const ceiling = await measure([join(ROOT, 'bench', 'audit-ceiling.ts'), join(env.VIGIL_DATA_DIR, 'vigil.db'), join(work, 'ceiling.db')], env);
  const c = JSON.parse(ceiling.stdout) as { events: number; segments: number; seconds: number };
  const ingestSeconds = out.durationMs / 1000;
  const rate = stored / ingestSeconds;
  const ceilingRate = c.events / c.seconds;
  console.log(JSON.stringify({ stored, duplicates, mustHave, mayHave, run: { ...run, stdout: undefined, stderr: undefined }, ingestSeconds, ceiling: c }));
  const table = [
    '| records stored | duplicates dropped | `vigil audit` process s | ingestion s (product-reported) | records/s (goal ≥ 80,000) | store insert ceiling, same rows, records/s | share of ceiling (goal ≥ ⅔) | CPU s | peak RSS MiB (goal ≤ 286 MiB = 300 MB) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${n(stored)} | ${n(duplicates)} | ${run.wallSeconds.toFixed(1)} | ${ingestSeconds.toFixed(1)} | ${n(rate)} | ${n(ceilingRate)} | ${((100 * rate) / ceilingRate).toFixed(0)} % | ${run.cpuSeconds.toFixed(1)} | ${run.peakRssMiB.toFixed(0)} |`,
  ].join('\n');
  console.log(`\n${table}`);
  section = `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:audit -- ${target}\`, Node ${process.version}, ${process.platform}/${process.arch}, 1-minute load average ${loadAtStart.toFixed(1)} at the start; Vigil run as shipped (\`${['node', ...PRODUCT_NODE_FLAGS, 'bin/vigil.mjs'].join(' ')} audit <integration> --json\`, detections included: ${n(out.detections.events)} events evaluated, ${out.detections.alertsRaised} alerts), times and peak RSS by /usr/bin/time; ${kept.blobs.toLocaleString('en')} content blobs of at most ${process.env.BENCH_BLOB_SIZE ?? 500} records, 2 % duplicates.\n\n${table}`;
} finally {
  await emulator.close();
}
if (failures.length) {
  console.error(`\nbench:audit FAILED — bench/README.md left as it was:\n${failures.join('\n')}`);
  process.exit(1);
}
writeBenchSection('audit', section);
