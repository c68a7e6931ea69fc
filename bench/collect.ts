/**
 * Collection benchmark (issue 6): generates a large tenant — 50,000 users (5 % guests), 10,000 groups with about
 * 500,000 memberships, 50 environments, 5,000 apps, 5,000 flows, 1,000 agents, about 100,000 Teams app
 * installations — and a tenth of it, collects each from the emulator over real HTTPS into SQLite, and prints wall
 * time, requests, records/s, the collector's peak RSS, the time to evaluate every check over the tenant, and the
 * requests of a second, unchanged collection. Memory must stay flat as the tenant grows.
 *
 * Run: npm run bench:collect [-- scale1,scale2,…]   (scale 1 = the full tenant; default 0.1,1)
 */

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTenant, startEmulator } from '../emulator/index.ts';
import { PRODUCT_NODE_FLAGS } from './peak.ts';

const scales = (process.argv[2] ?? '0.1,1').split(',').map(Number);
const r = (n: number, scale: number) => Math.max(1, Math.round(n * scale));
const rows: string[] = [];
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
  const installs = Object.values(tenant.graphEstate?.installedApps ?? {}).reduce((n, a) => n + a.length, 0);
  console.log(
    `scale ${scale}: ${tenant.users.length} users, ${tenant.groups.length} groups, ${memberships} memberships, ${tenant.environments.length} environments, ${installs} Teams installations (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  const emulator = await startEmulator({ tenants: [tenant] });
  try {
    const endpoints = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'bench-emu-')));
    const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
    const out = await new Promise<string>((resolve, reject) => {
      // The emulator runs in this process, so the child is spawned asynchronously to let it serve.
      execFile(
        process.execPath,
        [...PRODUCT_NODE_FLAGS, '--import', 'tsx', 'bench/collect-child.ts', mkdtempSync(join(tmpdir(), 'bench-data-')), tenant.id, app.appId],
        { env: { ...process.env, VIGIL_ENDPOINTS_FILE: endpoints, BENCH_SECRET: app.secrets[0]!.value, VIGIL_LOG_LEVEL: 'warn' }, maxBuffer: 16 << 20 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr.slice(-2000)}`)) : resolve(stdout)),
      );
    });
    const res = JSON.parse(out.trim().split('\n').pop()!) as {
      status: string;
      errors: unknown[];
      records: number;
      seconds: number;
      collectRssMiB: number;
      evaluateRssMiB: number;
      maxRssMiB: number;
      firstRequests: number;
      firstByApi: Record<string, number>;
      secondRequests: number;
      secondByApi: Record<string, number>;
      reused: string[];
      evaluationSeconds: number;
      results: number;
      byStatus: Record<string, number>;
    };
    console.log(JSON.stringify(res));
    rows.push(
      `| ${scale} | ${tenant.users.length.toLocaleString('en')} | ${memberships.toLocaleString('en')} | ${installs.toLocaleString('en')} | ${res.records.toLocaleString('en')} | ${res.seconds.toFixed(1)} | ${Math.round(res.records / res.seconds).toLocaleString('en')} | ${res.collectRssMiB.toFixed(0)} / ${res.evaluateRssMiB.toFixed(0)} / ${res.maxRssMiB.toFixed(0)} | ${res.firstRequests.toLocaleString('en')} | ${res.secondRequests} (${((100 * res.secondRequests) / res.firstRequests).toFixed(1)} %) | ${res.evaluationSeconds.toFixed(1)} (${res.results.toLocaleString('en')} results) |`,
    );
  } finally {
    await emulator.close();
  }
}
console.log(
  '\n| scale | users | memberships | Teams installs | records | seconds | records/s | peak RSS MiB (collect / + evaluation / + 2nd run) | requests | 2nd run requests | check evaluation s |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
