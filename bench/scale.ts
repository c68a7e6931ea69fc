/**
 * Scale-out benchmark (issue 18): what `vigil worker` processes buy. Vigil as shipped — `bin/vigil.mjs` over the
 * compiled dist/ with the product's Node flags, each command its own process under /usr/bin/time — collects M generated
 * tenants served by the emulator over real HTTPS with Microsoft's documented limits enforced (emulator/throttling.ts),
 * three ways in one run:
 *
 * 1. baseline: the tenants collected one after another by `vigil collect <integration> --json` on SQLite (a fresh data
 *    directory), one process per tenant, as a user with a shell loop does;
 * 2. for each worker count W (default 1 and 2): `vigil serve` and W `vigil worker` processes (VIGIL_WORKER_CONCURRENCY
 *    2 each) on PostgreSQL, in a fresh schema (VIGIL_DATABASE_SCHEMA, dropped at the end). The collections are queued
 *    as a user does through the API (`POST /api/v1/integrations/{id}/runs` with an admin API key made by
 *    `vigil api-keys create`) and followed on `GET /api/v1/integrations/{id}/runs/live` (server-sent events) until each
 *    one's `finished` event (collection and check evaluation done); the outcome of each is read from
 *    `GET /api/v1/runs/{id}`.
 *
 * Set-up (untimed, the same for every way): `vigil integrations add` and `vigil environments grant-access` per tenant,
 * as in bench:collect. Measured: wall time from the first collection queued (or started) to the last one done; CPU and
 * peak RSS of every Vigil process by /usr/bin/time (serve and workers over their whole life, start and stop included);
 * requests counted by the emulator (identity excluded) and the requests it answered 429. The throttle floor is the
 * least time one tenant's admitted requests need at its tightest limit (Teams' 30 GET/s per app and tenant, which
 * Vigil's budgets pace at), times the number of tenants each collection slot has to take in turn.
 *
 * Set for the run: the scheduler ticks hourly (VIGIL_SCHEDULER_TICK_SECONDS=3600), so it does not queue new
 * integrations besides the benchmark's own requests; jobs do not ingest the audit feed (VIGIL_AUDIT_IN_JOBS=false),
 * as `vigil collect` does not (bench:audit measures that).
 *
 * Any collection that does not end `succeeded` with no errored slice, more than one run of an integration, or a
 * process that fails, fails the benchmark: nothing is written and the process exits 1. Every process started is
 * stopped, also on failure. Otherwise the table replaces the `bench:scale` section of bench/README.md.
 *
 * Run: npm run bench:scale [-- tenants users-per-tenant workers1,workers2,…]   (default 8 450 1,2)
 * Needs /usr/bin/time, `npm run build:js`, and PostgreSQL: VIGIL_BENCH_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { PRODUCT_NODE_FLAGS } from './peak.ts';
import { writeBenchSection } from './readme.ts';
import { addIntegration, assertShippedBenchReady, benchSetting, startVigil, throttleFloor, vigil, type Measured, type Running } from './shipped.ts';

assertShippedBenchReady();
const databaseUrl = process.env.VIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const tenantCount = Number(process.argv[2] ?? 8);
const usersPerTenant = Number(process.argv[3] ?? 450);
const workerCounts = (process.argv[4] ?? '1,2').split(',').map(Number);
/** Collections one `vigil worker` runs at once (VIGIL_WORKER_CONCURRENCY, its default). */
const WORKER_CONCURRENCY = 2;
/** A way that has not finished after this long fails (BENCH_SCALE_TIMEOUT_SECONDS, default 1,800). */
const timeoutSeconds = Number(process.env.BENCH_SCALE_TIMEOUT_SECONDS ?? 1800);
const loadAtStart = loadavg()[0]!;
const n = (x: number) => x.toLocaleString('en');
const s = (x: number) => x.toFixed(1);

/** A run as `GET /api/v1/runs/{id}` and `vigil collect --json` show it (the fields read here). */
interface RunView {
  id: string;
  status: string;
  errors: unknown[] | null;
  progress?: { records: number; errored: number };
}

/** What one way of collecting every tenant measured. */
interface Way {
  label: string;
  atOnce: number;
  wallSeconds: number;
  serve?: Measured;
  collectors: Measured[];
  requests: number;
  throttled: number;
  floor: { seconds: number; limit: string };
  /** The same floor without the limit's initial burst: the admitted requests of its busiest bucket at its refill rate. */
  pacedSeconds: number;
  records: number;
}

