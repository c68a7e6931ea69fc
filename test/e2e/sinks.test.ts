import { createHmac, timingSafeEqual } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import type { DetectionMetadata, Detection } from '../../src/detections/types.ts';
import { runDetections } from '../../src/detections/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { getIntegration } from '../../src/integration/index.ts';
import { createSinks, type Sinks } from '../../src/sinks/index.ts';
import { ingestAudit } from '../../src/sync/audit.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { until, vigil } from '../support/process.ts';
import { world, type World } from './harness.ts';

const SECRET = 'whsec-test-0123456789abcdef-never-logged';
const T = Date.parse('2026-11-20T12:00:00Z');

/** A webhook receiver on 127.0.0.1 that checks every signature and can refuse on demand. */
interface Receiver {
  url: string;
  mode: 'ok' | 'flaky' | 'down';
  /** Every request: delivery id, event type, whether the signature verified, the status answered, the parsed body. */
  requests: { delivery: string; event: string; signed: boolean; status: number; body: { finding_info: { uid: string }; class_uid: number } }[];
  /** Deliveries answered 2xx. */
  accepted(): Receiver['requests'];
  close(): Promise<void>;
}

/** Verifies `X-Vigil-Signature` as docs/configuration.md tells receivers to. */
function verify(secret: string, timestamp: string, body: string, header: string): boolean {
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

async function receiver(): Promise<Receiver> {
  const attempts = new Map<string, number>();
  const r: Receiver = {
    url: '',
    mode: 'ok',
    requests: [],
    accepted: () => r.requests.filter((q) => q.status === 200),
    close: () => new Promise((done) => server.close(() => done())),
  };
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const delivery = String(req.headers['x-vigil-delivery']);
      const n = (attempts.get(delivery) ?? 0) + 1;
      attempts.set(delivery, n);
      const signed = verify(SECRET, String(req.headers['x-vigil-timestamp']), raw, String(req.headers['x-vigil-signature']));
      const status = !signed ? 401 : r.mode === 'down' || (r.mode === 'flaky' && n <= 2) ? 503 : 200;
      r.requests.push({ delivery, event: String(req.headers['x-vigil-event']), signed, status, body: JSON.parse(raw) as Receiver['requests'][number]['body'] });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/vigil`;
  return r;
}

/** An RFC 5424 message split into its header fields, structured data and MSG. */
interface Parsed {
  pri: number;
  version: string;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  sd: Record<string, Record<string, string>>;
  msg: string;
}

/** Parses one RFC 5424 message (§6): header, then structured data elements with escaped values, then MSG. */
function parse5424(line: string): Parsed {
  const head = /^<(\d{1,3})>(\d) (\S+) (\S+) (\S+) (\S+) (\S+) /.exec(line);
  if (!head) throw new Error(`not RFC 5424: ${line.slice(0, 80)}`);
  let i = head[0].length;
  const sd: Parsed['sd'] = {};
  if (line[i] === '-') i += 1;
  else {
    while (line[i] === '[') {
      const id = /^\[([^ \]=]+)/.exec(line.slice(i))!;
      i += id[0].length;
      const params: Record<string, string> = {};
      while (line[i] === ' ') {
        const name = /^ ([^ =\]"]+)="/.exec(line.slice(i))!;
        i += name[0].length;
        let value = '';
        while (line[i] !== '"') {
          if (line[i] === '\\') i++;
          value += line[i++];
        }
        i++;
        params[name[1]!] = value;
      }
      expect(line[i]).toBe(']');
      i++;
      sd[id[1]!] = params;
    }
  }
  expect(line[i]).toBe(' ');
  return {
    pri: Number(head[1]),
    version: head[2]!,
    timestamp: head[3]!,
    hostname: head[4]!,
    appName: head[5]!,
    procId: head[6]!,
    msgId: head[7]!,
    sd,
    msg: line.slice(i + 1),
  };
}

/** Checks a syslog message against the event it carries. */
function checkSyslog(p: Parsed, appName: string): { uid: string; event: string } {
  expect(p.version).toBe('1');
  expect(new Date(p.timestamp).toISOString()).toBe(p.timestamp);
  expect(p.appName).toBe(appName);
  expect(p.procId).toMatch(/^\d+$/);
  const sd = p.sd['vigil@32473']!;
  expect(sd).toBeDefined();
  expect(p.msgId).toBe(sd.event);
  const body = JSON.parse(p.msg) as { finding_info: { uid: string; analytic: { uid: string } }; severity_id: number };
  expect(body.finding_info.uid).toBe(sd.id);
  expect(p.pri).toBe(10 * 8 + { critical: 2, high: 3, medium: 4, low: 5, info: 6 }[sd.severity as 'high']);
  expect(sd.checkId ?? sd.ruleId).toBe(body.finding_info.analytic.uid);
  return { uid: sd.id!, event: sd.event! };
}

/** The finding lifecycle steps the store recorded, as `id:event` (the events sinks must get, each once). */
async function lifecycle(rt: Runtime): Promise<string[]> {
  const rows = await rt.db.selectFrom('finding_history').select(['finding_id', 'event']).where('event', 'in', ['opened', 'reopened', 'resolved']).execute();
  return rows.map((r) => `${r.finding_id}:finding.${r.event}`).sort();
}

describe('SIEM sinks: signed webhook with retries and outbox, syslog over UDP and TCP', () => {
  let w: World;
  let hook: Receiver;
  let udp: UdpSocket;
  const udpLines: string[] = [];
  let tcp: TcpServer;
  const tcpLines: string[] = [];

  beforeAll(async () => {
    w = await world({ seed: 'sinks', sizes: { users: 12, guests: 2, groups: 2, environments: 2, agents: 8 } });
    hook = await receiver();
    udp = createSocket('udp4');
    udp.on('message', (m) => udpLines.push(m.toString('utf8')));
    await new Promise<void>((done) => udp.bind(0, '127.0.0.1', () => done()));
    tcp = createTcpServer((socket) => {
      let buf = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        // RFC 6587 octet counting: MSG-LEN SP MSG, repeated.
        for (;;) {
          const sp = buf.indexOf(0x20);
          if (sp < 0) break;
          const len = Number(buf.subarray(0, sp).toString('ascii'));
          expect(Number.isInteger(len) && len > 0).toBe(true);
          if (buf.length < sp + 1 + len) break;
          tcpLines.push(buf.subarray(sp + 1, sp + 1 + len).toString('utf8'));
          buf = buf.subarray(sp + 1 + len);
        }
      });
    });
    await new Promise<void>((done) => tcp.listen(0, '127.0.0.1', () => done()));
  }, 60_000);
  afterAll(async () => {
    await hook?.close();
    udp?.close();
    await new Promise((done) => tcp?.close(done));
    await w?.close();
  });

  it('delivers every finding step and alert once, signed; retries 503s; keeps what a down receiver missed for the next cycle', async () => {
    const rt = await w.runtime(undefined, {
      VIGIL_WEBHOOK_URL: hook.url,
      VIGIL_WEBHOOK_SECRET: SECRET,
      VIGIL_SYSLOG_TARGET: `udp://127.0.0.1:${(udp.address() as AddressInfo).port}`,
      VIGIL_SYSLOG_APP_NAME: 'vigil-test',
    });
    expect(rt.sinks?.names).toEqual(['webhook', 'syslog']);
    // The runtime's sinks as configured, with a short backoff so the test does not wait seconds per retry.
    const sinks: Sinks = createSinks(rt.config.sinks, rt.logger, { webhook: { baseDelayMs: 20, maxDelayMs: 200 } })!;
    const deps = { ...rt, sinks };
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });

    // Cycle 1, receiver healthy: every finding opened arrives once, signed.
    const first = await collectAndEvaluate(deps, integration.id);
    const row = await getIntegration(rt.db, integration.id);
    expect(first.evaluation!.findingsOpened).toBeGreaterThan(3);
    expect(hook.requests.every((q) => q.signed)).toBe(true);
    const got = () =>
      hook
        .accepted()
        .map((q) => `${q.body.finding_info.uid}:${q.event}`)
        .filter((k) => !k.includes('alert.'))
        .sort();
    expect(got()).toEqual(await lifecycle(rt));
    expect(got().filter((k) => k.endsWith('finding.opened'))).toHaveLength(first.evaluation!.findingsOpened);

    // Cycle 2, receiver refusing twice with 503 per delivery: all checks dropped → every finding resolved; each resolution arrives once.
    hook.mode = 'flaky';
    const before = hook.requests.length;
    const second = await evaluateIntegration(rt.db, row, { checks: [], sinks, logger: rt.logger });
    expect(second.findingsResolved).toBe(first.evaluation!.findingsOpened);
    const flaky = hook.requests.slice(before);
    expect(flaky.filter((q) => q.status === 503)).toHaveLength(2 * second.findingsResolved);
    expect(got()).toEqual(await lifecycle(rt));
    expect(new Set(hook.accepted().map((q) => q.delivery)).size).toBe(hook.accepted().length);

    // Cycle 3, receiver down the whole cycle: findings reopen, nothing is accepted, the events wait in the outbox.
    hook.mode = 'down';
    const third = await evaluateIntegration(rt.db, row, { sinks, logger: rt.logger });
    expect(third.findingsOpened).toBe(second.findingsResolved);
    const pending = await rt.db.selectFrom('sink_outbox').selectAll().where('sink', '=', 'webhook').where('delivered_at', 'is', null).execute();
    expect(pending).toHaveLength(third.findingsOpened);
    expect(pending.every((p) => p.attempts <= 1 && p.event_type === 'finding.reopened')).toBe(true);
    expect(pending.find((p) => p.last_error)?.last_error).toMatch(/answered 503 \(after 5 attempts\)/);
    expect((await lifecycle(rt)).length).toBeGreaterThan(got().length);

    // Cycle 4, receiver back: the next detection run delivers the waiting events, and its alerts, each once.
    hook.mode = 'ok';
    w.emulator.control.setClock(new Date(T).toISOString());
    w.emulator.control.configureFeed(w.tenant.id, { recordsPerHour: 60, since: new Date(T - 6 * 3_600_000).toISOString() });
    await ingestAudit(rt, integration.id, { now: new Date(T), initialLookbackHours: 6, powerBi: false });
    const types = (await rt.db.selectFrom('audit_events').select('record_type').distinct().execute())
      .map((r) => r.record_type)
      .filter((t): t is number => t !== null);
    expect(types.length).toBeGreaterThan(0);
    const everyTenth: Detection = {
      metadata: {
        id: 'test_every_tenth',
        title: 'Every tenth event',
        severity: 'medium',
        description: 'A test rule raising one alert for every tenth event.',
        response: 'Nothing to do: this rule exists for tests.',
        references: ['https://learn.microsoft.com/office/office-365-management-api/'],
        frameworks: {},
        recordTypes: types,
      } as DetectionMetadata,
      run: (ctx) => ctx.events.filter((_, i) => i % 10 === 0).map((e) => ({ dedupeKey: e.id, title: `Event ${e.id}`, eventIds: [e.id], detail: {} })),
    };
    const detections = await runDetections(rt.db, integration.id, [everyTenth], { sinks, tenantId: w.tenant.id, logger: rt.logger });
    expect(detections.alertsRaised).toBeGreaterThan(0);
    expect(got()).toEqual(await lifecycle(rt));
    const alertIds = (await rt.db.selectFrom('alerts').select('id').execute()).map((a) => a.id).sort();
    const alerts = hook.accepted().filter((q) => q.event === 'alert.raised');
    expect(alerts.map((q) => q.body.finding_info.uid).sort()).toEqual(alertIds);
    expect(alerts.every((q) => q.body.class_uid === 2004)).toBe(true);
    expect(await rt.db.selectFrom('sink_outbox').select('id').where('delivered_at', 'is', null).execute()).toEqual([]);

    // Syslog (UDP) got every event too — it was never down — as RFC 5424 lines whose header and structured data parse.
    const expectedAll = [...(await lifecycle(rt)), ...alertIds.map((id) => `${id}:alert.raised`)].sort();
    await until('every syslog datagram', () => udpLines.length >= expectedAll.length, 10_000);
    expect(
      udpLines
        .map((l) => checkSyslog(parse5424(l), 'vigil-test'))
        .map((e) => `${e.uid}:${e.event}`)
        .sort(),
    ).toEqual(expectedAll);

    // The secret is in no log line (the log holds the sink's own lines: it is not empty of them).
    await rt.close();
    const log = readFileSync(join(rt.config.dataDir, 'logs', 'vigil.log'), 'utf8');
    expect(log).toMatch(/sink delivery/);
    expect(log).not.toContain(SECRET);
    const outbox = JSON.stringify(await (await w.runtime(rt.config.dataDir)).db.selectFrom('sink_outbox').selectAll().execute());
    expect(outbox).not.toContain(SECRET);
  }, 120_000);

  it('sends RFC 5424 over TCP with octet-counting framing; `vigil sinks test` reports each sink', async () => {
    const port = (tcp.address() as AddressInfo).port;
    const rt = await w.runtime(undefined, { VIGIL_SYSLOG_TARGET: `tcp://127.0.0.1:${port}` });
    expect(rt.sinks?.names).toEqual(['syslog']);
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const { evaluation } = await collectAndEvaluate(rt, integration.id);
    const steps = await lifecycle(rt);
    expect(steps).toHaveLength(evaluation!.findingsOpened);
    await until('every syslog frame', () => tcpLines.length >= steps.length, 10_000);
    expect(
      tcpLines
        .map((l) => checkSyslog(parse5424(l), 'vigil'))
        .map((e) => `${e.uid}:${e.event}`)
        .sort(),
    ).toEqual(steps);

    const env = { VIGIL_DATA_DIR: rt.config.dataDir, VIGIL_ENDPOINTS_FILE: w.endpointsFile, VIGIL_SYSLOG_TARGET: `tcp://127.0.0.1:${port}` };
    const tested = await vigil(['sinks', 'test', '--json'], env);
    expect(tested.code, tested.stderr).toBe(0);
    expect(JSON.parse(tested.stdout)).toEqual([{ sink: 'syslog', target: `syslog tcp://127.0.0.1:${port}`, ok: true, error: null }]);
    // A sink that cannot be reached is reported as failed, with exit code 6.
    const down = await vigil(['sinks', 'test', '--json'], { ...env, VIGIL_SYSLOG_TARGET: 'tcp://127.0.0.1:1' });
    expect(down.code).toBe(6);
    expect(JSON.parse(down.stdout)).toEqual([expect.objectContaining({ sink: 'syslog', ok: false, error: expect.stringMatching(/ECONNREFUSED/) })]);
    await until('the test frame', () => tcpLines.length === steps.length + 1, 10_000);
    expect(parse5424(tcpLines.at(-1)!).msgId).toBe('test');
  }, 120_000);
});
