import { existsSync, mkdtempSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vigil } from '../support/process.ts';
import { world, type World } from './harness.ts';

/**
 * Issue 14, point 7: a lost master key is never silently replaced while the database holds secrets encrypted with it.
 * The real CLI in child processes, on the emulator.
 */
describe('lost master key', () => {
  let w: World;
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    w = await world({ seed: 'master-key', sizes: { users: 5, guests: 1, groups: 2, environments: 1, agents: 2 } });
    dataDir = mkdtempSync(join(tmpdir(), 'vigil-mk-'));
    env = { VIGIL_ENDPOINTS_FILE: w.endpointsFile, VIGIL_DATA_DIR: dataDir };
  });
  afterAll(async () => w.close());

  const keyFile = () => join(dataDir, 'master.key');

  it('a fresh data directory gets a key; deleting it with a secret stored is refused with both ways out, and no new key is written', async () => {
    const first = await vigil(['integrations', 'list', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
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
    const original = readFileSync(keyFile(), 'utf8');

    // The key file is lost: every command refuses, names the key the secrets need, and writes no new key.
    unlinkSync(keyFile());
    const refused = await vigil(['integrations', 'list', '--json'], env);
    expect(refused.code).toBe(2);
    const error = JSON.parse(refused.stdout).error as { code: string; message: string; remediation: string; field: string };
    expect(error).toMatchObject({ code: 'MASTER_KEY_MISSING', field: 'VIGIL_MASTER_KEY' });
    expect(error.remediation).toMatch(/copy the backed-up master\.key/);
    expect(error.remediation).toMatch(/set VIGIL_MASTER_KEY to the original key/);
    expect(error.remediation).toMatch(/vigil master-key reset --forget-secrets/);
    expect(error.remediation).toMatch(/vigil integrations rotate-secret/);
    expect(existsSync(keyFile())).toBe(false);
    // `reset` without the confirming flag changes nothing either.
    expect((await vigil(['master-key', 'reset'], env)).code).not.toBe(0);
    expect(existsSync(keyFile())).toBe(false);

    // Way out 1: the original key, given in VIGIL_MASTER_KEY (no file is written) or restored as the file.
    const viaEnv = await vigil(['integrations', 'verify', 'Contoso', '--json'], { ...env, VIGIL_MASTER_KEY: original.trim() });
    expect(viaEnv.code, viaEnv.stdout + viaEnv.stderr).toBe(0);
    expect(existsSync(keyFile())).toBe(false);
    writeFileSync(keyFile(), original, { mode: 0o600 });
    const restored = await vigil(['integrations', 'verify', 'Contoso', '--json'], env);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
  }, 120_000);

  it('the knowing way out: reset writes a new key, forgets the unreadable secret, and rotate-secret brings the integration back', async () => {
    unlinkSync(keyFile());
    const reset = await vigil(['master-key', 'reset', '--forget-secrets', '--json'], env);
    expect(reset.code, reset.stderr).toBe(0);
    const out = JSON.parse(reset.stdout) as { keyId: string; forgotten: { name: string; keyId: string }[] };
    expect(out.forgotten.map((f) => f.name)).toEqual(['Contoso']);
    expect(out.keyId).not.toBe(out.forgotten[0]!.keyId);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
    // Until the secret is entered again, collection stops with the fix instead of MASTER_KEY_MISMATCH.
    const collect = await vigil(['collect', 'Contoso', '--json'], env);
    expect(collect.code).not.toBe(0);
    const refusal = JSON.parse(collect.stdout).error as { code: string; message: string; remediation: string };
    expect(refusal).toMatchObject({ code: 'CREDENTIALS_EXPIRED', message: expect.stringMatching(/the secret was forgotten and must be entered again/) });
    expect(refusal.remediation).toMatch(/then run `vigil integrations rotate-secret \S+`/);
    const rotate = await vigil(['integrations', 'rotate-secret', 'Contoso', '--client-secret-stdin', '--json'], env, `${w.secret}\n`);
    expect(rotate.code, rotate.stdout + rotate.stderr).toBe(0);
    const verify = await vigil(['integrations', 'verify', 'Contoso', '--json'], env);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    // A second reset has nothing to forget: the new key opens the new secret.
    expect(JSON.parse((await vigil(['master-key', 'reset', '--forget-secrets', '--json'], env)).stdout).forgotten).toEqual([]);
  }, 120_000);
});
