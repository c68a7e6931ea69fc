import { promisify } from 'node:util';
import { brotliCompress, brotliDecompressSync, constants } from 'node:zlib';

/**
 * Raw audit records are stored as compressed segments: the text of a content blob exactly as the Management Activity
 * API sent it (a JSON array), compressed with Brotli at quality 1. Events point at their segment and their position
 * in it. Compressing a blob's records together is ≈ 9× smaller than the text (≈ 0.11 of it on the emulator's records)
 * where one record at a time reaches only ≈ 0.47, and it keeps the record byte-exact for investigations: the same
 * block-of-documents idea as Lucene's compressed stored fields.
 *
 * Source: Node.js `zlib` (Brotli); measured in bench/README.md.
 */

/** Codec name stored with each segment, so a later codec can coexist with these rows. */
export const RAW_CODEC = 'br';

const compress = promisify(brotliCompress);

/**
 * Compresses a segment's text (UTF-8) off the main thread (libuv thread pool).
 * @returns the compressed bytes.
 */
export async function encodeSegment(text: string): Promise<Buffer> {
  return compress(Buffer.from(text, 'utf8'), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_LGWIN]: 18, [constants.BROTLI_PARAM_SIZE_HINT]: text.length },
  });
}

/**
 * Decompresses a segment back to its text's UTF-8 bytes (the one place that knows the codecs).
 * @throws Error when the codec is unknown or the bytes are damaged.
 */
export function decompressSegment(codec: string, data: Uint8Array): Buffer {
  if (codec !== RAW_CODEC) throw new Error(`Unknown raw segment codec '${codec}'.`);
  return brotliDecompressSync(data);
}

/**
 * Decompresses a segment back to its records (the JSON array it held).
 * @throws Error when the codec is unknown or the bytes are damaged.
 */
export function decodeSegment(codec: string, data: Uint8Array): Record<string, unknown>[] {
  const parsed = JSON.parse(decompressSegment(codec, data).toString('utf8')) as unknown;
  return Array.isArray(parsed) ? (parsed as Record<string, unknown>[]) : [];
}
