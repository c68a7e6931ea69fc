/**
 * Collection benchmark: collects generated tenants of growing size from the emulator over real HTTPS and prints
 * records per second and the collector's peak resident memory. Memory must stay flat as the tenant grows
 * (pages stream to the store); throughput is bounded by the emulator and SQLite on this machine.
 *
 * Run: npm run bench:collect [-- users1,users2,…]
 */

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTenant, groundTruth, startEmulator } from '../emulator/index.ts';

const sizes = (process.argv[2] ?? '2000,20000,60000').split(',').map(Number);
console.log('collector heap capped at 64 MiB (--max-old-space-size=64)');
console.log('users    groups  memberships  agents   records  seconds  records/s  peak RSS (MiB)  requests  2nd run requests');
for (const users of sizes) {
  const tenant = generateTenant({ seed: `bench-${users}`, sizes: { users, guests: Math.round(users / 20), groups: Math.round(users / 50), environments: 6, agents: Math.round(users / 20) } });
  const truth = groundTruth(tenant);
  const emulator = await startEmulator({ tenants: [tenant] });
  try {
    const endpoints = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'bench-emu-')));
    const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
    const out = await new Promise<string>((resolve, reject) => {
      // The emulator runs in this process, so the child is spawned asynchronously to let it serve.
      execFile(
        process.execPath,
        // The old-generation cap proves the collector does not hold the tenant in memory: a leak would crash it.
        ['--max-old-space-size=64', '--import', 'tsx', 'bench/collect-child.ts', mkdtempSync(join(tmpdir(), 'bench-data-')), tenant.id, app.appId],
        { env: { ...process.env, VIGIL_ENDPOINTS_FILE: endpoints, BENCH_SECRET: app.secrets[0]!.value, VIGIL_LOG_LEVEL: 'warn' }, maxBuffer: 1 << 20 },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      );
    });
    const r = JSON.parse(out.trim().split('\n').pop()!) as { records: number; seconds: number; maxRssMiB: number; firstRequests: number; secondRequests: number };
    console.log(
      [String(truth.users).padEnd(8), String(truth.groups).padEnd(7), String(truth.memberships).padEnd(12), String(truth.agents).padEnd(8), String(r.records).padEnd(8), r.seconds.toFixed(1).padEnd(8), String(Math.round(r.records / r.seconds)).padEnd(10), r.maxRssMiB.toFixed(0).padEnd(14), String(r.firstRequests).padEnd(9), `${r.secondRequests} (${((100 * r.secondRequests) / r.firstRequests).toFixed(1)} %)`].join(' '),
    );
  } finally {
    await emulator.close();
  }
}

