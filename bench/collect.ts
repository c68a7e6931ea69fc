/**
 * Collection benchmark (issues 6 and 18): Vigil as shipped — `bin/vigil.mjs` running the compiled `dist/` with the
 * product's own Node flags, a separate process per command, exactly as a user runs it — against a generated tenant
 * served by the emulator over real HTTPS, with its baselines measured in the same run:
 *
 * 1. `vigil integrations add` and `vigil environments grant-access` (untimed set-up, as the seed prescribes: System
 *    Administrator in every environment, so a complete collection is possible);
 * 2. `vigil collect --no-checks --json`, timed by /usr/bin/time (wall, user + system CPU, peak RSS); the requests are
 *    counted by the emulator (an independent witness), with their bodies kept for the baselines;
 * 3. `vigil collect --json` again with nothing changed upstream (its requests; then every check evaluated, timed by
 *    the product);
 * 4. baselines (bench/replay-child.ts): the first collection's requests replayed by Node's fetch writing nothing, and
 *    the same replay upserting every object into SQLite through better-sqlite3;
 * 5. for the scales in BENCH_THROTTLED_SCALES (default 0.1): the same tenant collected into a new data directory with
 *    the emulator enforcing Microsoft's documented limits, against the throttle floor of the tightest limit.
 *
 * A collection that ends `partial` or `failed` (an errored slice), or a throttled one that stores fewer records, is a failed benchmark: its errors are printed, nothing
 * is written to bench/README.md, and the process exits 1. Otherwise the table replaces the `bench:collect` section of
 * bench/README.md (bench/readme.ts).
 *
 * Run: npm run bench:collect [-- scale1,scale2,…]   (scale 1 = the full tenant: 50,000 users; default 0.1,1)
 * Needs /usr/bin/time (Debian package `time`).
 */

import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { PRODUCT_NODE_FLAGS } from './peak.ts';
import { writeBenchSection } from './readme.ts';
import { addIntegration, assertShippedBenchReady, benchSetting, measure, ROOT, throttleFloor, vigil } from './shipped.ts';

assertShippedBenchReady();

interface RunJson {
  run: { status: string; progress: { records: number; errored: number }; errors: unknown[] | null };
  evaluation?: { results: number; durationMs: number; byStatus: Record<string, number> };
}

const scales = (process.argv[2] ?? '0.1,1').split(',').map(Number);
const loadAtStart = loadavg()[0]!;
const r = (n: number, scale: number) => Math.max(1, Math.round(n * scale));
/** Each scale's table rows: without throttling, and under the documented limits (when measured). */
const rows = new Map<number, { row?: string; throttled?: string }>();
const rowsOf = (scale: number) => rows.get(scale) ?? rows.set(scale, {}).get(scale)!;
/** Scales also collected under the documented limits (BENCH_THROTTLED_SCALES, comma-separated; default 0.1). */
const throttledScales = (process.env.BENCH_THROTTLED_SCALES ?? '0.1').split(',').filter(Boolean).map(Number);
const n = (x: number) => x.toLocaleString('en');
const s = (x: number) => x.toFixed(1);

