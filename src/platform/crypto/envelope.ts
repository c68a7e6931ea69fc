import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VigilError } from '../../core/errors.ts';

/**
 * AES-256-GCM envelope encryption for secrets at rest (client secrets). Each secret gets a fresh 32-byte data key;
 * the data key is wrapped by the key-encryption key (KEK); both encryptions bind the caller's associated data
 * (integration id and tenant id) so a ciphertext moved to another row fails to open.
 *
 * Source: NIST SP 800-38D (GCM, 96-bit IVs, 128-bit tags); OWASP ASVS 5.0 11.3.3 (authenticated encryption);
 * Node.js `crypto` (createCipheriv with `aes-256-gcm`).
 */

/** The stored form of one encrypted secret (JSON, all binary fields base64). Holds no plain text. */
export interface Envelope {
  v: 1;
  alg: 'A256GCM';
  /** First 16 hex chars of SHA-256 of the KEK: tells which key wrapped this envelope (key rotation). */
  kid: string;
  /** Data key wrapped by the KEK: iv(12) ‖ tag(16) ‖ ciphertext(32). */
  wrappedKey: string;
  iv: string;
  tag: string;
  ciphertext: string;
}

/** A loaded key-encryption key. */
export interface KeyEncryptionKey {
  readonly id: string;
  readonly key: Buffer;
}

const KEY_FILE = 'master.key';

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

function parseKey(text: string, source: string): Buffer {
  const t = text.trim();
  const buf = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (buf.length !== 32) {
    throw new VigilError('MASTER_KEY_INVALID', `The master key from ${source} is not 32 bytes (base64 or 64 hex characters).`, {
      field: source,
    });
  }
  return buf;
}

/** How {@link loadKeyEncryptionKey} treats a missing key file. */
export interface KeyLoadOptions {
  /**
   * Key ids (`Envelope.kid`) of the secrets stored in the database. When there is any, a missing key file is an error
   * (`MASTER_KEY_MISSING`) and no key is generated: a new key would leave every stored secret unreadable.
   */
  storedKeyIds?: readonly string[];
  /**
   * Generate a new key file although the database holds secrets (`vigil master-key reset --forget-secrets`: the
   * operator knows the old key is lost and will enter the secrets again).
   */
  replaceLostKey?: boolean;
}

/** The key id an envelope's stored JSON text names, or undefined when it is not an envelope. */
export function envelopeKeyId(stored: string): string | undefined {
  try {
    const kid = (JSON.parse(stored) as Partial<Envelope>).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Loads the KEK: `VIGIL_MASTER_KEY` (base64 or hex, 32 bytes) when given, else `<dataDir>/master.key`, generated on
 * first use with mode 0600 — but only while the database holds no encrypted secret (issue 14, point 7: a lost key
 * file silently replaced made every stored secret unreadable). A key file readable by group or others is refused.
 *
 * @throws VigilError `configuration`: `MASTER_KEY_INVALID` (malformed key), `MASTER_KEY_FILE_UNSAFE` (permissions),
 *   `MASTER_KEY_MISSING` (no key given, no key file, and `options.storedKeyIds` names stored secrets; the remediation
 *   gives both ways out: restore the key, or knowingly reset it and enter the secrets again).
 */
export function loadKeyEncryptionKey(dataDir: string, masterKey: string | undefined, options: KeyLoadOptions = {}): KeyEncryptionKey {
  if (masterKey) {
    const key = parseKey(masterKey, 'VIGIL_MASTER_KEY');
    return { id: keyId(key), key };
  }
  const path = join(dataDir, KEY_FILE);
  if (!existsSync(path)) {
    const stored = [...new Set(options.storedKeyIds ?? [])];
    if (stored.length && !options.replaceLostKey) {
      throw new VigilError(
        'MASTER_KEY_MISSING',
        `The master key is missing: ${path} does not exist and VIGIL_MASTER_KEY is not set, but the database holds client secrets encrypted with master key ${stored.join(', ')}. Vigil does not generate a new key, which would leave them unreadable.`,
        {
          field: 'VIGIL_MASTER_KEY',
          remediation: (_, act) =>
            `Restore the original key: copy the backed-up master.key to ${path} (chmod 600), or set VIGIL_MASTER_KEY to the original key (its id, the first 16 hex characters of its SHA-256, is ${stored.join(' or ')}). If the key is lost for good: ${act({ do: 'resetMasterKey' })}, then for each integration ${act({ do: 'rotateSecret' })}.`,
        },
      );
    }
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(path, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
  }
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    throw new VigilError('MASTER_KEY_FILE_UNSAFE', `The key file ${path} is readable by other users (mode ${mode.toString(8)}).`, {
      field: path,
      remediation: `Run: chmod 600 ${path}`,
    });
  }
  const key = parseKey(readFileSync(path, 'utf8'), path);
  return { id: keyId(key), key };
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

function open(key: Buffer, iv: Buffer, tag: Buffer, ciphertext: Buffer, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

/**
 * Encrypts `secret` under a fresh data key wrapped by `kek`, binding `associatedData` (e.g. `int_…|<tenant id>`).
 * The returned envelope holds no plain text and is safe to store.
 */
export function encryptSecret(kek: KeyEncryptionKey, secret: string, associatedData: string): Envelope {
  const aad = Buffer.from(associatedData, 'utf8');
  const dataKey = randomBytes(32);
  const body = seal(dataKey, Buffer.from(secret, 'utf8'), aad);
  const wrapped = seal(kek.key, dataKey, aad);
  dataKey.fill(0);
  return {
    v: 1,
    alg: 'A256GCM',
    kid: kek.id,
    wrappedKey: Buffer.concat([wrapped.iv, wrapped.tag, wrapped.ciphertext]).toString('base64'),
    iv: body.iv.toString('base64'),
    tag: body.tag.toString('base64'),
    ciphertext: body.ciphertext.toString('base64'),
  };
}

/**
 * Opens an envelope made by {@link encryptSecret} with the same associated data.
 *
 * @throws VigilError `configuration` / `MASTER_KEY_MISMATCH` when another KEK wrapped it, or `SECRET_TAMPERED` when
 *   authentication fails (wrong associated data or modified bytes).
 */
export function decryptSecret(kek: KeyEncryptionKey, envelope: Envelope, associatedData: string): string {
  if (envelope.kid !== kek.id) {
    throw new VigilError('MASTER_KEY_MISMATCH', `This secret was encrypted with master key ${envelope.kid}, but the loaded key is ${kek.id}.`);
  }
  const aad = Buffer.from(associatedData, 'utf8');
  try {
    const w = Buffer.from(envelope.wrappedKey, 'base64');
    const dataKey = open(kek.key, w.subarray(0, 12), w.subarray(12, 28), w.subarray(28), aad);
    const plain = open(dataKey, Buffer.from(envelope.iv, 'base64'), Buffer.from(envelope.tag, 'base64'), Buffer.from(envelope.ciphertext, 'base64'), aad);
    dataKey.fill(0);
    return plain.toString('utf8');
  } catch (e) {
    throw new VigilError('SECRET_TAMPERED', 'A stored secret failed its integrity check and cannot be used.', {
      cause: e,
    });
  }
}
