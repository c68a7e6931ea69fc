/**
 * Throughput benchmark of the emulated Management Activity feed: a 24-hour window holding about `--records` records
 * (default 1,000,000) is listed (following `NextPageUri`) and every blob fetched over HTTPS, the way a collector does.
 * The emulator runs in a child process (one Node.js main thread = one core) so the client's parsing does not share its
 * CPU; the report gives records per second of wall time and the server's CPU time per record. `--in-process` also
 * times generation alone (no HTTP).
 *
 *   npx tsx emulator/feedbench.ts [--records 1000000] [--blob-size 200] [--concurrency 8] [--in-process]
 *
 * The collected count is checked against the feed's ground truth (`records` of the window, duplicates included).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { CONTENT_TYPES } from './auditrecords.ts';
import { EmulatedClock } from './clock.ts';
import { FeedStore } from './feed.ts';
import { generateTenant } from './generate.ts';
import { startEmulator } from './index.ts';
import { TenantStore } from './tenant.ts';

/** Parsed command line of the benchmark. */
export interface FeedBenchOptions {
  records: number;
  blobSize: number;
  concurrency: number;
  inProcess: boolean;
}

const NOW = '2025-06-10T12:00:00Z';
const PUBLISHER = '46b472a7-c68e-4adf-8ade-3db49497518e';

