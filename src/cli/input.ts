import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import { invalidInput } from '../core/errors.ts';
import { idPrefix, pickByPrefix } from '../core/ids.ts';
import { idsStartingWith } from '../store/repositories/integrations.ts';
import type { Database } from '../store/schema.ts';

/**
 * Reads all of standard input once (a secret or password piped in), without its one trailing newline. Secrets are
 * read this way or from a named environment variable, never from an argument, which would show in the process list
 * and shell history.
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Reads a `--limit` value: a whole number of at least 1, written in digits.
 * @throws VigilError `invalid-input` (exit 2): "--limit must be a positive whole number, got 'abc'".
 */
export function parseLimit(raw: string | number | undefined, fallback: number, option = '--limit'): number {
  if (raw === undefined) return fallback;
  const text = String(raw).trim();
  if (!/^[0-9]+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw invalidInput(
      option,
      `${option} must be a positive whole number, got '${String(raw)}'.`,
      `Give a number such as ${fallback}, e.g. ${option} ${fallback}.`,
    );
  }
  return Number(text);
}

/** Options every command that prints a list takes. */
export interface ListOptions {
  /** Raw `--limit` text; read it with {@link parseLimit}. */
  limit?: string;
  wide?: boolean;
  json?: boolean;
}

/**
 * Adds `--limit <n>` (at most n rows, default `defaultLimit`) and `--wide` (whole ids and cells) to a list command.
 * The limit is checked by {@link parseLimit} in the action so the error is reported like every other bad input.
 */
export function listOptions(cmd: Command, defaultLimit: number): Command {
  return cmd.option('--limit <n>', `at most this many (default ${defaultLimit})`).option('--wide', 'whole ids and cells, not fitted to the terminal');
}

/**
 * The full id a user means by `input`: itself when it is an id, else the one id of `table` starting with it (the short
 * ids lists show, `fnd_3f2a9b1c`, or just their digits). Returns `input` unchanged when nothing starts with it, for the
 * caller's own "not found" (exit 4).
 * @throws VigilError `invalid-input` / `AMBIGUOUS_ID` (exit 2) when several ids start with it, listing them.
 */
export async function resolveId(
  db: Kysely<Database>,
  table: 'findings' | 'alerts' | 'collection_runs',
  kind: 'fnd' | 'alr' | 'run',
  input: string,
  field: string,
): Promise<string> {
  const prefix = idPrefix(input, kind);
  if (!prefix) return input;
  return pickByPrefix(prefix, await idsStartingWith(db, table, prefix), { field, kind: field }) ?? input;
}

/**
 * The rows a list command prints: at most `--limit` when given; otherwise everything with `--json` (scripts get the
 * whole list, as before `--limit` existed) and `defaultLimit` for people, with a line saying how many were left out.
 * @returns the rows to print and that line (undefined when nothing was left out).
 */
export function limitRows<T>(rows: readonly T[], opts: ListOptions, defaultLimit: number): { rows: T[]; more?: string } {
  const limit = opts.limit !== undefined ? parseLimit(opts.limit, defaultLimit) : opts.json ? Infinity : defaultLimit;
  if (rows.length <= limit) return { rows: [...rows] };
  return { rows: rows.slice(0, limit), more: `… ${rows.length - limit} more (showing ${limit} of ${rows.length}; --limit ${rows.length} shows all)` };
}

/** Page size the CLI reads lists in (the API's largest). */
const PAGE_SIZE = 500;

/**
 * Every item of a paged use case (src/reporting), read a page of {@link PAGE_SIZE} at a time from the first: the CLI
 * lists what the API pages, then {@link limitRows} decides what to print.
 */
export async function allPages<T>(
  read: (page: { cursor: string | undefined; limit: number }) => Promise<{ items: T[]; nextCursor: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read({ cursor, limit: PAGE_SIZE });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return items;
}
