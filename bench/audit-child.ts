/**
 * Child of bench/audit.ts: onboards the tenant and ingests its audit feed in its own process, so the peak memory is
 * the collector's alone. Prints one JSON line.
 */
import { peakRssMiB } from './peak.ts';
import { addCustomerAppIntegration } from '../src/onboarding/integrations.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { ingestAudit } from '../src/sync/audit.ts';

const [dataDir, tenantId, clientId, nowIso, hours] = process.argv.slice(2) as [string, string, string, string, string];
const rt = await createRuntime({ dataDir, env: process.env });
const { integration } = await addCustomerAppIntegration(rt, { tenantId, clientId, clientSecret: process.env.BENCH_SECRET! });
const started = process.hrtime.bigint();
const r = await ingestAudit(rt, integration.id, {
  now: new Date(nowIso),
  initialLookbackHours: Number(hours),
  concurrency: rt.config.auditConcurrency,
  powerBi: false,
});
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const stored = Object.values(r.contentTypes).reduce((n, o) => n + o.stored, 0);
const duplicates = Object.values(r.contentTypes).reduce((n, o) => n + o.duplicates, 0);
const requests = rt.http.statsFor('managementActivity').requests;
await rt.close();
process.stdout.write(JSON.stringify({ stored, duplicates, seconds, requests, maxRssMiB: peakRssMiB() }) + '\n');
