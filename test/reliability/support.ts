import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { withRaw } from '../../src/store/repositories/auditRaw.ts';
import type { Database } from '../../src/store/schema.ts';
import { vigil } from '../support/process.ts';
import { INVENTORY as CORE_INVENTORY } from '../e2e/harness.ts';

/**
 * The crash-recovery suite's parts: a seeded random source (the seed is printed, and `VIGIL_RELIABILITY_SEED`
 * replays it), data directories copied from a template, the real CLI killed by its own `VIGIL_TEST_KILL_AFTER_PAGES`
 * hook and resumed with the same command, and dumps of what a database holds without the per-run noise (ids of runs,
 * segments and alerts, timestamps).
 */

/** The suite's seed: `VIGIL_RELIABILITY_SEED` when set (to replay a failure), else a fresh one. */
export function suiteSeed(): number {
  const given = process.env.VIGIL_RELIABILITY_SEED;
  return given ? Number(given) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
}

/** mulberry32: a small seeded generator of floats in [0, 1). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fresh copy of a (closed) data directory: the SQLite file, its WAL if any, and the master key. */
export function copyDataDir(template: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'vigil-rel-')), 'data');
  cpSync(template, dir, { recursive: true });
  return dir;
}

/** Removes a data directory made by {@link copyDataDir}. */
function removeDataDir(dir: string): void {
  rmSync(join(dir, '..'), { recursive: true, force: true });
}

type Row = Record<string, unknown>;

/** Inventory tables and their sort keys: the core six and `estate_objects`. */
const INVENTORY: { table: keyof Database; order: string[] }[] = [...CORE_INVENTORY, { table: 'estate_objects', order: ['stream', 'id'] }];

/** Attributes that tell when an object was read, not what it is: the Power BI scan's `scannedAt`. */
const READ_TIME_ATTRS = ['scannedAt'];

function withoutReadTime(row: Row): Row {
  if (typeof row.attrs !== 'string') return {};
  const attrs = JSON.parse(row.attrs) as Record<string, unknown>;
  for (const k of READ_TIME_ATTRS) delete attrs[k];
  return { attrs: JSON.stringify(attrs) };
}

/**
 * Every inventory row (the six core tables and `estate_objects`) with its columns, raw JSON and deleted flag, and
 * every check result and finding as (check, resource, status): what a collection stored, ignoring run ids and
 * timestamps (and the instant a Power BI scan ran). Two databases holding the same inventory dump equal.
 */
export async function dumpCollection(db: Kysely<Database>): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const { table, order } of INVENTORY) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let q = (db as any).selectFrom(table).selectAll();
    for (const o of order) q = q.orderBy(o);
    const rows = (await q.execute()) as Row[];
    out[table] = rows.map(({ integration_id: _i, first_seen_at: _f, last_seen_at: _l, last_seen_run: _r, deleted_at, ...rest }) => ({
      ...rest,
      ...withoutReadTime(rest),
      deleted: deleted_at !== null,
    }));
  }
  out.check_results = await db.selectFrom('check_results').select(['check_id', 'resource_id', 'status']).orderBy('check_id').orderBy('resource_id').execute();
  out.findings = await db.selectFrom('findings').select(['check_id', 'resource_id', 'status']).orderBy('check_id').orderBy('resource_id').execute();
  return out;
}

/**
 * Every stored audit event with its columns and its raw record as received, every alert with its linked events, and
 * the client IPs the detections learnt per user: what audit ingestion stored, ignoring segment and alert ids and
 * timestamps of ingestion (cursor instants follow the wall clock and are left out).
 */
export async function dumpAudit(db: Kysely<Database>): Promise<Record<string, Row[]>> {
  const rows = await db.selectFrom('audit_events').selectAll().orderBy('id').execute();
  const events = await withRaw(db, rows);
  const alerts = await db.selectFrom('alerts').selectAll().orderBy('rule_id').orderBy('dedupe_key').execute();
  const links = await db.selectFrom('alert_events').selectAll().execute();
  return {
    audit_events: events.map((e) => ({ ...e, raw: JSON.stringify(e.raw) })),
    alerts: alerts.map((a) => ({
      rule_id: a.rule_id,
      severity: a.severity,
      status: a.status,
      title: a.title,
      dedupe_key: a.dedupe_key,
      detail: a.detail,
      window_start: a.window_start,
      window_end: a.window_end,
      events: links
        .filter((l) => l.alert_id === a.id)
        .map((l) => l.event_id)
        .sort(),
    })),
    audit_user_ips: await db
      .selectFrom('audit_user_ips')
      .select(['user_key', 'client_ip', 'first_seen', 'last_seen'])
      .orderBy('user_key')
      .orderBy('client_ip')
      .execute(),
    audit_cursors: await db.selectFrom('audit_cursors').select(['content_type', 'subscription', 'last_error']).orderBy('content_type').execute(),
  };
}

