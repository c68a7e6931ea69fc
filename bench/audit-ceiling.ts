/**
 * Baseline of bench/audit.ts: the store's insert ceiling for the rows Vigil stored. Copies the schema of
 * `audit_events` and `audit_raw_segments` (tables and indexes, as SQLite holds them, foreign keys dropped) from
 * Vigil's database into an empty one, reads every row into memory, then inserts them through better-sqlite3 with one
 * prepared statement per table and 10,000 rows per transaction, in WAL mode with `synchronous = NORMAL` as Vigil
 * runs. Only the inserts and commits are timed.
 *
 * Run by bench/audit.ts: node bench/audit-ceiling.ts <vigil.db> <new.db>. Prints one JSON line: events, segments,
 * seconds.
 */
import Database from 'better-sqlite3';

const [from, to] = process.argv.slice(2) as [string, string];
const src = new Database(from, { readonly: true });
const dst = new Database(to);
dst.pragma('journal_mode = WAL');
dst.pragma('synchronous = NORMAL');
const TABLES = ['audit_raw_segments', 'audit_events'];
for (const t of TABLES) {
  const rows = src.prepare("select type, sql from sqlite_master where tbl_name = ? and sql is not null order by type = 'table' desc").all(t) as {
    sql: string;
  }[];
  for (const { sql } of rows) dst.exec(sql.replace(/\s+references\s+"?\w+"?\s*\([^)]*\)(\s+on delete cascade)?/gi, ''));
}

let seconds = 0;
const counts: Record<string, number> = {};
for (const t of TABLES) {
  const rows = src.prepare(`select * from ${t}`).raw().all() as unknown[][];
  counts[t] = rows.length;
  const columns = (src.prepare(`select * from ${t} limit 1`).columns() as { name: string }[]).map((c) => c.name);
  const insert = dst.prepare(`insert into ${t} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  const chunk = dst.transaction((part: unknown[][]) => {
    for (const r of part) insert.run(r);
  });
  const started = performance.now();
  for (let i = 0; i < rows.length; i += 10_000) chunk(rows.slice(i, i + 10_000));
  seconds += (performance.now() - started) / 1000;
}
src.close();
dst.close();
process.stdout.write(JSON.stringify({ events: counts.audit_events, segments: counts.audit_raw_segments, seconds }) + '\n');
