import { decompressSegment } from './segments.ts';

/**
 * One raw segment (store/segments.ts: a content blob's JSON array, compressed) read record by record: the bytes are
 * decompressed when a record is first asked for, the array's top-level elements located once by a byte scan, and
 * only the records asked for are parsed. Parsing a whole segment to read a few of its records made the detections
 * parse every record of every segment they touched (≈ 1.5 GB of JSON at 1,000,000 audit records, 2.2 × the records
 * they read) and keep the parsed arrays across pages, which V8 promoted to its old generation: hundreds of MiB of
 * garbage between collections (issue 18, bench:audit).
 *
 * A record parsed alone is the value the whole array's `JSON.parse` gives at its position: an element's bytes are
 * the bytes between two top-level separators, UTF-8 decoding breaks only at those ASCII bytes, and JSON values do not
 * depend on what surrounds them.
 */
export class SegmentRecords {
  readonly #codec: string;
  readonly #compressed: Uint8Array;
  #bytes: Buffer | undefined;
  /** Offsets of the array's top-level separators: `[` first, then each `,`, then `]` (record i is between i and i + 1). */
  #seps: Int32Array | undefined;

  /** @param codec the segment's codec (store/segments.ts); @param data its compressed bytes. */
  constructor(codec: string, data: Uint8Array) {
    this.#codec = codec;
    this.#compressed = data;
  }

  /**
   * The record at `index` (0-based), parsed anew at each call; undefined when the segment has no such record.
   * @throws Error when the codec is unknown or the bytes are damaged (not of their codec, or the record is not JSON).
   */
  record(index: number): unknown {
    const seps = this.#separators();
    if (index < 0 || index + 1 >= seps.length) return undefined;
    return JSON.parse(this.#bytes!.toString('utf8', seps[index]! + 1, seps[index + 1])) as unknown;
  }

  /**
   * Frees the decompressed bytes now (a later {@link record} decompresses again). V8 frees a Buffer's memory only when
   * it collects the Buffer, and one that lived through a page is promoted and waits for a full collection: ≈ 60 MiB
   * of dead segments were held so at 200,000 records. Detaching the bytes' own ArrayBuffer
   * (`ArrayBuffer.prototype.transfer`, ES2024) frees them at once; a Buffer that shares its ArrayBuffer is left to GC.
   */
  release(): void {
    const b = this.#bytes;
    this.#bytes = undefined;
    this.#seps = undefined;
    // ES2024's `transfer` (Node ≥ 21), not in this project's TypeScript lib yet.
    if (b && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer)
      (b.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);
  }

  #separators(): Int32Array {
    if (this.#seps) return this.#seps;
    const b = (this.#bytes = decompressSegment(this.#codec, this.#compressed));
    this.#seps = topLevelSeparators(b);
    return this.#seps;
  }
}

const WS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WS[c] = 1;

/**
 * The offsets of a JSON array's top-level separators: its `[`, each `,` between elements, its `]`. A text that is not
 * an array, or an empty array, has no element (a single offset or none; `decodeSegment` reads such a text as no
 * record). Strings are skipped with their escapes, so brackets and commas inside them do not count. The text is
 * assumed to be JSON (it was parsed when stored); a damaged one gives elements that fail to parse.
 */
function topLevelSeparators(b: Uint8Array): Int32Array {
  const n = b.length;
  let i = 0;
  while (i < n && WS[b[i]!]) i++;
  if (i >= n || b[i] !== 0x5b) return new Int32Array(0);
  const out: number[] = [i];
  let depth = 0;
  let empty = true;
  for (i++; i < n; i++) {
    const c = b[i]!;
    if (c === 0x22) {
      // A string: skip to its closing quote, stepping over escapes (`\"`, `\\`).
      empty = false;
      for (i++; i < n; i++) {
        const s = b[i]!;
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      empty = false;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) {
        if (!empty) out.push(i);
        break;
      }
      depth--;
    } else if (c === 0x2c && depth === 0) out.push(i);
    else if (!WS[c]) empty = false;
  }
  return Int32Array.from(out);
}
