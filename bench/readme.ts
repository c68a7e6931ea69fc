import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** bench/README.md, where each benchmark writes its own figures. */
export const BENCH_README = join(import.meta.dirname, 'README.md');

/**
 * Replaces the text between `<!-- bench:<name> -->` and `<!-- /bench:<name> -->` in bench/README.md with `body`
 * (the markers are kept; a benchmark's section is written only by that benchmark's run, never by hand).
 * @throws Error when the markers are missing or out of order (add them once where the figures belong).
 */
export function writeBenchSection(name: string, body: string, file = BENCH_README): void {
  const text = readFileSync(file, 'utf8');
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`${file} has no ${open} … ${close} section`);
  writeFileSync(file, `${text.slice(0, start + open.length)}\n${body.trim()}\n${text.slice(end)}`);
}
