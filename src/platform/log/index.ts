import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { privateDirectory, privateFile, type Tightened } from '../files/index.ts';

export type { Logger } from 'pino';

/**
 * Paths redacted from every log line wherever they appear: credentials and tokens never reach a log
 * (OWASP ASVS 5.0 16.2.5). The HTTP layer also logs only method, URL path and status, never headers or bodies.
 */
const REDACT_PATHS = [
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
 * redacted (`[redacted]`). The `logs` directory is 0700 and `vigil.log` 0600, also when they already existed (wider
 * ones are tightened, and the logger's first lines say so).
 */
export function createLogger(options: LoggerOptions): Logger {
  const targets: pino.StreamEntry[] = [];
  const tightened: Tightened[] = [];
  if (options.dataDir) {
    const dir = join(options.dataDir, 'logs');
    const file = join(dir, 'vigil.log');
    for (const t of [privateDirectory(dir), privateFile(file, { create: true })]) if (t) tightened.push(t);
    targets.push({ level: options.level as pino.Level, stream: pino.destination({ dest: file, sync: true, mkdir: true }) });
  }
  if (options.stderr) targets.push({ level: options.level as pino.Level, stream: pino.destination({ fd: 2, sync: true }) });
  const logger = pino(
    { level: options.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid } },
    targets.length ? pino.multistream(targets) : pino.destination({ dest: '/dev/null', sync: true }),
  );
  for (const t of tightened) logger.warn(t, 'permissions of an existing file tightened to owner-only');
  return logger;
}

/** A logger that discards everything (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
