import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { TEST_ENV, world, type World } from './harness.ts';
import { CLI, freePort, vigil } from '../support/process.ts';
import { EXIT, reportError } from '../../src/cli/output.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';

/** Runs the real CLI in a child process; returns exit code and output. */

describe('vigil CLI', () => {
  let w: World;
  let env: Record<string, string>;
  let dataDir: string;
  beforeAll(async () => {
    w = await world({ seed: 'cli', sizes: { users: 15, guests: 2, groups: 3, environments: 3, agents: 10 } });
    dataDir = mkdtempSync(join(tmpdir(), 'vigil-cli-'));
    env = { VIGIL_ENDPOINTS_FILE: w.endpointsFile, VIGIL_DATA_DIR: dataDir };
  });
  afterAll(async () => w.close());

  it('rejects bad input with exit code 2, naming the field and the fix, in text and JSON', async () => {
    const text = await vigil(
      ['integrations', 'add', '--mode', 'customer-app', '--tenant-id', 'contoso', '--client-id', w.app.appId, '--client-secret-stdin'],
      env,
      w.secret,
    );
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/--tenant-id 'contoso' is not a GUID/);
    expect(text.stderr).toMatch(/fix: Copy it from Microsoft Entra admin center/);
    const json = await vigil(
      ['integrations', 'add', '--mode', 'customer-app', '--tenant-id', w.tenant.id, '--client-id', w.app.appId, '--client-secret-env', 'UNSET_VAR_X', '--json'],
      env,
    );
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'INVALID_INPUT', field: '--client-secret-env' });
  });

  it('exits 3 when Entra ID refuses the secret, and saves nothing', async () => {
    const r = await vigil(
      ['integrations', 'add', '--mode', 'customer-app', '--tenant-id', w.tenant.id, '--client-id', w.app.appId, '--client-secret-stdin', '--json'],
      env,
      'wrong~secret~value~0000000000000000000000',
    );
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'AADSTS7000215', field: '--client-secret-env' });
    const list = await vigil(['integrations', 'list', '--json'], env);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it('adds with the secret from stdin, collects, and lists findings as JSON', async () => {
    const add = await vigil(
      [
        'integrations',
        'add',
        '--mode',
        'customer-app',
        '--tenant-id',
        w.tenant.id,
        '--client-id',
        w.app.appId,
        '--client-secret-stdin',
        '--name',
        'Contoso',
        '--json',
      ],
      env,
      `${w.secret}\n`,
    );
    expect(add.code, add.stderr).toBe(0);
    const added = JSON.parse(add.stdout);
    expect(added.verification.verified).toBe(true);
    expect(JSON.stringify(added)).not.toContain(w.secret);
    const collect = await vigil(['collect', 'Contoso', '--json'], env);
    expect(collect.code, collect.stderr).toBe(0);
    const { run, evaluation } = JSON.parse(collect.stdout);
    expect(run.counts.users.records).toBe(w.truth.users);
    const findings = JSON.parse((await vigil(['findings', '--json'], env)).stdout) as { checkId: string; severity: string }[];
    expect(findings.length).toBe(evaluation.findingsOpen);
    expect(findings.filter((f) => f.checkId === 'agent_no_authentication')).toHaveLength(w.truth.risks.noAuthentication);
    // Suppression: a past date is refused naming the field; a suppressed finding leaves the open list, keeps its history.
    const target = (findings[0] as unknown as { id: string }).id;
    const past = await vigil(['findings', 'suppress', target, '--reason', 'accepted', '--until', '2020-01-01'], env);
    expect([past.code, past.stdout + past.stderr]).toEqual([2, expect.stringMatching(/--until/)]);
    expect((await vigil(['findings', 'suppress', target, '--reason', 'pilot agent, no data', '--until', '2099-01-01', '--by', 'ann'], env)).code).toBe(0);
    const open = JSON.parse((await vigil(['findings', '--json'], env)).stdout) as { id: string }[];
    expect(open.map((f) => f.id)).not.toContain(target);
    expect(open).toHaveLength(findings.length - 1);
    const shown = JSON.parse((await vigil(['findings', 'show', target, '--json'], env)).stdout) as {
      suppression: { author: string };
      history: { event: string }[];
    };
    expect([shown.suppression.author, shown.history.map((h) => h.event)]).toEqual(['ann', ['opened', 'suppressed']]);
    expect((await vigil(['findings', 'unsuppress', target], env)).code).toBe(0);
    // Agents ranked by risk: every collected agent, highest first; agents without authentication reach anyone.
    const agents = JSON.parse((await vigil(['agents', '--json', '--limit', '1000'], env)).stdout) as { score: number; reach: string; openFindings: number }[];
    expect(agents).toHaveLength(w.truth.agents);
    expect(agents.map((a) => a.score)).toEqual([...agents.map((a) => a.score)].sort((x, y) => y - x));
    expect(agents.filter((a) => a.reach === 'anyone').length).toBeGreaterThanOrEqual(w.truth.risks.noAuthentication);
    expect((await vigil(['findings', 'show', 'fnd_nope'], env)).code).toBe(4);
    // Exports: JSON equals the list; CSV has a header and one row per finding, quoting what needs it.
    const exported = JSON.parse((await vigil(['findings', 'export', '--format', 'json', '--status', 'open'], env)).stdout) as { id: string }[];
    expect(exported.map((f) => f.id).sort()).toEqual(findings.map((f) => (f as unknown as { id: string }).id).sort());
    const csvFile = join(mkdtempSync(join(tmpdir(), 'vigil-export-')), 'findings.csv');
    expect((await vigil(['findings', 'export', '--format', 'csv', '--status', 'open', '--output', csvFile], env)).code).toBe(0);
    const csv = readFileSync(csvFile, 'utf8').trimEnd().split('\n');
    expect(csv[0]).toBe(
      'id,integrationId,checkId,severity,status,resourceType,resourceId,resourceName,reason,firstSeenAt,lastSeenAt,resolvedAt,suppressed,suppressionReason,suppressionAuthor,suppressionExpiresAt,frameworks,peers',
    );
    expect(csv).toHaveLength(findings.length + 1);
    expect(csv.slice(1).every((line) => line.startsWith('fnd_'))).toBe(true);
    expect((await vigil(['findings', 'export', '--format', 'xml'], env)).code).not.toBe(0);
    const show = await vigil(['integrations', 'show', 'Contoso'], env);
    expect(show.stdout).toMatch(/secret expires\s+\d{4}-\d{2}-\d{2} \(\d+ days left\)/);
    expect((await vigil(['integrations', 'show', 'nope'], env)).code).toBe(4);
  });

  it('creates organizations only on purpose: a mistyped --organization is refused naming the existing ones', async () => {
    const typo = await vigil(
      ['users', 'add', '--email', 'bob@contoso.com', '--organization', 'Contso', '--password-stdin'],
      env,
      'correct horse battery staple\n',
    );
    expect(typo.code).toBe(4);
    expect(typo.stderr).toMatch(/No organization named "Contso"\. The organizations are: "Default"/);
    expect(typo.stderr).toMatch(/fix: .*vigil organizations create "Contso"/);
    expect((await vigil(['organizations', 'create', 'Contoso'], env)).code).toBe(0);
    expect((await vigil(['organizations', 'create', 'Fabrikam'], env)).code).toBe(0);
    const orgs = JSON.parse((await vigil(['organizations', 'list', '--json'], env)).stdout) as { name: string; integrations: number }[];
    expect(orgs.map((o) => [o.name, o.integrations])).toEqual([
      ['Default', 1],
      ['Contoso', 0],
      ['Fabrikam', 0],
    ]);
    // Lists are scoped: the integration added without --organization is Default's, so Contoso sees none of it.
    const [contosoIntegrations, contosoFindings, defaultFindings, unknown, again] = await Promise.all([
      vigil(['integrations', 'list', '--organization', 'Contoso', '--json'], env),
      vigil(['findings', '--organization', 'Contoso', '--json'], env),
      vigil(['findings', '--organization', 'Default', '--json'], env),
      vigil(
        [
          'integrations',
          'add',
          '--mode',
          'customer-app',
          '--organization',
          'Nobody',
          '--tenant-id',
          w.tenant.id,
          '--client-id',
          w.app.appId,
          '--client-secret-stdin',
        ],
        env,
        w.secret,
      ),
      vigil(['organizations', 'create', 'Contoso', '--json'], env),
    ]);
    expect([again.code, JSON.parse(again.stdout).error.code]).toEqual([5, 'ORGANIZATION_EXISTS']);
    expect(JSON.parse(contosoIntegrations.stdout)).toEqual([]);
    expect(JSON.parse(contosoFindings.stdout)).toEqual([]);
    expect((JSON.parse(defaultFindings.stdout) as unknown[]).length).toBeGreaterThan(0);
    expect([unknown.code, unknown.stderr]).toEqual([4, expect.stringMatching(/No organization named "Nobody"/)]);
  });

  it('bootstraps access: `vigil users add` reads the password from stdin, `vigil api-keys create` shows the key once', async () => {
    // Its own organizations (0: created, 5: an earlier test of this file made them), so it also runs alone (-t).
    for (const name of ['Contoso', 'Fabrikam']) expect([0, 5]).toContain((await vigil(['organizations', 'create', name], env)).code);
    const noStdin = await vigil(['users', 'add', '--email', 'ann@contoso.com', '--role', 'admin', '--organization', 'Contoso', '--json'], env);
    expect(noStdin.code).toBe(2);
    expect(JSON.parse(noStdin.stdout).error).toMatchObject({ field: '--password-stdin' });
    const weak = await vigil(['users', 'add', '--email', 'ann@contoso.com', '--organization', 'Contoso', '--password-stdin', '--json'], env, 'short\n');
    expect(JSON.parse(weak.stdout).error).toMatchObject({ field: 'password', code: 'WEAK_PASSWORD' });
    const added = await vigil(
      ['users', 'add', '--email', 'ann@contoso.com', '--role', 'admin', '--organization', 'Contoso', '--password-stdin', '--json'],
      env,
      'correct horse battery staple\n',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ email: 'ann@contoso.com', role: 'admin', organization: 'Contoso' });
    expect(added.stdout + added.stderr).not.toContain('correct horse');
    const users = JSON.parse((await vigil(['users', 'list', '--organization', 'Contoso', '--json'], env)).stdout) as { email: string }[];
    expect(users.map((u) => u.email)).toEqual(['ann@contoso.com']);

    // The only admin cannot become a viewer (exit 5, conflict, naming the fix); by address or id, in its organization only.
    const last = await vigil(['users', 'set', 'Ann@Contoso.com', '--role', 'viewer', '--organization', 'Contoso'], env);
    expect([last.code, last.stderr]).toEqual([5, expect.stringMatching(/only enabled admin[\s\S]*Make another user an admin first/)]);
    expect((await vigil(['users', 'set', 'ann@contoso.com', '--disable', '--organization', 'Fabrikam', '--json'], env)).code).toBe(4);
    const both = await vigil(['users', 'set', 'ann@contoso.com', '--disable', '--enable', '--organization', 'Contoso', '--json'], env);
    expect([both.code, JSON.parse(both.stdout).error.field]).toEqual([2, '--disable']);
    await vigil(['users', 'add', '--email', 'bob@contoso.com', '--organization', 'Contoso', '--password-stdin'], env, 'correct horse battery staple\n');
    const promoted = await vigil(['users', 'set', 'bob@contoso.com', '--role', 'admin', '--organization', 'Contoso', '--json'], env);
    expect(JSON.parse(promoted.stdout)).toMatchObject({ email: 'bob@contoso.com', role: 'admin', disabled: false });
    const disabled = await vigil(['users', 'set', 'ann@contoso.com', '--disable', '--organization', 'Contoso'], env);
    expect([disabled.code, disabled.stdout]).toEqual([
      0,
      expect.stringContaining('ann@contoso.com in organization Contoso: admin, disabled (sessions ended).'),
    ]);
    expect((await vigil(['users', 'list', '--organization', 'Contoso'], env)).stdout).toMatch(/ann@contoso\.com\s+admin\s+disabled/);
    expect((await vigil(['users', 'set', 'ann@contoso.com', '--enable', '--organization', 'Contoso', '--json'], env)).code).toBe(0);

    const created = await vigil(['api-keys', 'create', '--name', 'sentinel', '--organization', 'Contoso', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    expect(key).toMatch(/^vgl_/);
    const listed = await vigil(['api-keys', 'list', '--organization', 'Contoso', '--json'], env);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(key);
    // Another organization's key is not found, never revoked.
    expect((await vigil(['api-keys', 'create', '--name', 'other', '--organization', 'Fabrikam', '--json'], env)).code).toBe(0);
    expect((await vigil(['api-keys', 'revoke', id, '--organization', 'Fabrikam', '--json'], env)).code).toBe(4);
    expect((await vigil(['api-keys', 'revoke', id, '--organization', 'Contoso', '--json'], env)).code).toBe(0);
    const after = JSON.parse((await vigil(['api-keys', 'list', '--organization', 'Contoso', '--json'], env)).stdout) as { revokedAt: string | null }[];
    expect(after[0]!.revokedAt).not.toBeNull();
    // The access lists take --limit like every list: at most n rows, and a bad value is exit 2 naming the option.
    expect((await vigil(['api-keys', 'create', '--name', 'second', '--organization', 'Contoso', '--json'], env)).code).toBe(0);
    const limited = await vigil(['api-keys', 'list', '--organization', 'Contoso', '--limit', '1'], env);
    expect([limited.code, limited.stdout]).toEqual([0, expect.stringMatching(/… 1 more \(showing 1 of 2/)]);
    const bad = await vigil(['users', 'list', '--organization', 'Contoso', '--limit', 'abc'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--limit must be a positive whole number, got 'abc'/)]);
  });

  it('exits with every code `vigil --help` names, on the path it names', async () => {
    const help = await vigil(['--help'], env);
    const documented = [...help.stdout.slice(help.stdout.indexOf('Exit codes:')).matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]));
    expect(documented).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // A collection against endpoints nobody serves (the emulator stopped): the same profile on a port that is closed.
    const dead = await freePort();
    const deadDir = mkdtempSync(join(tmpdir(), 'vigil-dead-'));
    const endpoints = readFileSync(w.endpointsFile, 'utf8');
    const origin = new URL((JSON.parse(endpoints) as { authorityHost: string }).authorityHost).origin;
    const deadFile = join(deadDir, 'endpoints.json');
    writeFileSync(deadFile, endpoints.replaceAll(origin, `https://127.0.0.1:${dead}`));
    // A port taken by another program, for `vigil serve`.
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const busyPort = String((busy.address() as AddressInfo).port);
    const [version, typo, missing, notNumber, badConfig, refused, unknown, portTaken, unreachable] = await Promise.all([
      vigil(['--version'], env),
      vigil(['colect'], env),
      vigil(['integrations', 'add', '--tenant-id', w.tenant.id], env),
      vigil(['agents', '--limit', 'abc'], env),
      vigil(['integrations', 'list'], { ...env, VIGIL_HTTP_MAX_ATTEMPTS: 'many' }),
      vigil(
        ['integrations', 'add', '--mode', 'customer-app', '--tenant-id', w.tenant.id, '--client-id', w.app.appId, '--client-secret-stdin'],
        env,
        'wrong~secret~value~0000000000000000000000',
      ),
      vigil(['integrations', 'show', 'nope'], env),
      vigil(['serve', '--port', busyPort], { ...env, VIGIL_PORT: '1' }),
      vigil(['collect', 'Contoso'], { ...env, VIGIL_ENDPOINTS_FILE: deadFile }),
    ]);
    await new Promise<void>((r) => busy.close(() => r()));
    expect([help.code, version.code]).toEqual([0, 0]);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    // Usage errors exit 2 with the message, the suggestion and one line pointing to --help — not the whole help.
    expect([typo.code, typo.stderr.trim().split('\n')]).toEqual([
      2,
      ["error: unknown command 'colect'", '(Did you mean collect?)', '(run `vigil --help` for usage)'],
    ]);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringMatching(/required option '--mode <mode>' not specified\n\(run `vigil integrations add --help` for usage\)\n$/),
    ]);
    expect([notNumber.code, notNumber.stderr]).toEqual([2, expect.stringMatching(/--limit/)]);
    // A bad configuration value exits 2 naming the variable (docs/configuration.md).
    expect([badConfig.code, badConfig.stderr]).toEqual([2, expect.stringMatching(/VIGIL_HTTP_MAX_ATTEMPTS/)]);
    expect([refused.code, refused.stderr]).toEqual([3, expect.stringMatching(/AADSTS7000215/)]);
    expect(unknown.code).toBe(4);
    // The flag wins over VIGIL_PORT; the busy port is a conflict naming the port and the fix.
    expect([portTaken.code, portTaken.stderr]).toEqual([
      5,
      expect.stringMatching(new RegExp(`Port ${busyPort} on 127\\.0\\.0\\.1 is already in use[\\s\\S]*fix: .*--port`)),
    ]);
    // An unreachable endpoint names the host and the setting that named it, after one retry, not half a minute.
    expect([unreachable.code, unreachable.stderr]).toEqual([
      6,
      expect.stringMatching(
        new RegExp(`Cannot reach 127\\.0\\.0\\.1:${dead}[\\s\\S]*fix: .*VIGIL_ENDPOINTS_FILE=${deadFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      ),
    ]);
    expect(unreachable.stderr).toMatch(/\[ECONNREFUSED, 2 attempts\]/);
    // 1 is for bugs only: anything that is not a VigilError is reported as internal.
    const stderr = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    expect(reportError(new TypeError("Cannot read properties of undefined (reading 'id')"), false)).toBe(EXIT.internal);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(/^internal error: /);
    stderr.mockRestore();
    expect(EXIT.internal).toBe(1);
  });
});

describe('vigil demo --json', () => {
  it('prints the documented summary object', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'vigil-demo-')), 'demo');
    const r = await vigil(['--data-dir', dir, 'demo', '--json', '--seed', '7'], {});
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.integration).toMatchObject({ verified: true, missingPermissions: [] });
    expect(Object.keys(s.collected).sort()).toEqual([...STREAM_RUN_ORDER].sort());
    expect(s.collected.users).toBeGreaterThan(0);
    expect(s.findings.total).toBe(Object.values(s.findings.bySeverity as Record<string, number>).reduce((a, b) => a + b, 0));
    expect(s.findings.total).toBe(Object.values(s.findings.byCheck as Record<string, number>).reduce((a, b) => a + b, 0));
    expect(s.database).toBe(join(dir, 'vigil.db'));
    // A second demo run in the same directory starts afresh instead of failing on the existing integration.
    expect((await vigil(['--data-dir', dir, 'demo', '--json', '--seed', '7'], {})).code).toBe(0);
  });
});

describe('vigil serve on SQLite', () => {
  it('collects a new integration at once with its in-process workers, answers /readyz, and stops on SIGTERM', async () => {
    const w = await world({ seed: 'serve', sizes: { users: 12, guests: 1, groups: 3, environments: 3, agents: 6 } });
    try {
      const dataDir = mkdtempSync(join(tmpdir(), 'vigil-serve-'));
      const env = { VIGIL_ENDPOINTS_FILE: w.endpointsFile, VIGIL_DATA_DIR: dataDir, VIGIL_PORT: '0', VIGIL_SCHEDULER_TICK_SECONDS: '1' };
      expect(
        (
          await vigil(
            ['integrations', 'add', '--mode', 'customer-app', '--tenant-id', w.tenant.id, '--client-id', w.app.appId, '--client-secret-stdin', '--name', 'S'],
            env,
            w.secret,
          )
        ).code,
      ).toBe(0);
      const child = spawn(process.execPath, [...CLI, 'serve'], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      onTestFinished(() => void child.kill('SIGKILL'));
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      for (let i = 0; i < 300 && !/listening on (\S+)/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      const base = /listening on (\S+)/.exec(out)![1]!;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      let runs: { status: string }[] = [];
      for (let i = 0; i < 300; i++) {
        runs = JSON.parse((await vigil(['runs', 'S', '--json'], env)).stdout);
        if (runs.length && runs[0]!.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(runs[0]!.status).toBe('partial');
      // The same job then ingests the audit feed and runs the detections.
      let events: { id: string; operation: string }[] = [];
      for (let i = 0; i < 150 && events.length === 0; i++) {
        events = JSON.parse((await vigil(['events', '--json', '--limit', '5'], env)).stdout);
        if (events.length === 0) await new Promise((r) => setTimeout(r, 200));
      }
      expect(events.length).toBe(5);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toMatch(/vigil serve stopped/);
    } finally {
      await w.close();
    }
  });
});
