import type { AuditEvent } from '../../core/audit.ts';
import type { Executor } from '../db.ts';
import type { AuditEventsTable } from '../schema.ts';
import { SegmentRecords } from '../segmentRecords.ts';
import { toEventColumns } from './audit.ts';

/** Stored events with their raw records read on demand (the detections' pages). */

/**
 * Raw segments kept from one {@link withLazyRaw} call to the next (segment key → its records, read on demand):
 * consecutive pages of events share the segments at their edges. Each call leaves in it only the segments its own
 * rows use, so it holds at most one page's segments (compressed, or decompressed once a record was read: ≈ 0.7 MB each);
 * the decompressed bytes of those it drops are freed then ({@link SegmentRecords.release}). An event of an earlier page
 * still reads its raw record (its segment is decompressed again).
 */
export type LazySegmentCache = Map<string, SegmentRecords>;

/**
 * Turns stored event rows back into events whose `raw` record is parsed from its segment when first read (then kept
 * on the event), as {@link withRaw} gives them without parsing the records nobody reads. `raw` is an
 * enumerable getter: spreading an event or serialising it reads it. The segments are read here, in groups of 200; a
 * segment is decompressed only when one of its records is read ({@link SegmentRecords}).
 * @throws Error when a segment is missing, or does not hold the row's position (the database was altered outside
 *   Vigil); reading `raw` throws the same error when the record is missing or not JSON, or the segment's bytes are
 *   damaged.
 */
export async function withLazyRaw(db: Executor, rows: AuditEventsTable[], cache: LazySegmentCache): Promise<AuditEvent[]> {
  const wanted = new Set(rows.map((r) => `${r.integration_id}\u0000${r.raw_segment_id}`));
  for (const [k, segment] of cache)
    if (!wanted.has(k)) {
      segment.release();
      cache.delete(k);
    }
  const keys = [...wanted].filter((k) => !cache.has(k));
  const records = new Map<string, number>();
  for (let i = 0; i < keys.length; i += 200) {
    const part = keys.slice(i, i + 200).map((k) => k.split('\u0000') as [string, string]);
    const found = await db
      .selectFrom('audit_raw_segments')
      .select(['integration_id', 'id', 'codec', 'records', 'data'])
      .where((eb) => eb.or(part.map(([integrationId, id]) => eb.and([eb('integration_id', '=', integrationId), eb('id', '=', id)]))))
      .execute();
    for (const s of found) {
      const key = `${s.integration_id}\u0000${s.id}`;
      cache.set(key, new SegmentRecords(s.codec, s.data));
      records.set(key, s.records);
    }
  }
  return rows.map((r) => {
    const key = `${r.integration_id}\u0000${r.raw_segment_id}`;
    const segment = cache.get(key);
    const count = records.get(key);
    const { id, raw_segment_id: segmentId, raw_index: index } = r;
    const missing = () => new Error(`The raw record of audit event ${id} is missing (segment ${segmentId}, position ${index}).`);
    if (!segment || (count !== undefined && index >= count)) throw missing();
    let raw: Record<string, unknown> | undefined;
    return {
      ...toEventColumns(r),
      get raw(): Record<string, unknown> {
        if (raw) return raw;
        const parsed = segment.record(index);
        if (!parsed) throw missing();
        return (raw = parsed as Record<string, unknown>);
      },
    };
  });
}

/**
 * Turns stored event rows back into events with their raw records read (reports, an alert's events): the events of
 * {@link withLazyRaw} with every `raw` read at once, the segments' bytes freed afterwards.
 * @throws Error when a segment is missing, does not hold a row's position, or its bytes are damaged (the database was
 *   altered outside Vigil).
 */
export async function withRaw(db: Executor, rows: AuditEventsTable[]): Promise<AuditEvent[]> {
  const cache: LazySegmentCache = new Map();
  try {
    return (await withLazyRaw(db, rows, cache)).map((e) => ({ ...e }));
  } finally {
    for (const segment of cache.values()) segment.release();
  }
}
