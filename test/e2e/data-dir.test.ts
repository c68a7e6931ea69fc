import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { vigil } from '../support/process.ts';

/** The data directory as the user gives it: made with its parents, or refused at once with the fix (exit 2). */
describe('vigil --data-dir', () => {
  const base = mkdtempSync(join(tmpdir(), 'vigil-datadir-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('creates a missing directory and its parents, owner-only', async () => {
    const dir = join(base, 'a', 'b', 'c');
    const r = await vigil(['--data-dir', dir, 'findings', '--json'], {});
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(base, 'a')).mode & 0o777).toBe(0o700);
  });

  it.each([
    [
      'under /proc, where mkdir answers ENOENT (Node’s recursive mkdir loops forever there)',
      () => '/proc/vigil-nope/data',
      /\/proc\/vigil-nope could not be created \(ENOENT\)/,
    ],
    [
      'where a file stands',
      () => {
        const file = join(base, 'file');
        writeFileSync(file, 'x');
        return file;
      },
      /is a file, not a directory/,
    ],
  ])('refuses a directory it cannot create (%s) with exit 2, naming --data-dir and the fix', async (_what, path, reason) => {
    const started = Date.now();
    const r = await vigil(['--data-dir', path(), 'findings'], {});
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(reason);
    expect(r.stderr).toMatch(/--data-dir/);
    expect(r.stderr).toMatch(/fix: /);
  });
});
