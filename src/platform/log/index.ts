import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths redacted from every log line wherever they appear: credentials and tokens never reach a log
 * (OWASP ASVS 5.0 16.2.5). The HTTP layer also logs only method, URL path and status, never headers or bodies.
 */
export const REDACT_PATHS = [
  'secret',
  'clientSecret',
  'client_secret',
  'password',
  'token',
  'accessToken',
  'access_token',
  'authorization',
  'headers.authorization',
  '*.secret',
  '*.clientSecret',
  '*.client_secret',
  '*.password',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.authorization',
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  level: string;
  /** When set, JSON lines are appended to `<dataDir>/logs/vigil.log`. */
  dataDir?: string;
  /** Also write to stderr (file descriptor 2). */
  stderr?: boolean;
}

/**
 * A pino logger writing JSON lines to the data directory's log file and, when asked, to stderr, with secrets
 * redacted (`[redacted]`).
 */
export function createLogger(options: LoggerOptions): Logger {
  const targets: pino.StreamEntry[] = [];
  if (options.dataDir) {
    const dir = join(options.dataDir, 'logs');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    targets.push({ level: options.level as pino.Level, stream: pino.destination({ dest: join(dir, 'vigil.log'), sync: true, mkdir: true }) });
  }
  if (options.stderr) targets.push({ level: options.level as pino.Level, stream: pino.destination({ fd: 2, sync: true }) });
  return pino(
    { level: options.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid } },
    targets.length ? pino.multistream(targets) : pino.destination({ dest: '/dev/null', sync: true }),
  );
}

/** A logger that discards everything (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