const failures: string[] = [];
for (const scale of scales) {
  const t0 = Date.now();
  const tenant = generateTenant({
    seed: `bench-${scale}`,
    sizes: {
      users: r(47_500, scale),
      guests: r(2_500, scale),
      groups: r(10_000, scale),
      maxMembersPerGroup: 98,
      environments: r(50, scale),
      agents: r(1_000, scale),
      apps: r(5_000, scale),
      flows: r(5_000, scale),
      connections: r(5_000, scale),
      connectors: r(200, scale),
      teamsAppsPerUser: 2,
      copilotUsersPercent: 5,
      copilotPairsPerUser: 2,
      powerBiWorkspaces: r(500, scale),
      agentComponentsPerAgent: 6,
    },
  });
  const memberships = Object.values(tenant.memberships).reduce((n, m) => n + m.length, 0);
  console.log(
    `scale ${scale}: ${tenant.users.length} users, ${tenant.groups.length} groups, ${memberships} memberships (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  const emulator = await startEmulator({ tenants: [tenant], logLimit: 1_000_000, logBodies: true });
  // The generated app holds Power BI's Tenant.Read.All, which Microsoft documents makes the read-only admin APIs refuse
  // a service principal; the benchmark measures a complete collection, so Power BI serves such apps (as some tenants do).
  emulator.control.setPowerBiSettings(tenant.id, { rejectServicePrincipalsWithPowerBiRoles: false });
  try {
    const { work, endpoints, app, env } = benchSetting(emulator, tenant, 'bench-collect');
    const integrationId = await addIntegration(env, tenant.id, app.appId);
    await vigil(env, 'environments', 'grant-access', '--integration', integrationId, '--json');

    emulator.control.resetLog();
    const first = await vigil(env, 'collect', integrationId, '--no-checks', '--json');
    const firstRun = JSON.parse(first.stdout) as RunJson;
    const logged = emulator.control.requests().filter((e) => e.service !== 'identity');
    const records = firstRun.run.progress.records;
    if (firstRun.run.status !== 'succeeded') {
      failures.push(
        `scale ${scale}: the first collection ended ${firstRun.run.status}: ${firstRun.run.progress.errored} errored slices, ${JSON.stringify(firstRun.run.errors?.slice(0, 3))}`,
      );
      continue;
    }

    emulator.control.resetLog();
    const second = await vigil(env, 'collect', integrationId, '--json');
    const secondRun = JSON.parse(second.stdout) as RunJson;
    const secondRequests = emulator.control.requests().filter((e) => e.service !== 'identity').length;
    if (secondRun.run.status !== 'succeeded') {
      failures.push(`scale ${scale}: the second collection ended ${secondRun.run.status}`);
      continue;
    }

    const requestsFile = join(work, 'requests.json');
    writeFileSync(requestsFile, JSON.stringify(logged.map(({ method, service, path, body, headers }) => ({ method, service, path, body, headers }))));
    const replay = (mode: 'fetch' | 'sqlite') =>
      measure([join(ROOT, 'bench', 'replay-child.ts'), requestsFile, endpoints, tenant.id, app.appId, mode, join(work, `replay-${mode}.db`), '4'], env);
    const raw = await replay('fetch');
    const rawDb = await replay('sqlite');
    const rawDbOut = JSON.parse(rawDb.stdout) as { statuses: Record<string, number>; objects: number };
    const notOk = Object.entries(rawDbOut.statuses).filter(([s]) => !s.startsWith('2'));
    console.log(
      JSON.stringify({
        scale,
        records,
        first: { ...first, stdout: undefined, stderr: undefined },
        second: { ...second, stdout: undefined, stderr: undefined },
        raw: { ...raw, stdout: raw.stdout.trim(), stderr: undefined },
        rawDb: { ...rawDb, stdout: undefined, stderr: undefined },
        rawDbOut,
      }),
    );
    rowsOf(scale).row =
      `| ${scale} | ${n(tenant.users.length)} | ${n(records)} | ${n(logged.length)} | ${s(first.wallSeconds)} | ${s(first.cpuSeconds)} | ${first.peakRssMiB.toFixed(0)} | ${s(raw.wallSeconds)} / ${s(raw.cpuSeconds)} | ${s(rawDb.wallSeconds)} / ${s(rawDb.cpuSeconds)}${notOk.length ? ` (${notOk.map(([k, v]) => `${v}× ${k}`).join(', ')})` : ''} | ${(first.cpuSeconds / rawDb.cpuSeconds).toFixed(1)}× | ${n(secondRequests)} (${((100 * secondRequests) / logged.length).toFixed(1)} %) | ${s((secondRun.evaluation?.durationMs ?? NaN) / 1000)} (${n(secondRun.evaluation?.results ?? 0)} results) | ${second.peakRssMiB.toFixed(0)} |`;

    if (throttledScales.includes(scale)) {
      // The same tenant collected into a new data directory with the documented limits enforced by the emulator.
      const tenv = { ...env, VIGIL_DATA_DIR: join(work, 'data-throttled') };
      const tid = await addIntegration(tenv, tenant.id, app.appId);
      await vigil(tenv, 'environments', 'grant-access', '--integration', tid, '--json');
      emulator.control.setThrottling({ enabled: true });
      emulator.control.resetThrottlingCounters();
      const t = await vigil(tenv, 'collect', tid, '--no-checks', '--json');
      const state = emulator.control.throttling();
      emulator.control.setThrottling({ enabled: false });
      const tRun = JSON.parse(t.stdout) as RunJson;
      const { seconds: burstFloor, pacedSeconds: floor, limit } = throttleFloor(state);
      console.log(
        JSON.stringify({
          scale,
          throttled: {
            wallSeconds: t.wallSeconds,
            cpuSeconds: t.cpuSeconds,
            status: tRun.run.status,
            records: tRun.run.progress.records,
            floor,
            burstFloor,
            limit,
            totals: state.totals,
          },
        }),
      );
      if (tRun.run.status !== 'succeeded' || tRun.run.progress.records !== records)
        failures.push(
          `scale ${scale}: under the documented limits the collection ended ${tRun.run.status} with ${tRun.run.progress.records} of ${records} records, ${tRun.run.progress.errored} errored slices: ${JSON.stringify(tRun.run.errors?.slice(0, 2))}`,
        );
      rowsOf(scale).throttled =
        `| ${scale} | ${n(records)} | ${n(state.totals.requests)} | ${n(state.totals.throttled)} | ${s(t.wallSeconds)} | ${s(floor)} (${limit}) | ${(t.wallSeconds / floor).toFixed(2)}× | ${s(burstFloor)} (${(t.wallSeconds / burstFloor).toFixed(2)}×) | ${tRun.run.progress.errored} |`;
    }
  } finally {
    await emulator.close();
  }
}

const header =
  '| scale | users | records | requests | Vigil s | Vigil CPU s | Vigil peak RSS MiB | raw fetch s / CPU s | raw fetch + better-sqlite3 s / CPU s | Vigil CPU ÷ raw + SQLite CPU (goal ≤ 2×) | 2nd run requests (goal ≤ 5 %) | check evaluation s (goal ≤ 5) | 2nd run + evaluation peak RSS MiB |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
const throttledHeader =
  '| scale | records | requests (inner $batch requests included) | answered 429 | Vigil s | throttle floor s: admitted requests ÷ the tightest limit’s rate | Vigil ÷ floor (goal ≤ 1.10×) | floor after the limit’s initial burst s (Vigil ÷ it) | errored slices (goal 0) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
const table = [header, ...scales.flatMap((sc) => rows.get(sc)?.row ?? [])].join('\n');
const throttledTable = [throttledHeader, ...scales.flatMap((sc) => rows.get(sc)?.throttled ?? [])].join('\n');
console.log(`\n${table}\n\nUnder the documented limits:\n\n${throttledTable}`);
if (failures.length) {
  console.error(`\nbench:collect FAILED — a partial run is not a benchmark; bench/README.md left as it was:\n${failures.join('\n')}`);
  process.exit(1);
}
// One section per scale (`collect:<scale>`): a run at one scale leaves the other scales' figures as their runs wrote them.
for (const scale of scales) {
  const { row, throttled } = rows.get(scale)!;
  writeBenchSection(
    `collect:${scale}`,
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:collect -- ${scales.join(',')}\`, Node ${process.version}, ${process.platform}/${process.arch}, 1-minute load average ${loadAtStart.toFixed(1)} at the start (other work on the machine shows in the times); Vigil run as shipped (\`${['node', ...PRODUCT_NODE_FLAGS, 'bin/vigil.mjs'].join(' ')}\`), times and peak RSS by /usr/bin/time, requests counted by the emulator. Budgets as configured by default.\n\nWithout throttling:\n\n${header}\n${row}${
      throttled
        ? `\n\nThe same tenant collected into a new data directory with the emulator enforcing Microsoft's documented limits (emulator/throttling.ts: Graph identity resource units by tenant size, Teams GET per app and tenant, Dataverse, Power Platform, Power BI); the floor is the tightest limit's admitted requests ÷ its rate (issue 18's definition); Vigil's budgets pace from the first request and do not spend a limit's initial burst, which the last floor column subtracts:\n\n${throttledHeader}\n${throttled}`
        : ''
    }`,
  );
}
