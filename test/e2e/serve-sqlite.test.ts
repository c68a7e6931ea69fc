import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addPortalUser, ensureOrganization } from '../../src/access/index.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { openStore } from '../../src/store/db.ts';
import { insertSession } from '../../src/store/repositories/access.ts';
import { startVigil, until, type VigilProcess } from '../support/process.ts';
import { TEST_ENV } from './harness.ts';

/**
 * `vigil serve` on a SQLite data directory (issue 14, point 8): owner-only files in an existing directory, one serve
 * per directory (a stale lock of a killed one is taken over), and ended sessions purged. The real CLI, as shipped.
 */
describe('vigil serve on one SQLite data directory', () => {
  const running: VigilProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  const serve = (dataDir: string) => {
    const p = startVigil(['serve'], { ...TEST_ENV, VIGIL_DATA_DIR: dataDir, VIGIL_HOST: '127.0.0.1', VIGIL_PORT: '0', VIGIL_LOG_LEVEL: 'info' });
    running.push(p);
    return p;
  };
  const listening = (p: VigilProcess) =>
    until(
      'vigil serve to listen',
      () => /listening on (\S+)/.exec(p.output())?.[1] ?? (p.child.exitCode !== null ? `exited ${p.output()}` : undefined),
      60_000,
    );
  const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

  it('creates the database, its WAL and shared memory, the log, the key and the lock owner-only, in a data directory that already existed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-perm-'));
    chmodSync(dataDir, 0o755);
    // A log left by an earlier version, readable by everyone.
    mkdirSync(join(dataDir, 'logs'), { mode: 0o755 });
    chmodSync(join(dataDir, 'logs'), 0o755);
    writeFileSync(join(dataDir, 'logs', 'vigil.log'), '{"msg":"old line"}\n', { mode: 0o644 });
    chmodSync(join(dataDir, 'logs', 'vigil.log'), 0o644);
    const p = serve(dataDir);
    expect(await listening(p)).toMatch(/^http:/);
    expect(mode(dataDir)).toBe('700');
    expect(mode(join(dataDir, 'logs'))).toBe('700');
    for (const file of ['vigil.db', 'vigil.db-wal', 'vigil.db-shm', 'master.key', 'serve.lock', 'serve.pid', join('logs', 'vigil.log')]) {
      expect(existsSync(join(dataDir, file)), file).toBe(true);
      expect(mode(join(dataDir, file)), file).toBe('600');
    }
    // Tightening an existing file is logged.
    expect(readFileSync(join(dataDir, 'logs', 'vigil.log'), 'utf8')).toMatch(/"previousMode":"644".*permissions of an existing file tightened/);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  }, 120_000);

  it('a second vigil serve on the same data directory refuses to start; after the first is killed, the next one takes over', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-lock-'));
    const first = serve(dataDir);
    await listening(first);
    const second = serve(dataDir);
    expect(await second.exited).toBe(5);
    expect(second.output()).toMatch(/SERVE_ALREADY_RUNNING|Another vigil serve/);
    expect(second.output()).toContain(`process ${first.child.pid}`);
    expect((await fetch(`${/listening on (\S+)/.exec(first.output())![1]}/healthz`)).status).toBe(200);

    // SIGKILL leaves the lock file and the pid behind; the kernel has dropped the lock itself.
    first.child.kill('SIGKILL');
    await first.exited;
    expect(readFileSync(join(dataDir, 'serve.pid'), 'utf8')).toMatch(new RegExp(`^${first.child.pid} `));

    // Sessions to purge: one idle for two hours, one past its 12 hours, one in use.
    const rt = await createRuntime({ dataDir, env: TEST_ENV });
    const org = await ensureOrganization(rt.db, 'Contoso');
    const user = await addPortalUser(rt.db, { organizationId: org.id, email: 'ann@contoso.test', password: 'correct horse battery staple', role: 'viewer' });
    const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
    const session = (id: string, createdAgo: number, seenAgo: number, expiresIn: number) =>
      insertSession(rt.db, {
        id,
        user_id: user.id,
        csrf_hash: `csrf-${id}`,
        created_at: ago(createdAgo),
        last_seen_at: ago(seenAgo),
        expires_at: ago(-expiresIn),
      });
    await session('idle', 7200, 7200, 36_000);
    await session('expired', 50_000, 10, -100);
    await session('live', 600, 10, 36_000);
    await rt.close();

    const third = serve(dataDir);
    await listening(third);
    expect(readFileSync(join(dataDir, 'serve.pid'), 'utf8')).toMatch(new RegExp(`^${third.child.pid} `));
    const db = await openStore({ dataDir, migrate: false });
    try {
      const ids = await until('ended sessions to be purged', async () => {
        const rows = (await db.selectFrom('portal_sessions').select('id').execute()).map((r) => r.id);
        return rows.length === 1 ? rows : undefined;
      });
      expect(ids).toEqual(['live']);
    } finally {
      await db.destroy();
    }
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    // A clean stop leaves no pid behind.
    expect(existsSync(join(dataDir, 'serve.pid'))).toBe(false);
  }, 180_000);
});
