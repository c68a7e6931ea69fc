import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChecksMarkdown } from '../../src/checks/docs.ts';
import { loadChecks } from '../../src/checks/loader.ts';

/** The check library as a whole: its size, its generated documentation, and that every check has its three tests. */
describe('check library', async () => {
  const checks = await loadChecks();

  it('docs/checks.md is generated from the current metadata (run `npm run docs:checks`)', () => {
    expect(readFileSync(join(import.meta.dirname, '../../docs/checks.md'), 'utf8')).toBe(renderChecksMarkdown(checks));
  });

  it('every check has a describe block in test/checks with a pass, a fail and a not-evaluated test', () => {
    const dir = import.meta.dirname;
    const sources = readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts') && f !== 'library.test.ts')
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    const missing: string[] = [];
    for (const { metadata: m } of checks) {
      const start = sources.indexOf(`describe('${m.id}'`);
      if (start < 0) {
        missing.push(`${m.id}: no describe('${m.id}')`);
        continue;
      }
      const next = sources.indexOf('\ndescribe(', start + 1);
      const block = sources.slice(start, next < 0 ? undefined : next);
      for (const word of ['passes', 'fails', 'not evaluated'])
        if (!new RegExp(`it\\(['"\`][^'"\`]*${word}`).test(block)) missing.push(`${m.id}: no it('… ${word} …')`);
    }
    expect(missing).toEqual([]);
  });

  it('every peer-mapped check names its peer, and ids are unique', () => {
    const ids = checks.map((c) => c.metadata.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
