import { isVigilError, type ErrorKind } from '../core/errors.ts';

/**
 * Rendering helpers shared by commands: JSON for scripts, short text for people, and the exit codes of
 * `vigil --help`.
 */

/** Exit codes, documented in `vigil --help`. */
export const EXIT = {
  ok: 0,
  internal: 1,
  invalidInput: 2,
  /** Microsoft Entra ID or an upstream refused the credentials or a permission; nothing was saved. */
  denied: 3,
  notFound: 4,
  conflict: 5,
  /** An upstream failed after retries, or a collection failed. */
  upstream: 6,
} as const;

const KIND_EXIT: Record<ErrorKind, number> = {
  'invalid-input': EXIT.invalidInput,
  configuration: EXIT.invalidInput,
  authentication: EXIT.denied,
  authorization: EXIT.denied,
  'not-found': EXIT.notFound,
  conflict: EXIT.conflict,
  upstream: EXIT.upstream,
  internal: EXIT.internal,
};

/** Text of the exit codes for `--help`. */
export const EXIT_CODES_HELP = `
Exit codes:
  0  success (gaps such as missing permissions are reported, not failed)
  1  internal error (a bug: please report it with the log in <data dir>/logs)
  2  invalid input, usage or configuration (the message names the field, option or variable and the fix)
  3  credentials or permissions refused by Microsoft Entra ID or an upstream (nothing was saved)
  4  not found (an integration, organization, finding … by id or name)
  5  conflict (already exists, a collection is already running, or the port is in use)
  6  upstream failure after retries or an unreachable host, or a failed collection`;

/** Writes a value as one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Writes lines on stdout. */
export function print(...lines: string[]): void {
  process.stdout.write(lines.join('\n') + '\n');
}

/**
 * Reports an error (JSON on stdout with `--json`, text on stderr otherwise) and returns the exit code.
 * Only VigilError messages are shown in full; anything else is reported as an internal error.
 */
export function reportError(e: unknown, json: boolean): number {
  if (isVigilError(e)) {
    if (json) printJson({ error: e.toJSON() });
    else {
      process.stderr.write(`error: ${e.message}${e.field ? ` [${e.field}]` : ''}\n`);
      if (e.remediation) process.stderr.write(`  fix: ${e.remediation}\n`);
    }
    return KIND_EXIT[e.kind];
  }
  const message = (e as Error)?.message ?? String(e);
  if (json) printJson({ error: { code: 'INTERNAL', kind: 'internal', message } });
  else process.stderr.write(`internal error: ${message}\n`);
  return EXIT.internal;
}

/** Pads a table of rows into aligned columns. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
