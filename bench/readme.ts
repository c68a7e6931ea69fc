import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** bench/README.md, where each benchmark writes its own figures. */
export const BENCH_README = join(import.meta.dirname, 'README.md');

/**
 * The code a benchmark measured: `commit <short hash> (<its date>)`, and "with uncommitted changes" when files other
 * than bench/README.md differ from it (a figure then describes no commit). "an unknown commit" outside a git checkout.
 */
function measuredCode(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: join(import.meta.dirname, '..'), encoding: 'utf8' }).trim();
  try {
    const [hash, date] = git('log', '-1', '--format=%h %cs').split(' ');
    const dirty = git('status', '--porcelain', '--untracked-files=no')
      .split('\n')
      .filter((l) => l.trim() && !l.endsWith('bench/README.md')).length;
    return `commit ${hash} (${date})${dirty ? ', with uncommitted changes' : ''}`;
  } catch {
    return 'an unknown commit';
  }
}

/**
 * Replaces the text between `<!-- bench:<name> -->` and `<!-- /bench:<name> -->` in bench/README.md with `body`
 * followed by the code measured ({@link measuredCode}); the markers are kept. A benchmark's section is written only by
 * that benchmark's run, never by hand; a section written by a run in another checkout carries its commit with it.
 * @throws Error when the markers are missing or out of order (add them once where the figures belong).
 */
export function writeBenchSection(name: string, body: string, file = BENCH_README): void {
  body = `${body.trim()}\n\nCode measured: ${measuredCode()}.`;
  const text = readFileSync(file, 'utf8');
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`${file} has no ${open} … ${close} section`);
  writeFileSync(file, `${text.slice(0, start + open.length)}\n${body.trim()}\n${text.slice(end)}`);
}
