import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Foundry / Azure OpenAI accounts whose data at rest (fine-tuning files, uploaded files, agent threads and
 * vector stores) is encrypted with a Microsoft-managed key: `properties.encryption.keySource` not `Microsoft.KeyVault`
 * (absent = Microsoft-managed). Source: Microsoft Learn "Customer-managed keys for Azure AI services encryption"
 * (azure/ai-services/encryption/cognitive-services-encryption-keys-portal); azure-rest-api-specs `Encryption.keySource`.
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'foundryAccounts', 'foundryAccount', (a) =>
    a.attrs.encryptionKeySource?.toLowerCase() === 'microsoft.keyvault'
      ? { status: 'pass', reason: 'Data at rest is encrypted with a customer-managed key (Key Vault).' }
      : {
          status: 'fail',
          reason: `Data at rest is encrypted with a Microsoft-managed key (${a.attrs.encryptionKeySource ?? 'default'}).`,
          detail: { keySource: a.attrs.encryptionKeySource },
        },
  );