const tenants = Array.from({ length: tenantCount }, (_, i) =>
  generateTenant({
    seed: `scale-bench-${i}`,
    sizes: {
      users: usersPerTenant,
      guests: Math.round(usersPerTenant / 20),
      groups: Math.max(1, Math.round(usersPerTenant / 50)),
      environments: 4,
      agents: Math.max(1, Math.round(usersPerTenant / 25)),
    },
  }),
);
const emulator = await startEmulator({ tenants, logLimit: 2_000_000 });
// As in bench:collect: Power BI serves the generated apps (which hold Tenant.Read.All), so a collection can be complete.
for (const t of tenants) emulator.control.setPowerBiSettings(t.id, { rejectServicePrincipalsWithPowerBiRoles: false });
const { work, env } = benchSetting(emulator, tenants[0]!, 'bench-scale');
const failures: string[] = [];
const ways: Way[] = [];

/** Each tenant's connector app's id and secret. */
function credentialsOf(t: (typeof tenants)[number]): { appId: string; secret: string } {
  const app = t.apps.find((a) => a.appId === t.connectorAppId);
  if (!app) throw new Error(`tenant ${t.id} has no connector app`);
  return { appId: app.appId, secret: app.secrets[0]!.value };
}

/**
 * Onboards every tenant through the CLI (`integrations add`, `environments grant-access`), one after another (two
 * first commands at once on a fresh SQLite data directory race its migrations: one fails with "database is locked" or
 * "migration 0001_initial failed: table integrations already exists"); ids in tenant order.
 */
async function onboard(wenv: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (const t of tenants) {
    const { appId, secret } = credentialsOf(t);
    const id = await addIntegration({ ...wenv, BENCH_SECRET: secret }, t.id, appId);
    await vigil(wenv, 'environments', 'grant-access', '--integration', id, '--json');
    ids.push(id);
  }
  return ids;
}

/** Limits enforced with full buckets, request log and counters emptied: what follows is the measured part. */
function resetEmulator(): void {
  emulator.control.setThrottling({ enabled: true });
  emulator.control.resetThrottlingCounters();
  emulator.control.resetLog();
}

/** The emulator's witness of the measured part: requests (identity excluded), requests answered 429, the throttle floor. */
function witnessed(): Pick<Way, 'requests' | 'throttled' | 'floor' | 'pacedSeconds'> {
  const state = emulator.control.throttling();
  const floor = throttleFloor(state);
  return {
    requests: emulator.control.requests().filter((e) => e.service !== 'identity').length,
    throttled: state.totals.throttled,
    floor,
    pacedSeconds: floor.pacedSeconds,
  };
}

/** A run that is not complete, described; undefined when it ended `succeeded` with no errored slice. */
function incomplete(where: string, run: RunView): string | undefined {
  if (run.status === 'succeeded' && (run.progress?.errored ?? 0) === 0) return undefined;
  return `${where}: run ${run.id} ended ${run.status} with ${run.progress?.errored ?? '?'} errored slices: ${JSON.stringify(run.errors?.slice(0, 2))}`;
}

/** The baseline: every tenant collected by `vigil collect --json` on SQLite, one process after another. */
async function sequentialOnSqlite(): Promise<void> {
  const wenv = { ...env, VIGIL_DATA_DIR: join(work, 'sqlite') };
  const ids = await onboard(wenv);
  resetEmulator();
  const started = Date.now();
  const collectors: Measured[] = [];
  let records = 0;
  for (const [i, id] of ids.entries()) {
    const m = await vigil(wenv, 'collect', id, '--json');
    collectors.push(m);
    // `vigil collect --json` prints the run as GET /api/v1/runs/{id} answers it, and the checks' evaluation.
    const { run, evaluation } = JSON.parse(m.stdout) as { run: RunView & { progress: { records: number; errored: number } }; evaluation: unknown };
    records += run.progress.records;
    const bad = incomplete(`vigil collect, tenant ${i}`, run);
    if (bad) failures.push(bad);
    if (!evaluation) failures.push(`vigil collect, tenant ${i}: run ${run.id}'s checks were not evaluated`);
  }
  const wallSeconds = (Date.now() - started) / 1000;
  ways.push({ label: `one \`vigil collect\` after another, SQLite`, atOnce: 1, wallSeconds, collectors, records, ...witnessed() });
}

