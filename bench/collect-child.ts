/**
 * Child of bench/collect.ts: onboards and collects one tenant in its own process so its peak memory is the
 * collector's alone (the emulator lives in the parent), then collects it again unchanged (incremental rounds) and
 * counts that run's requests. Prints one JSON line.
 */
import { addCustomerAppIntegration } from '../src/onboarding/integrations.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { collectIntegration } from '../src/sync/run.ts';
import { peakRssMiB } from './peak.ts';

const [dataDir, tenantId, clientId] = process.argv.slice(2) as [string, string, string];
const rt = await createRuntime({ dataDir, env: process.env });
const { integration } = await addCustomerAppIntegration(rt, { tenantId, clientId, clientSecret: process.env.BENCH_SECRET! });
const started = process.hrtime.bigint();
const run = await collectIntegration(rt, integration.id);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const records = Object.values(run.streams).reduce((n, s) => n + s.records, 0);
const requests = () => [...rt.http.stats.values()].reduce((n, s) => n + s.requests, 0);
const firstRequests = requests();
// A second collection with nothing changed upstream: users, groups and memberships come as delta rounds.
const again = await collectIntegration(rt, integration.id);
const secondRequests = requests() - firstRequests;
const secondByStream = Object.fromEntries(Object.entries(again.streams).map(([k, v]) => [k, v.records]));
await rt.close();
process.stdout.write(JSON.stringify({ status: run.status, records, seconds, maxRssMiB: peakRssMiB(), firstRequests, secondRequests, secondByStream }) + '\n');