/**
 * How two dumps differ, table by table, in a few words: rows only in one of them, and rows whose deleted flag
 * differs (the signature of a wrong deletion). Empty when they are equal.
 */
function describeDifference(reference: Record<string, Row[]>, actual: Record<string, Row[]>): string[] {
  const out: string[] = [];
  for (const table of Object.keys(reference)) {
    const ref = reference[table] ?? [];
    const act = actual[table] ?? [];
    const key = (r: Row) => JSON.stringify({ ...r, deleted: undefined });
    const refByKey = new Map(ref.map((r) => [key(r), r]));
    const actByKey = new Map(act.map((r) => [key(r), r]));
    const flagged = [...refByKey].filter(([k, r]) => actByKey.has(k) && actByKey.get(k)!.deleted !== r.deleted);
    const wronglyDeleted = flagged.filter(([k]) => actByKey.get(k)!.deleted === true).length;
    const onlyRef = [...refByKey.keys()].filter((k) => !actByKey.has(k)).length;
    const onlyAct = [...actByKey.keys()].filter((k) => !refByKey.has(k)).length;
    const parts: string[] = [];
    if (wronglyDeleted) parts.push(`${wronglyDeleted} marked deleted`);
    if (flagged.length - wronglyDeleted) parts.push(`${flagged.length - wronglyDeleted} live that should be deleted`);
    if (onlyRef) parts.push(`${onlyRef} missing`);
    if (onlyAct) parts.push(`${onlyAct} extra`);
    if (parts.length) out.push(`${table}: ${parts.join(', ')}`);
  }
  return out;
}

/** One SIGKILL of the suite and what came of it. */
export interface KillOutcome {
  /** The stored page (or blob) after which the process killed itself. */
  page: number;
  /** True when the process died by SIGKILL (not by finishing first). */
  killed: boolean;
  /** Processes started to finish the work after the kill (1 when the first resume completed). */
  resumes: number;
  /** How the resumed database differs from the reference; empty when equal. */
  difference: string[];
}

/** What {@link killAndResume} needs. */
export interface KillRun {
  /** Data directory to copy for the attempt (closed). */
  template: string;
  /** The CLI command, e.g. ['collect', id, '--json']. */
  args: string[];
  /** Environment of every process (endpoints file, page sizes); the data directory and the hook are added. */
  env: Record<string, string>;
  page: number;
  reference: Record<string, Row[]>;
  /** Opens a data directory, dumps it, closes it. */
  dump: (dataDir: string) => Promise<Record<string, Row[]>>;
}

/**
 * Runs the command on a copy of the template with `VIGIL_TEST_KILL_AFTER_PAGES=page` (the process SIGKILLs itself
 * right after that stored page), then the same command without the hook until it exits 0 (at most 3 times), and
 * compares the database with the reference.
 */
export async function killAndResume(run: KillRun): Promise<KillOutcome> {
  const dataDir = copyDataDir(run.template);
  try {
    const env = { ...run.env, VIGIL_DATA_DIR: dataDir };
    const first = await vigil(run.args, { ...env, VIGIL_TEST_KILL_AFTER_PAGES: String(run.page) });
    const killed = first.code === null;
    if (!killed && first.code !== 0) throw new Error(`vigil ${run.args.join(' ')} failed before its kill (exit ${first.code}): ${first.stderr}${first.stdout}`);
    let resumes = 0;
    while (killed) {
      const r = await vigil(run.args, env);
      resumes++;
      if (r.code === 0) break;
      if (resumes === 3) throw new Error(`vigil ${run.args.join(' ')} did not complete after 3 resumes (exit ${r.code}): ${r.stderr}${r.stdout}`);
    }
    return { page: run.page, killed, resumes, difference: describeDifference(run.reference, await run.dump(dataDir)) };
  } finally {
    removeDataDir(dataDir);
  }
}

/** Runs `tasks` with at most `limit` at once, keeping their order in the result. */
export async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

/** A one-line report of a scenario: seed, kills, divergences and the pages they happened at. */
export function report(name: string, seed: number, outcomes: KillOutcome[], pages: number, ms: number): string {
  const diverged = outcomes.filter((o) => o.difference.length > 0);
  const lines = [
    `[reliability] ${name}: seed ${seed}, ${outcomes.filter((o) => o.killed).length} SIGKILLs at random pages of ${pages}, ${diverged.length} diverged from the uninterrupted run (${(ms / 1000).toFixed(1)} s)`,
    ...diverged.map((o) => `  killed after page ${o.page}: ${o.difference.join('; ')}`),
  ];
  return lines.join('\n');
}
