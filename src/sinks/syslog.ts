import { createSocket } from 'node:dgram';
import { hostname } from 'node:os';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { SinkEvent, SinkSender } from './types.ts';

/**
 * The syslog sink: RFC 5424 messages over UDP (RFC 5426), TCP (RFC 6587 octet counting) or TLS (RFC 5425, also
 * octet counting). Hand-written: the formatter is a few lines, and the npm clients (`syslog-client`, `glossy`) are
 * unmaintained and lack structured data or octet-counting framing.
 *
 * Message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [vigil@32473 …] MSG` where PRI = facility 10
 * (security/authorization, RFC 5424 §6.2.1) × 8 + the severity below, MSGID the event type, the structured data
 * element `vigil@32473` (32473 is the enterprise number RFC 5612 reserves for documentation) carries event, id,
 * severity, check or rule and integration, and MSG is the event's OCSF JSON (UTF-8, no BOM).
 */

/** Facility 10: security/authorization messages. */
const FACILITY = 10;
/** The structured data id of Vigil's element. */
const SYSLOG_SD_ID = 'vigil@32473';

/** Vigil severity → RFC 5424 severity (2 Critical, 3 Error, 4 Warning, 5 Notice, 6 Informational). */
const SYSLOG_SEVERITY: Record<string, number> = { critical: 2, high: 3, medium: 4, low: 5, info: 6 };

/** Escapes an SD-PARAM value: `"`, `\` and `]` get a backslash (RFC 5424 §6.3.3). */
function sdValue(v: string): string {
  return v.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** A header field: printable US-ASCII without spaces, at most `max` characters, or NILVALUE `-`. */
function headerField(v: string, max: number): string {
  const clean = v.replace(/[^!-~]/g, '').slice(0, max);
  return clean || '-';
}

/** Options of {@link formatSyslog}. */
interface SyslogFormatOptions {
  appName: string;
  hostname?: string;
  procId?: string;
  /** Message time. @default now */
  time?: Date;
}

/** One RFC 5424 message (without framing) for `event`. */
function formatSyslog(event: SinkEvent, options: SyslogFormatOptions): string {
  const pri = FACILITY * 8 + (SYSLOG_SEVERITY[event.severity] ?? 6);
  const analytic = event.payload.finding_info.analytic.uid;
  const params: [string, string][] = [
    ['event', event.type],
    ['id', event.subjectId],
    ['severity', event.severity],
    [event.type.startsWith('alert') ? 'ruleId' : 'checkId', analytic],
    ['integrationId', event.integrationId],
    ['deliveryId', event.id],
  ];
  const sd = `[${SYSLOG_SD_ID} ${params.map(([k, v]) => `${k}="${sdValue(v)}"`).join(' ')}]`;
  const time = (options.time ?? new Date()).toISOString();
  return `<${pri}>1 ${time} ${headerField(options.hostname ?? hostname(), 255)} ${headerField(options.appName, 48)} ${headerField(options.procId ?? String(process.pid), 128)} ${headerField(event.type, 32)} ${sd} ${JSON.stringify(event.payload)}`;
}

/** RFC 6587 §3.4.1 octet counting: `MSG-LEN SP SYSLOG-MSG`, the length in bytes. */
function octetFrame(message: string): string {
  return `${Buffer.byteLength(message, 'utf8')} ${message}`;
}

/** Options of {@link syslogSender}. */
export interface SyslogOptions {
  transport: 'udp' | 'tcp' | 'tls';
  host: string;
  port: number;
  appName: string;
  /** Connection and write timeout. @default 10000 */
  timeoutMs?: number;
}

/** Writes all frames over one TCP or TLS connection and closes it; rejects on a connection error or timeout. */
function streamWrite(o: SyslogOptions, frames: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket: Socket =
      o.transport === 'tls'
        ? tlsConnect({ host: o.host, port: o.port, servername: /^[\d.:]+$/.test(o.host) ? undefined : o.host })
        : tcpConnect({ host: o.host, port: o.port });
    socket.setTimeout(o.timeoutMs ?? 10_000, () => socket.destroy(new Error('timed out')));
    socket.once('error', (e) => reject(new Error(`syslog ${o.transport}://${o.host}:${o.port}: ${e.message}`)));
    socket.once(o.transport === 'tls' ? 'secureConnect' : 'connect', () => {
      socket.end(frames.join(''), () => resolve());
    });
  });
}

/** Datagrams handed to the socket at once; the next batch waits until these are sent. */
const UDP_BATCH = 8;

/**
 * Sends each message as one UDP datagram, `UDP_BATCH` at a time: each batch is handed to the kernel and sent before
 * the next one starts, so a burst (a first evaluation's thousands of finding steps) does not overflow the collector's
 * receive buffer at once — UDP has no flow control, and a datagram the collector's buffer cannot hold is dropped
 * silently (RFC 5426 §3.5, congestion: "SHOULD be prepared for loss").
 * @throws Error naming the collector when the socket fails.
 */
async function udpWrite(o: SyslogOptions, messages: string[]): Promise<void> {
  const socket = createSocket(o.host.includes(':') ? 'udp6' : 'udp4');
  const send = (m: string) =>
    new Promise<void>((resolve, reject) =>
      socket.send(Buffer.from(m, 'utf8'), o.port, o.host, (e) => (e ? reject(new Error(`syslog udp://${o.host}:${o.port}: ${e.message}`)) : resolve())),
    );
  try {
    for (let i = 0; i < messages.length; i += UDP_BATCH) {
      await Promise.all(messages.slice(i, i + UDP_BATCH).map(send));
      // Let the event loop turn (and a collector in the same process read) before the next batch.
      if (i + UDP_BATCH < messages.length) await new Promise<void>((r) => setImmediate(r));
    }
  } finally {
    socket.close();
  }
}

/** A sender to a syslog collector. UDP has no acknowledgement: a datagram sent is taken as delivered. */
export function syslogSender(options: SyslogOptions): SinkSender {
  const write = async (events: SinkEvent[]) => {
    const messages = events.map((e) => formatSyslog(e, { appName: options.appName }));
    if (options.transport === 'udp') await udpWrite(options, messages);
    else await streamWrite(options, messages.map(octetFrame));
  };
  return {
    name: 'syslog',
    describe: () => `syslog ${options.transport}://${options.host}:${options.port}`,
    send: (event) => write([event]),
    async sendBatch(events) {
      await write(events);
      return events.map((e) => e.id);
    },
  };
}
