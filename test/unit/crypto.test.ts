import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret, loadKeyEncryptionKey } from '../../src/platform/crypto/envelope.ts';

const secret = 'abc8Q~not-a-real-secret-but-long-enough-xyz';

describe('envelope encryption of client secrets', () => {
  it('round-trips and holds no plain text', () => {
    const kek = loadKeyEncryptionKey(mkdtempSync(join(tmpdir(), 'vigil-')), undefined);
    const env = encryptSecret(kek, secret, 'int_1|tenant');
    expect(JSON.stringify(env)).not.toContain(secret);
    expect(decryptSecret(kek, env, 'int_1|tenant')).toBe(secret);
  });

  it('refuses an envelope moved to another integration (associated data)', () => {
    const kek = loadKeyEncryptionKey(mkdtempSync(join(tmpdir(), 'vigil-')), undefined);
    const env = encryptSecret(kek, secret, 'int_1|tenant');
    expect(() => decryptSecret(kek, env, 'int_2|tenant')).toThrow(expect.objectContaining({ code: 'SECRET_TAMPERED' }));
  });

  it('refuses another master key, naming the key ids', () => {
    const a = loadKeyEncryptionKey(mkdtempSync(join(tmpdir(), 'vigil-')), undefined);
    const b = loadKeyEncryptionKey(mkdtempSync(join(tmpdir(), 'vigil-')), undefined);
    expect(() => decryptSecret(b, encryptSecret(a, secret, 'x'), 'x')).toThrow(expect.objectContaining({ code: 'MASTER_KEY_MISMATCH' }));
  });

  it('generates the key file with mode 0600 and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-'));
    const k1 = loadKeyEncryptionKey(dir, undefined);
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(loadKeyEncryptionKey(dir, undefined).id).toBe(k1.id);
    expect(readFileSync(join(dir, 'master.key'), 'utf8').trim()).toHaveLength(44);
  });

  it('never generates a key while the database holds secrets: MASTER_KEY_MISSING names the key they need, and no file is written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-'));
    expect(() => loadKeyEncryptionKey(dir, undefined, { storedKeyIds: ['0123456789abcdef'] })).toThrow(
      expect.objectContaining({ code: 'MASTER_KEY_MISSING', kind: 'configuration', message: expect.stringMatching(/0123456789abcdef/) }),
    );
    expect(existsSync(join(dir, 'master.key'))).toBe(false);
    // Knowingly replaced (vigil master-key reset --forget-secrets): a new key is written.
    expect(loadKeyEncryptionKey(dir, undefined, { storedKeyIds: ['0123456789abcdef'], replaceLostKey: true }).id).not.toBe('0123456789abcdef');
    expect(existsSync(join(dir, 'master.key'))).toBe(true);
  });

  it('refuses a key file readable by others', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-'));
    loadKeyEncryptionKey(dir, undefined);
    chmodSync(join(dir, 'master.key'), 0o644);
    expect(() => loadKeyEncryptionKey(dir, undefined)).toThrow(expect.objectContaining({ code: 'MASTER_KEY_FILE_UNSAFE' }));
  });

  it('names VIGIL_MASTER_KEY when it is not 32 bytes', () => {
    expect(() => loadKeyEncryptionKey('/nonexistent', 'c2hvcnQ=')).toThrow(expect.objectContaining({ code: 'MASTER_KEY_INVALID', field: 'VIGIL_MASTER_KEY' }));
    expect(loadKeyEncryptionKey('/nonexistent', 'ab'.repeat(32)).key).toHaveLength(32);
  });
});
