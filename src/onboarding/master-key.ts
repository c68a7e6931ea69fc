import { envelopeKeyId, type KeyEncryptionKey } from '../platform/crypto/envelope.ts';
import type { Logger } from '../platform/log/index.ts';
import type { Executor } from '../store/db.ts';
import { nowIso } from '../store/db.ts';
import * as repo from '../store/repositories/integrations.ts';

/** An integration whose stored secret was forgotten because the loaded master key cannot open it. */
export interface ForgottenSecret {
  id: string;
  name: string;
  /** Key id (`Envelope.kid`) the forgotten secret was encrypted with. */
  keyId: string;
}

/**
 * The knowing way out of a lost master key (issue 14, point 7): `vigil master-key reset --forget-secrets` starts the
 * runtime with a new key file (see `loadKeyEncryptionKey`'s `replaceLostKey`) and then calls this, which forgets every
 * stored client secret that the loaded key did not encrypt — those can never be opened again. Each such integration
 * gets credential state `rejected` with the reason, so collections stop with `CREDENTIALS_EXPIRED` (whose remediation
 * names the rotation in each surface's words) instead of failing on `MASTER_KEY_MISMATCH`. Secrets the loaded key
 * opens are kept.
 * @returns the integrations whose secret was forgotten, by name.
 */
export async function forgetUnreadableSecrets(deps: { db: Executor; kek: KeyEncryptionKey; logger: Logger }): Promise<ForgottenSecret[]> {
  const forgotten: ForgottenSecret[] = [];
  const at = nowIso();
  for (const row of await repo.listSecretEnvelopes(deps.db)) {
    const keyId = envelopeKeyId(row.secret_envelope) ?? 'unknown';
    if (keyId === deps.kek.id) continue;
    await repo.forgetSecret(
      deps.db,
      row.id,
      `The client secret was encrypted with master key ${keyId}, which was lost and replaced by ${deps.kek.id}; the secret was forgotten and must be entered again.`,
      at,
    );
    forgotten.push({ id: row.id, name: row.name, keyId });
  }
  if (forgotten.length)
    deps.logger.warn(
      { integrations: forgotten.map((f) => f.id), keyId: deps.kek.id },
      'secrets encrypted with a lost master key forgotten; enter them again with rotate-secret',
    );
  return forgotten;
}
