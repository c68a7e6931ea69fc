import { describe, expect, it } from 'vitest';
import { SegmentRecords } from '../../src/store/segmentRecords.ts';
import { decodeSegment, encodeSegment, RAW_CODEC } from '../../src/store/segments.ts';

/** The detections read raw records one at a time from their segment (store/segmentRecords.ts): each must be what decodeSegment gives. */
describe('a raw segment read record by record', () => {
  const same = async (text: string) => {
    const data = await encodeSegment(text);
    const whole = decodeSegment(RAW_CODEC, data);
    const segment = new SegmentRecords(RAW_CODEC, data);
    const one = Array.from({ length: whole.length + 2 }, (_, i) => segment.record(i));
    expect(one, text.slice(0, 80)).toEqual([...whole, undefined, undefined]);
    expect(segment.record(-1)).toBeUndefined();
  };

  it('gives each record as decodeSegment does, whatever the records hold', async () => {
    await same('[]');
    await same(' [ ] ');
    await same('[{"Id":"a","CreationTime":"2026-11-25T10:00:00","Nested":{"x":[1,{"y":"]}"}]}}, {"Id":"b"}]');
    await same('[1, "a,]", {"x":[1,{}]}, null, true, -2.5e3, [[]]]');
    await same('[{"Text":"a \\"quoted\\" value, with \\\\ and \\\\\\" and \\u0000 and \\u00e9"}]');
    await same('\n[\n  {"Id": "x"} ,\n  {"Id": "y"}\n]\n');
    await same('[{"UserId":"zoë@contoso.com","Name":"日本語 ✓ 😀","Q":"\\""}, {"A":"\\\\"}]');
    await same(JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ Id: `id-${i}`, Path: 'C:\\dir\\', Quote: '"' + '\\'.repeat(i % 4), Comma: ',]}' }))));
  });

  it('decompresses only when a record is read, and refuses an unknown codec or damaged bytes then', async () => {
    expect(new SegmentRecords('zz', Buffer.from('x')) instanceof SegmentRecords).toBe(true);
    expect(() => new SegmentRecords('zz', Buffer.from('x')).record(0)).toThrow(/codec 'zz'/);
    expect(() => new SegmentRecords(RAW_CODEC, Buffer.from('not brotli')).record(0)).toThrow();
    expect(new SegmentRecords(RAW_CODEC, await encodeSegment('{"Id":"a"}')).record(0)).toBeUndefined();
  });

  it('frees its decompressed bytes when released, and reads its records again after', async () => {
    const segment = new SegmentRecords(RAW_CODEC, await encodeSegment('[{"Id":"a"},{"Id":"b"}]'));
    segment.release();
    expect(segment.record(1)).toEqual({ Id: 'b' });
    segment.release();
    segment.release();
    expect(segment.record(0)).toEqual({ Id: 'a' });
  });
});
