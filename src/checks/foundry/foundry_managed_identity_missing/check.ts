import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Foundry / Azure OpenAI accounts without a managed identity (`identity.type` absent or `None`): the resource
 * then reaches its connected resources (storage, AI Search, Key Vault) with keys or connection strings stored in its
 * connections. Source: Microsoft Learn "Configure Azure OpenAI with managed identities"
 * (azure/ai-foundry/openai/how-to/managed-identity); azure-rest-api-specs account `identity`.
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'foundryAccounts', 'foundryAccount', (a) => {
    const type = a.attrs.identityType;
    return type && type.toLowerCase() !== 'none'
      ? { status: 'pass', reason: `Managed identity: ${type}.` }
      : { status: 'fail', reason: 'The resource has no managed identity: connected resources are reached with stored keys.', detail: { identityType: type } };
  });
