/**
 * Child of bench/collect.ts: onboards and collects one tenant in its own process so its peak memory is the
 * collector's alone (the emulator lives in the parent), evaluates every check over the collected tenant (timed),
 * then collects it again unchanged and counts that run's requests. Prints one JSON line.
 */
import { evaluateIntegration } from '../src/checks/evaluate.ts';
import { addCustomerAppIntegration } from '../src/onboarding/integrations.ts';
import { getIntegration } from '../src/integration/index.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { collectIntegration } from '../src/sync/run.ts';
import { peakRssMiB } from './peak.ts';

const [dataDir, tenantId, clientId] = process.argv.slice(2) as [string, string, string];
const rt = await createRuntime({ dataDir, env: process.env });
const { integration } = await addCustomerAppIntegration(rt, { tenantId, clientId, clientSecret: process.env.BENCH_SECRET! });
const requests = () => [...rt.http.stats.values()].reduce((n, s) => n + s.requests, 0);
const byApi = () => Object.fromEntries([...rt.http.stats.entries()].map(([api, s]) => [api, s.requests]));
const started = process.hrtime.bigint();
const run = await collectIntegration(rt, integration.id);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const collectRssMiB = peakRssMiB();
const records = Object.values(run.streams).reduce((n, s) => n + s.records, 0);
const firstRequests = requests();
const firstByApi = byApi();

const evalStarted = process.hrtime.bigint();
const evaluation = await evaluateIntegration(rt.db, await getIntegration(rt.db, integration.id));
const evaluationSeconds = Number(process.hrtime.bigint() - evalStarted) / 1e9;
const evaluateRssMiB = peakRssMiB();

// A second collection with nothing changed upstream: delta rounds, incremental reads, fresh costly streams reused.
const again = await collectIntegration(rt, integration.id);
const secondRequests = requests() - firstRequests;
const secondByApi = Object.fromEntries(
  Object.entries(byApi())
    .map(([api, n]) => [api, n - (firstByApi[api] ?? 0)])
    .filter(([, n]) => (n as number) > 0),
);
const reused = Object.entries(again.streams)
  .filter(([, s]) => s.reusedFrom)
  .map(([k]) => k);
await rt.close();
process.stdout.write(
  JSON.stringify({
    status: run.status,
    errors: run.errors.slice(0, 5),
    records,
    seconds,
    collectRssMiB,
    evaluateRssMiB,
    maxRssMiB: peakRssMiB(),
    firstRequests,
    firstByApi,
    secondRequests,
    secondByApi,
    reused,
    evaluationSeconds,
    results: evaluation.results,
    byStatus: evaluation.byStatus,
  }) + '\n',
);