/** Reads `--records`, `--blob-size`, `--concurrency`, `--in-process` from argv. */
export function parseBenchArgs(argv: readonly string[]): FeedBenchOptions {
  const num = (name: string, fallback: number): number => {
    const i = argv.indexOf(name);
    const v = i >= 0 ? Number(argv[i + 1]) : fallback;
    if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${name} must be a positive number`);
    return v;
  };
  return {
    records: num('--records', 1_000_000),
    blobSize: num('--blob-size', 200),
    concurrency: num('--concurrency', 8),
    inProcess: argv.includes('--in-process'),
  };
}

function tenantFor(): ReturnType<typeof generateTenant> {
  return generateTenant({ seed: 'feedbench', sizes: { users: 500, guests: 25, environments: 4, agents: 40 } });
}

async function serve(options: FeedBenchOptions): Promise<void> {
  const tenant = tenantFor();
  const emu = await startEmulator({ tenants: [tenant], logLimit: 1000 });
  emu.control.setClock(NOW);
  emu.control.configureFeed(tenant.id, { recordsPerHour: options.records / 24, blobSize: options.blobSize, pageSize: 1000 });
  for (const ct of CONTENT_TYPES) emu.control.startSubscription(tenant.id, ct);
  const { access_token } = await emu.control.mintToken({ tenantId: tenant.id, resource: 'https://manage.office.com', kind: 'app' });
  const truth = emu.control.auditGroundTruth(tenant.id, { from: '2025-06-09T12:00:00Z', to: NOW, includeIds: false });
  const send = (m: unknown): void => void process.send?.(m);
  let cpu = process.cpuUsage();
  process.on('message', (m: { type: string }) => {
    if (m.type === 'mark') cpu = process.cpuUsage();
    if (m.type === 'stats') {
      const c = process.cpuUsage(cpu);
      send({ type: 'stats', userMs: c.user / 1000, systemMs: c.system / 1000, rssMb: process.memoryUsage().rss / 1e6 });
    }
    if (m.type === 'stop') void emu.close().then(() => process.exit(0));
  });
  send({
    type: 'ready',
    url: emu.url,
    ca: emu.caPem,
    token: access_token,
    tenantId: tenant.id,
    expectedRecords: truth.total.records,
    expectedUnique: truth.total.unique,
  });
}

function inProcess(options: FeedBenchOptions): void {
  const tenant = tenantFor();
  const clock = new EmulatedClock();
  clock.set(NOW);
  const feed = new FeedStore(new TenantStore([tenant]), clock).feed(tenant.id);
  if (!feed) throw new Error('no feed');
  feed.configure({ recordsPerHour: options.records / 24, blobSize: options.blobSize });
  const end = clock.now();
  const start = end - 86_400_000;
  const t0 = performance.now();
  let records = 0;
  let chars = 0;
  for (const ct of CONTENT_TYPES) {
    for (const b of feed.listContent(ct, start, end)) {
      const r = feed.blob(b.contentId);
      if (r.status === 'ok') {
        records += r.records;
        chars += r.json.length;
      }
    }
  }
  const ms = performance.now() - t0;
  console.log(
    JSON.stringify({
      mode: 'in-process',
      records,
      mb: Math.round(chars / 1e6),
      seconds: +(ms / 1000).toFixed(2),
      recordsPerSecond: Math.round((records / ms) * 1000),
      rssMb: Math.round(process.memoryUsage().rss / 1e6),
    }),
  );
}

async function client(options: FeedBenchOptions): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', ...process.argv.slice(2)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  type Ready = { url: string; ca: string; token: string; tenantId: string; expectedRecords: number; expectedUnique: number };
  const messages: ((m: Record<string, unknown>) => void)[] = [];
  child.on('message', (m: Record<string, unknown>) => messages.shift()?.(m));
  const next = (): Promise<Record<string, unknown>> => new Promise((resolve) => messages.push(resolve));
  const ready = (await next()) as unknown as Ready;
  const agent = new Agent({ connect: { ca: ready.ca }, connections: options.concurrency });
  const headers = { authorization: `Bearer ${ready.token}` };
  const root = `${ready.url}/manage/api/v1.0/${ready.tenantId}/activity/feed`;
  const pub = `PublisherIdentifier=${PUBLISHER}`;
  try {
    child.send({ type: 'mark' });
    const t0 = performance.now();
    const uris: string[] = [];
    for (const ct of CONTENT_TYPES) {
      let url: string | undefined = `${root}/subscriptions/content?contentType=${ct}&startTime=2025-06-09T12:00:00&endTime=2025-06-10T12:00:00&${pub}`;
      while (url) {
        const res: Awaited<ReturnType<typeof request>> = await request(url, { dispatcher: agent, headers });
        const list = (await res.body.json()) as { contentUri: string }[];
        for (const item of list) uris.push(item.contentUri);
        const nextPage: string | string[] | undefined = res.headers.nextpageuri;
        url = typeof nextPage === 'string' ? `${nextPage}&${pub}` : undefined;
      }
    }
    let records = 0;
    let bytes = 0;
    let i = 0;
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (i < uris.length) {
          const uri = uris[i++] as string;
          const res = await request(`${uri}?${pub}`, { dispatcher: agent, headers });
          const text = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${text.slice(0, 200)}`);
          bytes += text.length;
          for (let p = text.indexOf('{"CreationTime"'); p >= 0; p = text.indexOf('{"CreationTime"', p + 15)) records++;
        }
      }),
    );
    const ms = performance.now() - t0;
    child.send({ type: 'stats' });
    const stats = (await next()) as { userMs: number; systemMs: number; rssMb: number };
    const cpuMs = stats.userMs + stats.systemMs;
    console.log(
      JSON.stringify({
        mode: 'https',
        blobs: uris.length,
        records,
        expectedRecords: ready.expectedRecords,
        uniqueRecords: ready.expectedUnique,
        mb: Math.round(bytes / 1e6),
        seconds: +(ms / 1000).toFixed(2),
        recordsPerSecond: Math.round((records / ms) * 1000),
        serverCpuSeconds: +(cpuMs / 1000).toFixed(2),
        serverCpuMicrosPerRecord: +((cpuMs * 1000) / records).toFixed(1),
        recordsPerServerCpuSecond: Math.round(records / (cpuMs / 1000)),
        serverRssMb: Math.round(stats.rssMb),
      }),
    );
    if (records !== ready.expectedRecords) throw new Error(`collected ${records} records, ground truth says ${ready.expectedRecords}`);
  } finally {
    child.send({ type: 'stop' });
    await agent.close();
  }
}

/** Entry point: `--serve` runs the emulator side (child), otherwise the client side. */
export async function main(argv: readonly string[]): Promise<void> {
  const options = parseBenchArgs(argv);
  if (argv.includes('--serve')) return serve(options);
  if (options.inProcess) inProcess(options);
  await client(options);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
