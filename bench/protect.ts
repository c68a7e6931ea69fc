/**
 * Runtime-protection benchmark (issue 19): `analyze-tool-execution` as Copilot Studio calls it, against `vigil serve` as
 * shipped (bin/vigil.mjs over dist/, its own process under /usr/bin/time), and the detectors' quality on the labelled
 * corpus (test/fixtures/protection/, sources in its README).
 *
 * 1. Latency and throughput: the emulator registers the tenant's threat-detection app (Application ID URI = the
 *    endpoint's base URL, federated credential as Microsoft documents it) and mints its tokens; Vigil's endpoint is
 *    enabled through the CLI; the environment's set-up calls `/validate` as the admin center does. BENCH_PROTECT_CALLERS
 *    (default 50) callers post the corpus's requests round-robin over keep-alive HTTP with the documented headers,
 *    after a 2 s warm-up, in two phases of BENCH_PROTECT_SECONDS (default 20): paced at BENCH_PROTECT_RATE (default
 *    1,000) calls a second, each latency counted from the call's scheduled time (so queueing behind a slow answer
 *    counts: no coordinated omission) — the issue's goal, p99 ≤ 50 ms at ≥ 1,000 a second; then saturated (each caller
 *    sends again on its answer) for the throughput. Every answer must be a 200 with a boolean `blockAction`, every call
 *    stored, and no call may take Vigil longer than the internal budget (the time it recorded per step).
 * 2. Quality: every corpus request decided by the shipped engine (dist/) in block mode with the corpus's snapshot and
 *    allow-lists: precision and recall per detector, and false blocks among the benign requests.
 *
 * A run with a failed answer, or a decision past its budget, fails and writes nothing; otherwise the table replaces the
 * `bench:protect` section of bench/README.md.
 *
 * Run: npm run bench:protect
 */
import { loadavg } from 'node:os';
import { Agent, request } from 'undici';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { loadProtectionCorpus, loadProtectionSnapshot } from '../test/support/protection-corpus.ts';
import type * as EngineTypes from '../src/protection/engine.ts';
import type * as PolicyTypes from '../src/protection/policy.ts';
import type * as RequestTypes from '../src/protection/request.ts';
import { writeBenchSection } from './readme.ts';
import { addIntegration, assertShippedBenchReady, benchSetting, ROOT, startVigil, vigil } from './shipped.ts';
import { freePort } from '../test/support/process.ts';

assertShippedBenchReady();
const callers = Number(process.env.BENCH_PROTECT_CALLERS ?? 50);
const seconds = Number(process.env.BENCH_PROTECT_SECONDS ?? 20);
/** The paced phase's offered load, calls a second (issue 19's goal: p99 ≤ 50 ms at ≥ 1,000 a second). */
const rate = Number(process.env.BENCH_PROTECT_RATE ?? 1000);
const loadAtStart = loadavg()[0]!;
const corpus = loadProtectionCorpus();
const failures: string[] = [];
const n = (x: number, digits = 0) => x.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The p-th percentile (0–100) of sorted values, nearest rank. */
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

// --- 2. quality, on the shipped engine --------------------------------------------------------------------------
type EngineModule = typeof EngineTypes;
type RequestModule = typeof RequestTypes;
type PolicyModule = typeof PolicyTypes;
const dist = (p: string) => new URL(`../dist/src/protection/${p}`, import.meta.url).href;
const { decide } = (await import(dist('engine.js'))) as EngineModule;
const { parseToolExecution } = (await import(dist('request.js'))) as RequestModule;
const { DEFAULT_POLICY } = (await import(dist('policy.js'))) as PolicyModule;
const { snapshot, allow } = loadProtectionSnapshot();
const policy = { ...DEFAULT_POLICY, mode: 'block' as const, allow };
const detectorIds = Object.keys(policy.detectors) as (keyof typeof policy.detectors)[];
const counts = new Map(detectorIds.map((d) => [d, { tp: 0, fp: 0, fn: 0, attacks: 0 }]));
let benign = 0;
let falseBlocks = 0;
let attacks = 0;
let attacksBlocked = 0;
const engineMs: number[] = [];
for (const c of corpus) {
  const d = decide(parseToolExecution(c.request), { snapshot, policy });
  engineMs.push(d.elapsedMs);
  const fired = new Set(d.verdicts.filter((v) => v.detected && v.confidence >= policy.detectors[v.detector].threshold).map((v) => v.detector));
  for (const id of detectorIds) {
    const k = counts.get(id)!;
    const expected = (c.detectors as string[]).includes(id);
    if (expected) k.attacks++;
    if (expected && fired.has(id)) k.tp++;
    else if (fired.has(id)) k.fp++;
    else if (expected) k.fn++;
  }
  if (c.label === 'benign') {
    benign++;
    if (d.blockAction) falseBlocks++;
  } else {
    attacks++;
    if (d.blockAction) attacksBlocked++;
  }
}
engineMs.sort((a, b) => a - b);
const ratio = (a: number, b: number) => (b === 0 ? '–' : (a / b).toFixed(2));
const qualityRows = detectorIds.map((id) => {
  const k = counts.get(id)!;
  const s = policy.detectors[id];
  return `| ${id} | ${s.action} at ${s.threshold} | ${k.attacks} | ${k.tp} | ${k.fp} | ${ratio(k.tp, k.tp + k.fp)} | ${ratio(k.tp, k.tp + k.fn)} |`;
});
console.log(qualityRows.join('\n'));
console.log(`benign ${benign}, blocked ${falseBlocks}; attacks ${attacks}, blocked ${attacksBlocked}`);

