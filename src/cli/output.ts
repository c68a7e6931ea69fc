import Table from 'cli-table3';
import pc from 'picocolors';
import { EXIT, exitCodeOf } from '../core/error-catalogue.ts';
import { isVigilError } from '../core/errors.ts';
import { actionOf, flagOf } from './flags.ts';

/**
 * Rendering helpers shared by commands: JSON for scripts, short text for people, and the exit codes of
 * `vigil --help`.
 */

/** Exit codes, documented in `vigil --help` (the catalogue derives them from error kinds). */
export { EXIT };

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
 * Reports an error (JSON on stdout with `--json`, text on stderr otherwise) with fields named by their flags, and
 * returns the exit code. Only VigilError messages are shown in full; anything else is reported as an internal error.
 */
export function reportError(e: unknown, json: boolean): number {
  if (isVigilError(e)) {
    const shown = e.render(flagOf, actionOf);
    if (json) printJson({ error: shown });
    else {
      process.stderr.write(`error: ${shown.message}${shown.field ? ` [${shown.field}]` : ''}\n`);
      if (shown.remediation) process.stderr.write(`  fix: ${shown.remediation}\n`);
    }
    return exitCodeOf(e.kind);
  }
  const message = (e as Error)?.message ?? String(e);
  if (json) printJson({ error: { code: 'INTERNAL', kind: 'internal', message } });
  else process.stderr.write(`internal error: ${message}\n`);
  return EXIT.internal;
}

/**
 * Width of text tables when standard output is not a terminal (a pipe, a file, a CI log) and `COLUMNS` is not set:
 * 120 characters, what CI log viewers and most editors show without wrapping. `--wide` prints cells whole, `--json`
 * prints every field.
 */
export const NON_TTY_WIDTH = 120;

/**
 * Characters available for a line on `stream`: its columns on a terminal, else `COLUMNS` when set (shells export it
 * and `COLUMNS=200 vigil findings | less` works), else {@link NON_TTY_WIDTH}. Never less than 40.
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = Number(env.COLUMNS);
  const w = stream.isTTY && stream.columns ? stream.columns : Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : NON_TTY_WIDTH;
  return Math.max(40, w);
}

/** Visible length of a cell (ANSI colour codes do not count). */
function visible(s: string): number {
  // eslint-disable-next-line no-control-regex
  return [...s.replace(/\x1b\[[0-9;]*m/g, '')].length;
}

/** Columns are this far apart. */
const GAP = 2;

/**
 * Column widths that fit `width`: the natural widths (widest cell of each column) when they fit; otherwise the widest
 * shrinkable column is narrowed, one character at a time, until the line fits or every shrinkable column is at its
 * floor (its header, at least 8 characters, or its natural width when narrower). Cells wider than their column are
 * cut with an ellipsis by the table.
 * @param natural widest cell per column, characters
 * @param floors narrowest width per column
 * @param shrinkable which columns may be narrowed (indexes)
 */
export function fitWidths(natural: readonly number[], floors: readonly number[], width: number, shrinkable: readonly number[]): number[] {
  const w = [...natural];
  const total = () => w.reduce((a, b) => a + b, 0) + GAP * (w.length - 1);
  while (total() > width) {
    let pick = -1;
    for (const i of shrinkable) if (w[i]! > floors[i]! && (pick < 0 || w[i]! > w[pick]!)) pick = i;
    if (pick < 0) break;
    w[pick]!--;
  }
  return w;
}

/** Options of {@link table}. */
export interface TableOptions {
  /** Line width, characters. @default {@link terminalWidth} */
  width?: number;
  /** Print every cell whole (`--wide`). */
  wide?: boolean;
  /**
   * Free-text columns, cut first, by index. The other columns (ids, names people type) are cut only when the line
   * still does not fit, and the first column never. @default every column but the first
   */
  shrink?: readonly number[];
}

const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: ' '.repeat(GAP),
};

/**
 * Lays out rows (the first is the header) as borderless, left-aligned columns with cli-table3, fitted to the terminal
 * width ({@link fitWidths}): long text is cut with "…" instead of wrapping the line. Colour codes in cells are kept
 * and not counted.
 */
export function table(rows: string[][], options: TableOptions = {}): string {
  if (rows.length === 0) return '';
  const columns = Math.max(...rows.map((r) => r.length));
  const natural = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((r) => visible(r[i] ?? ''))));
  const floors = natural.map((n, i) => Math.min(n, Math.max(8, visible(rows[0]![i] ?? ''))));
  const width = options.width ?? terminalWidth();
  const rest = natural.map((_, i) => i).slice(1);
  let widths = natural;
  if (!options.wide) {
    widths = fitWidths(natural, floors, width, options.shrink ?? rest);
    if (options.shrink) widths = fitWidths(widths, floors, width, rest);
  }
  const t = new Table({
    chars: BORDERLESS,
    style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
    colWidths: widths.map((w) => Math.max(1, w)),
    wordWrap: false,
  });
  for (const r of rows) t.push(Array.from({ length: columns }, (_, i) => r[i] ?? ''));
  return t
    .toString()
    .split('\n')
    .map((l) => l.replace(/ +$/, ''))
    .join('\n');
}

/**
 * Whether to colour text written to `stream`: never when `NO_COLOR` is set to anything non-empty (no-color.org) or
 * `TERM=dumb`; always when `FORCE_COLOR` is set (and not `0`); otherwise only on a terminal.
 */
export function colorEnabled(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/** The colour functions of picocolors. */
export type Colors = ReturnType<typeof pc.createColors>;

/** picocolors functions, switched off per {@link colorEnabled} for standard output. */
export function colors(enabled = colorEnabled()): Colors {
  return pc.createColors(enabled);
}

/** A severity (critical, high, medium, low, info) in its colour: critical bold red, high red, medium yellow, low cyan, info dim. */
export function severityText(severity: string, c: Colors = colors()): string {
  switch (severity) {
    case 'critical':
      return c.bold(c.red(severity));
    case 'high':
      return c.red(severity);
    case 'medium':
      return c.yellow(severity);
    case 'low':
      return c.cyan(severity);
    default:
      return c.dim(severity);
  }
}

/**
 * Wraps `text` at word boundaries to lines of at most `width` characters (words longer than that stay whole), each
 * line but the first starting with `indent`.
 */
export function wrap(text: string, width: number, indent = ''): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const limit = width - (lines.length ? indent.length : 0);
    if (line && line.length + 1 + word.length > limit) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l, i) => (i ? indent + l : l)).join('\n');
}