/** The API of a `vigil serve` at `base` with an API key. */
function api(base: string, key: string) {
  const headers = { authorization: `Bearer ${key}` };
  return {
    async json<T>(method: string, path: string, expect: number): Promise<T> {
      const res = await fetch(`${base}/api/v1${path}`, { method, headers });
      const body = await res.text();
      if (res.status !== expect) throw new Error(`${method} ${path} answered ${res.status} (expected ${expect}): ${body.slice(0, 500)}`);
      return JSON.parse(body) as T;
    },
    /**
     * Follows `GET /integrations/{id}/runs/live` until its `finished` event, reconnecting after `idle` (no run started
     * within the server's idle time: the job is still queued). `connected` settles once the first stream answered.
     */
    follow(id: string, signal: AbortSignal): { connected: Promise<void>; finished: Promise<RunView & { evaluated: boolean }> } {
      let connect!: () => void;
      const connected = new Promise<void>((resolve) => (connect = resolve));
      const finished = (async () => {
        for (;;) {
          const res = await fetch(`${base}/api/v1/integrations/${id}/runs/live`, { headers, signal });
          if (res.status !== 200 || !res.body) throw new Error(`the live stream of ${id} answered ${res.status}`);
          connect();
          let buffer = '';
          let idle = false;
          for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
            buffer += chunk;
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const event = /^event: (.*)$/m.exec(block)?.[1];
              const data = /^data: (.*)$/m.exec(block)?.[1];
              if (event === 'finished') return JSON.parse(data!) as RunView & { evaluated: boolean };
              if (event === 'error') throw new Error(`the live stream of ${id} failed: ${data}`);
              if (event === 'idle') {
                // No run started within the idle time; a run that started and ended between two streams would be lost.
                const { lastRun } = JSON.parse(data!) as { lastRun: RunView | null };
                if (lastRun) throw new Error(`integration ${id} has a finished run ${lastRun.id} the live stream did not see start`);
                idle = true;
              }
            }
          }
          if (!idle) throw new Error(`the live stream of ${id} ended without a finished event`);
        }
      })();
      // A stream that fails before its first answer fails `connected` too; one abandoned on failure rejects unobserved.
      finished.catch(() => undefined);
      return { connected: Promise.race([connected, finished.then(() => undefined)]), finished };
    },
  };
}