// --- 1. latency and throughput, against `vigil serve` as shipped -----------------------------------------------
const tenant = generateTenant({ seed: 'bench-protect', sizes: { users: 200, guests: 10, groups: 10, environments: 2, agents: 10 } });
const emulator = await startEmulator({ tenants: [tenant] });
let latencySection = '';
try {
  const { env } = benchSetting(emulator, tenant, 'bench-protect');
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const serveEnv = { ...env, VIGIL_PORT: String(port), VIGIL_HOST: '127.0.0.1', VIGIL_API_URL: apiUrl };
  const integrationId = await addIntegration(serveEnv, tenant.id, tenant.connectorAppId!);
  const first = JSON.parse((await vigil(serveEnv, 'protection', 'enable', integrationId, '--json')).stdout) as { baseUrl: string };
  const { appId } = emulator.control.registerThreatDetectionApp(tenant.id, { baseUrl: first.baseUrl });
  await vigil(serveEnv, 'protection', 'enable', integrationId, '--app-id', appId, '--json');
  const serve = startVigil(serveEnv, 'serve');
  try {
    await serve.waitFor(/listening|http:\/\/127\.0\.0\.1/i, 60_000);
    const environmentId = tenant.environments[0]!.name;
    const setUp = await emulator.control.setThreatDetection(tenant.id, environmentId, { appId, baseUrl: first.baseUrl, errorBehavior: 'allow' });
    if (!setUp.saved) failures.push(`the admin center's set-up was refused by /validate: ${JSON.stringify(setUp.lastValidation)}`);
    const { access_token: token } = await emulator.control.mintToken({ tenantId: tenant.id, resource: first.baseUrl, kind: 'app', appId });
    const url = `${first.baseUrl}/analyze-tool-execution?api-version=2025-05-01`;
    const bodies = corpus.map((c) => JSON.stringify(c.request));
    const dispatcher = new Agent({ connections: callers, pipelining: 1, keepAliveTimeout: 30_000 });
    let bad = 0;
    let badExample = '';
    let next = 0;
    const call = async (): Promise<{ ok: boolean; status: number; text: string }> => {
      const r = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-ms-correlation-id': crypto.randomUUID() },
        body: bodies[next++ % bodies.length]!,
      });
      const text = await r.body.text();
      const ok = r.statusCode === 200 && typeof (JSON.parse(text) as { blockAction?: unknown }).blockAction === 'boolean';
      return { ok, status: r.statusCode, text };
    };
    const check = (o: { ok: boolean; status: number; text: string }) => {
      if (o.ok) return;
      bad++;
      badExample ||= `${o.status} ${o.text.slice(0, 300)}`;
    };
    /**
     * Paced: the callers share one schedule of `rate` calls a second; each call's latency counts from the time it was
     * scheduled (not from when a free caller sent it), so a slow answer that delays the next calls shows in their
     * latencies (no coordinated omission).
     */
    const paced = async (rate: number, durationMs: number, latencies: number[]) => {
      const start = performance.now();
      const total = Math.floor((rate * durationMs) / 1000);
      let k = 0;
      const caller = async () => {
        for (;;) {
          const i = k++;
          if (i >= total) return;
          const due = start + (i * 1000) / rate;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const o = await call();
          latencies.push(performance.now() - due);
          check(o);
        }
      };
      await Promise.all(Array.from({ length: callers }, caller));
      return (performance.now() - start) / 1000;
    };
    /** Saturated: every caller sends its next call as soon as the last one is answered. */
    const saturated = async (durationMs: number, latencies: number[]) => {
      const start = performance.now();
      const caller = async () => {
        while (performance.now() - start < durationMs) {
          const t = performance.now();
          const o = await call();
          latencies.push(performance.now() - t);
          check(o);
        }
      };
      await Promise.all(Array.from({ length: callers }, caller));
      return (performance.now() - start) / 1000;
    };
    await saturated(2000, []);
    const pacedLatencies: number[] = [];
    const pacedSeconds = await paced(rate, seconds * 1000, pacedLatencies);
    const latencies: number[] = [];
    const elapsed = await saturated(seconds * 1000, latencies);
    await dispatcher.close();
    pacedLatencies.sort((a, b) => a - b);
    latencies.sort((a, b) => a - b);
    const sent = pacedLatencies.length + latencies.length;
    if (bad) failures.push(`${bad} of ${sent} answers were not a 200 with a boolean blockAction, e.g. ${badExample}`);
    const steps = JSON.parse((await vigil(serveEnv, 'protection', 'events', integrationId, '--limit', '100000', '--json')).stdout) as {
      latencyMs: number;
      engineMs: number;
      timedOut: boolean;
    }[];
    const measured = await serve.stop();
    // Vigil's own handling time of each call (token, parse, decide, store), as it recorded it: none may pass the budget.
    const pastBudget = steps.filter((s) => s.latencyMs > policy.deadlineMs).length;
    const timedOut = steps.filter((s) => s.timedOut).length;
    const maxHandling = Math.max(0, ...steps.map((s) => s.latencyMs));
    if (pastBudget) failures.push(`${pastBudget} answers took Vigil longer than the ${policy.deadlineMs} ms budget`);
    if (steps.length < sent) failures.push(`${sent} calls answered, ${steps.length} steps stored`);
    const rps = latencies.length / elapsed;
    const pacedRps = pacedLatencies.length / pacedSeconds;
    console.log({
      requests: latencies.length,
      rps,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1),
      maxHandling,
      timedOut,
      measured,
    });
    const row = (what: string, l: number[], secs: number, r: number) =>
      `| ${what} | ${n(l.length)} | ${secs.toFixed(1)} | ${n(r)} | ${percentile(l, 50).toFixed(1)} | ${percentile(l, 99).toFixed(1)} | ${l.at(-1)!.toFixed(1)} |`;
    latencySection = [
      `| load (${callers} callers) | calls | seconds | calls/s | p50 ms | p99 ms | max ms |`,
      '|---|---:|---:|---:|---:|---:|---:|',
      row(`paced at ${n(rate)} calls/s (goal: p99 ≤ 50 ms at ≥ 1,000/s), latency from each call's scheduled time`, pacedLatencies, pacedSeconds, pacedRps),
      row('saturated: each caller sends again on its answer', latencies, elapsed, rps),
      '',
      `Both phases: answers past the ${policy.deadlineMs} ms internal budget (goal 0): ${pastBudget}; slowest call in Vigil before its write: ${maxHandling.toFixed(1)} ms; budget defaults answered: ${timedOut}; ${n(steps.length)} steps stored for ${n(sent)} calls answered (and the warm-up's); \`vigil serve\` CPU ${measured.cpuSeconds.toFixed(1)} s, peak RSS ${measured.peakRssMiB.toFixed(0)} MiB.`,
    ].join('\n');
  } catch (e) {
    await serve.stop().catch(() => undefined);
    throw e;
  }
} finally {
  await emulator.close();
}

