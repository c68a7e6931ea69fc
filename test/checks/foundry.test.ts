import { describe, expect, it } from 'vitest';
import type { FoundryAccountAttrs } from '../../src/sources/arm/streams/foundryAccounts.ts';
import type { FoundryDeploymentAttrs } from '../../src/sources/arm/streams/foundryDeployments.ts';
import { checkContext, estateRow, resultFor, runCheck, streamError } from '../support/checks.ts';

const account = (over: Partial<FoundryAccountAttrs> = {}): FoundryAccountAttrs => ({
  subscriptionId: 's1',
  resourceGroup: 'rg',
  kind: 'AIServices',
  location: 'eastus',
  sku: 'S0',
  endpoint: 'https://a.cognitiveservices.azure.com/',
  publicNetworkAccess: 'Disabled',
  disableLocalAuth: true,
  networkDefaultAction: null,
  provisioningState: 'Succeeded',
  restrictOutboundNetworkAccess: null,
  allowedFqdnList: [],
  encryptionKeySource: null,
  identityType: null,
  ...over,
});
const deployment = (over: Partial<FoundryDeploymentAttrs> = {}): FoundryDeploymentAttrs => ({
  accountId: 'acc',
  subscriptionId: 's1',
  modelFormat: 'OpenAI',
  modelName: 'gpt-4o',
  modelVersion: '2024-11-20',
  sku: 'Standard',
  capacity: 10,
  raiPolicyName: 'Microsoft.DefaultV2',
  contentFilterMissing: false,
  provisioningState: 'Succeeded',
  ...over,
});
const noReader = streamError('foundryAccounts', 'AZURE_READER_MISSING', 'Grant the Reader role on the subscriptions holding Azure AI Foundry resources.');

describe('foundry_deployment_without_content_filter', () => {
  it('passes a deployment with a content filter', async () => {
    const r = await runCheck(
      'foundry_deployment_without_content_filter',
      checkContext({ estate: { foundryDeployments: [estateRow('foundryDeployments', 'd1', deployment())] } }),
    );
    expect(r[0]).toMatchObject({ status: 'pass', reason: expect.stringContaining('Microsoft.DefaultV2') });
  });
  it('fails a deployment that names no content filter', async () => {
    const r = await runCheck(
      'foundry_deployment_without_content_filter',
      checkContext({
        estate: {
          foundryDeployments: [
            estateRow('foundryDeployments', 'd1', deployment()),
            estateRow('foundryDeployments', 'd2', deployment({ raiPolicyName: null, contentFilterMissing: true })),
          ],
        },
      }),
    );
    expect(resultFor(r, 'd2')).toMatchObject({ status: 'fail', resourceType: 'foundryDeployment' });
    expect(resultFor(r, 'd1')?.status).toBe('pass');
  });
  it('is not evaluated without the Reader role, naming it', async () => {
    const r = await runCheck('foundry_deployment_without_content_filter', checkContext({ checkpoints: [noReader] }));
    expect(r).toEqual([expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining('Reader') })]);
  });
});

describe('foundry_public_network_access', () => {
  it('passes an account with public access disabled or deny-by-default rules', async () => {
    const r = await runCheck(
      'foundry_public_network_access',
      checkContext({
        estate: {
          foundryAccounts: [
            estateRow('foundryAccounts', 'a1', account()),
            estateRow('foundryAccounts', 'a2', account({ publicNetworkAccess: 'Enabled', networkDefaultAction: 'Deny' })),
          ],
        },
      }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails an account open to every network (also when ARM omits the field)', async () => {
    const r = await runCheck(
      'foundry_public_network_access',
      checkContext({ estate: { foundryAccounts: [estateRow('foundryAccounts', 'a1', account({ publicNetworkAccess: null }))] } }),
    );
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('enabled (default)') });
  });
  it('is not evaluated without the Reader role', async () => {
    expect((await runCheck('foundry_public_network_access', checkContext({ checkpoints: [noReader] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('foundry_local_auth_enabled', () => {
  it('passes an account with key authentication disabled', async () => {
    expect(
      (await runCheck('foundry_local_auth_enabled', checkContext({ estate: { foundryAccounts: [estateRow('foundryAccounts', 'a1', account())] } })))[0]?.status,
    ).toBe('pass');
  });
  it('fails an account that accepts API keys', async () => {
    expect(
      (
        await runCheck(
          'foundry_local_auth_enabled',
          checkContext({ estate: { foundryAccounts: [estateRow('foundryAccounts', 'a1', account({ disableLocalAuth: null }))] } }),
        )
      )[0]?.status,
    ).toBe('fail');
  });
  it('is not evaluated without the Reader role', async () => {
    expect((await runCheck('foundry_local_auth_enabled', checkContext({ checkpoints: [noReader] })))[0]?.status).toBe('not_evaluated');
  });
});