/** `vigil serve` and `workers` × `vigil worker` on PostgreSQL in a fresh schema; collections queued and followed through the API. */
async function workersOnPostgres(workers: number): Promise<void> {
  const schema = `vigil_bench_scale_${randomBytes(4).toString('hex')}`;
  const wenv = {
    ...env,
    VIGIL_DATA_DIR: join(work, `postgres-${workers}`),
    DATABASE_URL: databaseUrl,
    VIGIL_DATABASE_SCHEMA: schema,
    VIGIL_MASTER_KEY: randomBytes(32).toString('base64'),
    VIGIL_HOST: '127.0.0.1',
    VIGIL_PORT: '0',
    VIGIL_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    VIGIL_SCHEDULER_TICK_SECONDS: '3600',
    VIGIL_AUDIT_IN_JOBS: 'false',
  };
  const procs: Running[] = [];
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let way: Omit<Way, 'serve' | 'collectors'> | undefined;
  try {
    const serve = startVigil(wenv, 'serve');
    procs.push(serve);
    const base = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1]!;
    const { key } = JSON.parse((await vigil(wenv, 'api-keys', 'create', '--name', 'bench-scale', '--role', 'admin', '--json')).stdout) as { key: string };
    const ids = await onboard(wenv);
    for (let i = 0; i < workers; i++) procs.push(startVigil(wenv, 'worker'));
    await Promise.all(procs.slice(1).map((w) => w.waitFor(/ready/)));
    const client = api(base, key);
    resetEmulator();
    const follows = ids.map((id) => client.follow(id, abort.signal));
    await Promise.all(follows.map((f) => f.connected));
    const started = Date.now();
    for (const id of ids) {
      const queued = await client.json<{ queued: boolean }>('POST', `/integrations/${id}/runs`, 202);
      if (!queued.queued) throw new Error(`POST /integrations/${id}/runs answered queued: false (a collection was already queued)`);
    }
    const failed = new Promise<never>((_, reject) => {
      for (const p of procs)
        void p.exited.then((code) => reject(new Error(`a Vigil process exited (${code}) during the run:\n${p.output().stderr.slice(-3000)}`)));
      timer = setTimeout(() => reject(new Error(`the collections were not all done after ${timeoutSeconds} s`)), timeoutSeconds * 1000);
    });
    const done = await Promise.race([Promise.all(follows.map((f) => f.finished)), failed]);
    const wallSeconds = (Date.now() - started) / 1000;
    const seen = witnessed();
    let records = 0;
    for (const [i, id] of ids.entries()) {
      const run = await client.json<RunView & { progress: { records: number; errored: number } }>('GET', `/runs/${done[i]!.id}`, 200);
      records += run.progress.records;
      const bad = incomplete(`${workers} worker(s), tenant ${i}`, run);
      if (bad) failures.push(bad);
      if (!done[i]!.evaluated) failures.push(`${workers} worker(s), tenant ${i}: run ${run.id}'s checks were not evaluated`);
      const { items } = await client.json<{ items: unknown[] }>('GET', `/integrations/${id}/runs`, 200);
      if (items.length !== 1) failures.push(`${workers} worker(s), tenant ${i}: ${items.length} runs, expected the one queued`);
    }
    way = {
      label: `\`vigil serve\` + ${workers} \`vigil worker\`, PostgreSQL`,
      atOnce: workers * WORKER_CONCURRENCY,
      wallSeconds,
      records,
      ...seen,
    };
  } catch (e) {
    failures.push(`${workers} worker(s): ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
    abort.abort();
    // Workers first (they finish their jobs' checkpoints), then serve; each is measured over its whole life.
    const stopped = await Promise.allSettled([...procs.slice(1), procs[0]].filter((p) => p !== undefined).map((p) => p.stop()));
    for (const r of stopped) if (r.status === 'rejected') failures.push(`${workers} worker(s): ${(r.reason as Error).message}`);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    for (const name of [schema, `${schema}_pgboss`]) await client.query(`drop schema if exists "${name}" cascade`);
    await client.end();
    const measured = stopped.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (way && measured.length === procs.length) ways.push({ ...way, collectors: measured.slice(0, -1), serve: measured.at(-1) });
  }
}

console.log(
  `${tenantCount} tenants of ${usersPerTenant} users (+${Math.round(usersPerTenant / 20)} guests, ${Math.max(1, Math.round(usersPerTenant / 50))} groups, 4 environments, ${Math.max(1, Math.round(usersPerTenant / 25))} agents), documented limits enforced`,
);
try {
  await sequentialOnSqlite();
  console.log(JSON.stringify({ ...ways.at(-1), collectors: undefined }));
  for (const w of workerCounts) {
    await workersOnPostgres(w);
    console.log(
      JSON.stringify({
        workers: w,
        ...ways.at(-1),
        collectors: ways.at(-1)?.collectors.map((m) => ({ ...m, stdout: undefined, stderr: undefined })),
        serve: undefined,
      }),
    );
  }
} catch (e) {
  failures.push((e as Error).stack ?? String(e));
} finally {
  await emulator.close();
}

const baseline = ways[0];
const rows = ways.map((w) => {
  const cpu = w.collectors.reduce((k, m) => k + m.cpuSeconds, 0);
  const rss = w.serve ? w.collectors.map((m) => m.peakRssMiB.toFixed(0)).join(', ') : Math.max(...w.collectors.map((m) => m.peakRssMiB)).toFixed(0);
  const turns = Math.ceil(tenantCount / w.atOnce);
  return `| ${w.label} | ${w.atOnce} | ${s(w.wallSeconds)} | ${s((tenantCount / w.wallSeconds) * 60)} | ${baseline ? `${(baseline.wallSeconds / w.wallSeconds).toFixed(1)}×` : '–'} | ${s(turns * w.floor.seconds)} / ${s(turns * w.pacedSeconds)} | ${w.serve ? `${s(w.serve.cpuSeconds)} / ${w.serve.peakRssMiB.toFixed(0)}` : '–'} | ${s(cpu)} | ${rss} | ${n(w.records)} | ${n(w.requests)} | ${n(w.throttled)} |`;
});
const table = [
  "| collected by | collections at once | s to all done | tenants / minute | faster than one after another | throttle floor s at that concurrency: with the limit's initial burst / paced from the first request | `vigil serve` CPU s / peak RSS MiB | collecting processes CPU s (total) | collecting processes peak RSS MiB | records | HTTP requests (identity excluded; a $batch counts once) | answered 429 (inner $batch requests included) |",
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows,
].join('\n');
console.log(`\n${table}`);
if (failures.length) {
  console.error(`\nbench:scale FAILED — a partial run is not a benchmark; bench/README.md left as it was:\n${failures.join('\n')}`);
  process.exit(1);
}
const tightest = baseline!.floor;
writeBenchSection(
  'scale',
  `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:scale -- ${tenantCount} ${usersPerTenant} ${workerCounts.join(',')}\`, Node ${process.version}, ${process.platform}/${process.arch}, 1-minute load average ${loadAtStart.toFixed(1)} at the start; ${tenantCount} tenants of ${n(usersPerTenant)} users (+5 % guests, a group per 50 users, 4 environments, an agent per 25 users), the emulator enforcing Microsoft's documented limits. Vigil run as shipped (\`${['node', ...PRODUCT_NODE_FLAGS, 'bin/vigil.mjs'].join(' ')}\`), each process timed by /usr/bin/time over its whole life (serve and workers from start to stop); requests (identity excluded) and 429 answers counted by the emulator. One tenant's tightest limit is ${tightest.limit}: its admitted requests need at least ${s(tightest.seconds)} s after the limit's initial burst, ${s(baseline!.pacedSeconds)} s paced at the limit's rate from the first request (as Vigil's budgets pace), whoever collects it; the floor column multiplies both by the tenants each collection slot takes in turn. The worker rows' end is seen on the live stream, which looks at the store every second.\n\n${table}`,
);
