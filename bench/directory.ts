/**
 * Directory benchmark (issue 18): Vigil as shipped against the official Microsoft Graph SDK on the same tenant, in the
 * same run. The tenant holds only a directory — users (5 % guests), groups and their members; no environments, Teams
 * apps, Copilot licences or Power BI — so `vigil collect --no-checks` reads exactly the directory streams (users,
 * groups, memberships) plus the empty answers of the other APIs. The baseline (bench/sdk-child.ts) reads users, groups
 * and each group's members with `@microsoft/microsoft-graph-client` and `ClientSecretCredential` into SQLite through
 * better-sqlite3. Both are timed by /usr/bin/time (wall, CPU, peak RSS); the emulator counts the requests of each.
 *
 * A Vigil run that ends partial, or an SDK run that reads fewer objects than the tenant holds, fails the benchmark and
 * writes nothing; otherwise the table replaces the `bench:directory` section of bench/README.md.
 *
 * Run: npm run bench:directory [-- users1,users2,…]   (default 5000,50000)
 */

import { loadavg } from 'node:os';
import { join } from 'node:path';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { writeBenchSection } from './readme.ts';
import { addIntegration, assertShippedBenchReady, benchSetting, measure, ROOT, vigil } from './shipped.ts';

assertShippedBenchReady();
const sizes = (process.argv[2] ?? '5000,50000').split(',').map(Number);
const loadAtStart = loadavg()[0]!;
const rows: string[] = [];
const failures: string[] = [];
const n = (x: number) => x.toLocaleString('en');
for (const users of sizes) {
  const tenant = generateTenant({
    seed: `bench-directory-${users}`,
    sizes: {
      users: Math.round(users * 0.95),
      guests: Math.round(users * 0.05),
      groups: Math.max(1, Math.round(users / 5)),
      maxMembersPerGroup: 98,
      environments: 0,
      agents: 0,
      apps: 0,
      flows: 0,
      connections: 0,
      connectors: 0,
      teamsAppsPerUser: 0,
      copilotUsersPercent: 0,
      powerBiWorkspaces: 0,
    },
  });
  const memberships = Object.values(tenant.memberships).reduce((k, m) => k + m.length, 0);
  const emulator = await startEmulator({ tenants: [tenant], logLimit: 1_000_000 });
  // As in bench:collect: Power BI serves an app that holds Tenant.Read.All, so the run can be complete.
  emulator.control.setPowerBiSettings(tenant.id, { rejectServicePrincipalsWithPowerBiRoles: false });
  try {
    const { work, endpoints, app, env } = benchSetting(emulator, tenant, 'bench-directory');
    const integrationId = await addIntegration(env, tenant.id, app.appId);
    const graphRequests = () => emulator.control.requests({ service: 'graph' }).length;

    emulator.control.resetLog();
    // Without --json the CLI reports each stream's time on standard error ("[1/23] users: 2000 records in 0.4 s").
    const v = await vigil(env, 'collect', integrationId, '--no-checks');
    const progress = v.stdout + v.stderr;
    const status = /^Run \S+: (\w+)/m.exec(progress)?.[1];
    const streamSeconds = (name: string) => Number(new RegExp(`\\] ${name}: [\\d,]+ records in ([\\d.]+) s`).exec(progress)?.[1] ?? NaN);
    // Users, groups and memberships are the run's first streams, none with a parent, so they start together (the
    // engine reads up to four streams at once): the directory is read when the last of them ends.
    const directorySeconds = Math.max(streamSeconds('users'), streamSeconds('groups'), streamSeconds('memberships'));
    const vigilGraph = graphRequests();
    if (status !== 'succeeded' || Number.isNaN(directorySeconds)) {
      failures.push(`${users} users: Vigil's collection ended ${status ?? 'without a status'}:\n${progress.slice(-2000)}`);
      continue;
    }

    emulator.control.resetLog();
    const sdk = await measure([join(ROOT, 'bench', 'sdk-child.ts'), endpoints, tenant.id, app.appId, join(work, 'sdk.db')], env);
    const sdkOut = JSON.parse(sdk.stdout) as { users: number; groups: number; members: number; readSeconds: number };
    const sdkGraph = graphRequests();
    if (sdkOut.users !== tenant.users.length || sdkOut.groups !== tenant.groups.length || sdkOut.members !== memberships) {
      failures.push(
        `${users} users: the SDK read ${JSON.stringify(sdkOut)}, the tenant holds ${tenant.users.length} users, ${tenant.groups.length} groups, ${memberships} members`,
      );
      continue;
    }
    console.log(
      JSON.stringify({
        users,
        directorySeconds,
        vigil: { ...v, stdout: undefined, stderr: undefined, graph: vigilGraph },
        sdk: { ...sdk, stdout: undefined, stderr: undefined, graph: sdkGraph, ...sdkOut },
      }),
    );
    rows.push(
      `| ${n(tenant.users.length)} | ${n(tenant.groups.length)} | ${n(memberships)} | ${directorySeconds.toFixed(1)} | ${v.wallSeconds.toFixed(1)} | ${v.cpuSeconds.toFixed(1)} | ${v.peakRssMiB.toFixed(0)} | ${n(vigilGraph)} | ${sdkOut.readSeconds.toFixed(1)} | ${sdk.wallSeconds.toFixed(1)} | ${sdk.cpuSeconds.toFixed(1)} | ${sdk.peakRssMiB.toFixed(0)} | ${n(sdkGraph)} | ${(sdkOut.readSeconds / directorySeconds).toFixed(1)}× |`,
    );
  } finally {
    await emulator.close();
  }
}
const table = [
  '| users | groups | members | Vigil directory read s (3 streams at once) | Vigil whole run s | Vigil CPU s | Vigil peak RSS MiB | Vigil Graph requests | SDK directory read s | SDK process s | SDK CPU s | SDK peak RSS MiB | SDK Graph requests | directory read: Vigil faster by (goal ≥ 4×) |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows,
].join('\n');
console.log(`\n${table}`);
if (failures.length) {
  console.error(`\nbench:directory FAILED — bench/README.md left as it was:\n${failures.join('\n')}`);
  process.exit(1);
}
writeBenchSection(
  'directory',
  `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:directory -- ${sizes.join(',')}\`, Node ${process.version}, ${process.platform}/${process.arch}, 1-minute load average ${loadAtStart.toFixed(1)} at the start; emulator latency (no added delay), budgets as configured by default.\n\n${table}`,
);