if (failures.length) {
  console.error(`bench:protect failed; bench/README.md not written:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
const blockModeIds = detectorIds.filter((id) => policy.detectors[id].action === 'block');
writeBenchSection(
  'protect',
  [
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:protect\`, Node ${process.version}, ${process.platform}/${process.arch}, 1-minute load average ${loadAtStart.toFixed(1)} at the start; \`vigil serve\` as shipped on SQLite, the load generator and the emulator in the benchmark's process on the same 2 vCPUs.`,
    '',
    `\`POST {base}/analyze-tool-execution\` over keep-alive HTTP, the ${n(corpus.length)} corpus requests round-robin, tenant-signed tokens, after a 2 s warm-up, ${seconds} s per phase:`,
    '',
    latencySection,
    '',
    `Detection quality on the labelled corpus (test/fixtures/protection/, ${n(attacks)} attacks and ${n(benign)} benign requests), the shipped engine in block mode with the default detector settings; a detector counts when it detects at or above its threshold:`,
    '',
    '| detector | default action | attacks labelled | true positives | false positives | precision | recall |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...qualityRows,
    '',
    `Block-mode detectors (${blockModeIds.join(', ')}): ${n(falseBlocks)} of ${n(benign)} benign requests blocked (${((100 * falseBlocks) / benign).toFixed(1)} %, goal ≤ 1 %); ${n(attacksBlocked)} of ${n(attacks)} attacks blocked. Engine time per request: p50 ${percentile(engineMs, 50).toFixed(2)} ms, p99 ${percentile(engineMs, 99).toFixed(2)} ms, max ${engineMs.at(-1)!.toFixed(2)} ms.`,
  ].join('\n'),
);
console.log(`bench/README.md: bench:protect section written (${ROOT}).`);
