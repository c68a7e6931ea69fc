import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { VigilError } from '../../core/errors.ts';

/**
 * Private files of the data directory (issue 14, point 8): the SQLite database with its WAL and shared-memory files,
 * the log, the key file and the serve lock hold tenant data or secrets, so they are readable by their owner only —
 * files 0600, directories 0700 — whatever the umask, and also when the data directory already existed (`mkdir`'s mode
 * applies only to a directory it creates; `open`'s mode only to a file it creates). Existing files and directories
 * that are wider are tightened, and the caller logs it — except a sticky directory (such as /tmp) or a path owned by
 * another user, which are left as they are.
 *
 * SQLite creates a database's `-wal`, `-shm` and `-journal` files with the permissions of the database file
 * (https://sqlite.org/tempfiles.html; os_unix.c findCreateFileMode), so a database created or tightened here keeps
 * its companions private too.
 */

/** Mode of a private file. */
const PRIVATE_FILE_MODE = 0o600;
/** Mode of a private directory. */
const PRIVATE_DIRECTORY_MODE = 0o700;

/** A path whose permissions were tightened, with its mode before (octal digits, e.g. `644`). */
export interface Tightened {
  path: string;
  previousMode: string;
}

function tighten(path: string, mode: number): Tightened | undefined {
  const st = statSync(path);
  const previous = st.mode & 0o777;
  if ((previous & ~mode) === 0) return undefined;
  // Never a shared directory (sticky bit: /tmp and the like) nor a path someone else owns: not ours to change.
  if (st.mode & 0o1000 || (process.getuid && st.uid !== process.getuid())) return undefined;
  chmodSync(path, previous & mode);
  return { path, previousMode: previous.toString(8) };
}

/**
 * Makes `path` a directory readable by its owner only: created with mode 0700 (with its parents) when missing,
 * tightened to at most 0700 when it exists with wider permissions.
 * @returns what was tightened, or undefined.
 */
export function privateDirectory(path: string): Tightened | undefined {
  makeDirectories(resolve(path));
  return tighten(path, PRIVATE_DIRECTORY_MODE);
}

/**
 * Creates `path` and its missing parents (mode 0700), one level at a time from the nearest existing ancestor.
 * Not `mkdirSync(…, { recursive: true })`: under a pseudo file system such as /proc, `mkdir` answers ENOENT while the
 * parent exists, and Node's recursive mkdir then retries the parent and the child forever (the process hangs).
 * @throws VigilError `DATA_DIR_UNUSABLE` naming the path and the reason (a file in the way, no permission, a file
 *   system that takes no directories).
 */
function makeDirectories(path: string): void {
  const missing: string[] = [];
  let at = path;
  for (;;) {
    let st;
    try {
      st = statSync(at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw unusable(path, at, e);
      missing.unshift(at);
      at = dirname(at);
      continue;
    }
    if (!st.isDirectory()) throw unusable(path, at, undefined, 'is a file, not a directory');
    break;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode: PRIVATE_DIRECTORY_MODE });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw unusable(path, dir, e);
    }
  }
}

function unusable(path: string, at: string, cause: unknown, reason?: string): VigilError {
  const why = reason ?? (cause as NodeJS.ErrnoException | undefined)?.code ?? String(cause);
  return new VigilError('DATA_DIR_UNUSABLE', `Cannot create the directory ${path}: ${at} ${reason ?? `could not be created (${why})`}.`, {
    field: 'dataDir',
    cause,
  });
}

/**
 * Makes `path` a file readable by its owner only: created empty with mode 0600 when missing and `create` is set,
 * tightened to at most 0600 when it exists with wider permissions; a missing file is left missing otherwise (also one
 * removed by another process while it is looked at).
 * @returns what was tightened, or undefined.
 */
export function privateFile(path: string, options: { create: boolean }): Tightened | undefined {
  if (!existsSync(path)) {
    if (!options.create) return undefined;
    closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  }
  try {
    return tighten(path, PRIVATE_FILE_MODE);
  } catch (e) {
    // Gone since it was seen: SQLite removes `-wal` and `-shm` when another process closes the database's last
    // connection, which can happen between the two calls (seen in CI with CLI commands run at once).
    if (!options.create && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
