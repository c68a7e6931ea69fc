/**
 * Runs `fn` over `items` with at most `limit` calls in flight, in item order; the first rejection rejects the whole
 * run (calls already started finish on their own). Used for slices of a stream and for audit content blobs.
 * Hand-written (nine lines) instead of a dependency such as p-limit: core imports nothing.
 */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
}
