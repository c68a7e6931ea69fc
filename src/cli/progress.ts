import type { Progress } from '../sync/engine.ts';

/**
 * A one-line progress display on a TTY (stderr), silent otherwise so pipes and CI logs stay clean.
 */
export function createProgress(stream: NodeJS.WriteStream = process.stderr): { update(p: Progress): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  let last = 0;
  let shown = false;
  return {
    update(p) {
      const now = Date.now();
      if (now - last < 100 && p.slicesDone < p.slicesTotal) return;
      last = now;
      shown = true;
      const slices = p.slicesTotal > 1 ? ` ${p.slicesDone}/${p.slicesTotal}` : '';
      stream.write(`\r\x1b[2K  collecting ${p.stream}${slices} · ${p.records.toLocaleString('en-US')} records`);
    },
    done() {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
}
