import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { VigilError } from '../core/errors.ts';
import { privateFile } from '../platform/files/index.ts';

/** Lock file of `vigil serve` in a SQLite data directory (a SQLite database held with an exclusive lock). */
const SERVE_LOCK_FILE = 'serve.lock';
/** Beside the lock: the pid and start time of the process that holds it, for the refusal message. */
const SERVE_PID_FILE = 'serve.pid';

/** A held lock; `release()` lets the next `vigil serve` start. */
export interface ServeLock {
  release(): void;
}

/**
 * Makes this process the only `vigil serve` of a SQLite data directory (issue 14, point 8): two would run the same
 * scheduled collections and in-process workers on one database. PostgreSQL deployments run many `vigil serve`
 * processes by design (the queue's singleton keys keep collections apart) and take no lock.
 *
 * The lock is an operating-system file lock, not a pid check: `<dataDir>/serve.lock` is a SQLite database opened in
 * exclusive locking mode and written once, so SQLite holds its exclusive (POSIX advisory) lock until the connection
 * closes — and the kernel drops it when the process dies, SIGKILL included, so a stale lock from a dead process is
 * taken over by the next start with no pid guessing and no race between two starts. `serve.pid` beside it names the
 * holder for the message. Source: https://sqlite.org/pragma.html#pragma_locking_mode, https://sqlite.org/lockingv3.html.
 * @throws VigilError `conflict` / `SERVE_ALREADY_RUNNING` naming the pid of the running `vigil serve`.
 */
export function acquireServeLock(dataDir: string): ServeLock {
  const lockPath = join(dataDir, SERVE_LOCK_FILE);
  const pidPath = join(dataDir, SERVE_PID_FILE);
  privateFile(lockPath, { create: true });
  const db = new SQLite(lockPath, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, started_at TEXT NOT NULL); DELETE FROM holder; COMMIT;');
    db.prepare('INSERT INTO holder (pid, started_at) VALUES (?, ?)').run(process.pid, new Date().toISOString());
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    let holder = 'another process';
    try {
      const [pid, startedAt] = readFileSync(pidPath, 'utf8').trim().split(' ');
      holder = `process ${pid}${startedAt ? `, started ${startedAt}` : ''}`;
    } catch {
      // The holder has not written its pid yet: the generic wording stands.
    }
    throw new VigilError(
      'SERVE_ALREADY_RUNNING',
      `Another vigil serve (${holder}) is already using the data directory ${dataDir}; two would run the same collections on one SQLite database.`,
      {
        field: 'VIGIL_DATA_DIR',
        remediation:
          'Stop the other vigil serve first, or give this one its own data directory (VIGIL_DATA_DIR). To run several vigil serve processes on one database, use PostgreSQL (DATABASE_URL).',
      },
    );
  }
  writeFileSync(pidPath, `${process.pid} ${new Date().toISOString()}\n`, { mode: 0o600 });
  return {
    release() {
      try {
        if (readFileSync(pidPath, 'utf8').startsWith(`${process.pid} `)) rmSync(pidPath, { force: true });
      } catch {
        // Already gone.
      }
      db.close();
    },
  };
}
