import { describe, expect, it } from 'vitest';
import type { FoundryAccountAttrs } from '../../src/sources/arm/streams/foundryAccounts.ts';
import type { FoundryDeploymentAttrs } from '../../src/sources/arm/streams/foundryDeployments.ts';
import type { FoundryDiagnosticSettingAttrs } from '../../src/sources/arm/streams/foundryDiagnosticSettings.ts';
import type { FoundryRaiPolicyAttrs, RaiContentFilter } from '../../src/sources/arm/streams/foundryRaiPolicies.ts';
import { checkContext, estateRow, resultFor, runCheck, sliceError, streamError } from '../support/checks.ts';

const account = (over: Partial<FoundryAccountAttrs> = {}): FoundryAccountAttrs => ({
  subscriptionId: 's1',
  resourceGroup: 'rg',
  kind: 'AIServices',
  location: 'eastus',
  sku: 'S0',
  endpoint: 'https://a.cognitiveservices.azure.com/',
  publicNetworkAccess: 'Disabled',
  disableLocalAuth: true,
  networkDefaultAction: 'Deny',
  provisioningState: 'Succeeded',
  restrictOutboundNetworkAccess: true,
  allowedFqdnList: ['a.blob.core.windows.net'],
  encryptionKeySource: 'Microsoft.KeyVault',
  identityType: 'SystemAssigned',
  ...over,
});
const accounts = (...rows: [string, Partial<FoundryAccountAttrs>][]) => rows.map(([id, over]) => estateRow('foundryAccounts', id, account(over)));
const noReader = streamError('foundryAccounts', 'AZURE_READER_MISSING', 'Grant the Reader role on the subscriptions holding Azure AI Foundry resources.');

const CASES: { id: string; weak: Partial<FoundryAccountAttrs>; nearMiss: Partial<FoundryAccountAttrs>; reason: string }[] = [
  {
    id: 'foundry_customer_managed_key_missing',
    weak: { encryptionKeySource: 'Microsoft.CognitiveServices' },
    nearMiss: { encryptionKeySource: 'microsoft.keyvault' },
    reason: 'Microsoft-managed',
  },
  { id: 'foundry_managed_identity_missing', weak: { identityType: 'None' }, nearMiss: { identityType: 'UserAssigned' }, reason: 'no managed identity' },
  {
    id: 'foundry_outbound_network_unrestricted',
    weak: { restrictOutboundNetworkAccess: false },
    nearMiss: { allowedFqdnList: [] },
    reason: 'not restricted',
  },
];

/** The hardened account and a near miss pass; the weakened account fails with its reason, and so does an absent property. */
async function passesAndFails(id: string): Promise<void> {
  const c = CASES.find((x) => x.id === id)!;
  const absent = Object.fromEntries(Object.keys(c.weak).map((k) => [k, null]));
  const r = await runCheck(c.id, checkContext({ estate: { foundryAccounts: accounts(['ok', c.nearMiss], ['weak', c.weak], ['absent', absent]) } }));
  expect(resultFor(r, 'ok')?.status).toBe('pass');
  expect(resultFor(r, 'weak')).toMatchObject({ status: 'fail', resourceType: 'foundryAccount', reason: expect.stringContaining(c.reason) });
  expect(resultFor(r, 'absent')?.status).toBe('fail');
}

/** Not evaluated, naming the role, when the accounts stream did not run (no Reader role). */
async function notEvaluatedWithoutReader(id: string): Promise<void> {
  expect(await runCheck(id, checkContext({ checkpoints: [noReader] }))).toEqual([
    expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining('Reader') }),
  ]);
}

describe('foundry_customer_managed_key_missing', () => {
  it('passes the hardened account and a near miss; fails the weakened one and an absent property', () =>
    passesAndFails('foundry_customer_managed_key_missing'));
  it('is not evaluated without the Reader role', () => notEvaluatedWithoutReader('foundry_customer_managed_key_missing'));
});

describe('foundry_managed_identity_missing', () => {
  it('passes the hardened account and a near miss; fails the weakened one and an absent property', () => passesAndFails('foundry_managed_identity_missing'));
  it('is not evaluated without the Reader role', () => notEvaluatedWithoutReader('foundry_managed_identity_missing'));
});

describe('foundry_outbound_network_unrestricted', () => {
  it('passes the hardened account and a near miss; fails the weakened one and an absent property', () =>
    passesAndFails('foundry_outbound_network_unrestricted'));
  it('is not evaluated without the Reader role', () => notEvaluatedWithoutReader('foundry_outbound_network_unrestricted'));
});

describe('foundry_diagnostic_logs_missing', () => {
  const setting = (accountId: string, id: string, over: Partial<FoundryDiagnosticSettingAttrs> = {}) =>
    estateRow(
      'foundryDiagnosticSettings',
      id,
      {
        accountId,
        subscriptionId: 's1',
        workspaceId: '/subscriptions/s1/resourceGroups/rg/providers/Microsoft.OperationalInsights/workspaces/law',
        storageAccountId: null,
        eventHubAuthorizationRuleId: null,
        marketplacePartnerId: null,
        enabledLogs: ['audit', 'allLogs'],
        ...over,
      },
      { sliceKey: accountId },
    );
  it('passes an account sending logs, fails one with no setting and one sending metrics only or to no destination', async () => {
    const r = await runCheck(
      'foundry_diagnostic_logs_missing',
      checkContext({
        estate: {
          foundryAccounts: accounts(['logged', {}], ['none', {}], ['metrics', {}], ['nowhere', {}]),
          foundryDiagnosticSettings: [setting('logged', 'd1'), setting('metrics', 'd2', { enabledLogs: [] }), setting('nowhere', 'd3', { workspaceId: null })],
        },
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['logged', 'pass'],
      ['none', 'fail'],
      ['metrics', 'fail'],
      ['nowhere', 'fail'],
    ]);
    expect(resultFor(r, 'none')?.reason).toContain('No diagnostic setting');
  });
  it('is not evaluated for an account whose settings were refused (403), and without the stream — never a fail for "none seen"', async () => {
    const r = await runCheck(
      'foundry_diagnostic_logs_missing',
      checkContext({
        estate: { foundryAccounts: accounts(['locked', {}]) },
        checkpoints: [
          sliceError(
            'foundryDiagnosticSettings',
            'locked',
            'Forbidden',
            "does not have authorization to perform action 'Microsoft.Insights/diagnosticSettings/read'",
          ),
        ],
      }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceId: 'locked', status: 'not_evaluated', reason: expect.stringContaining('diagnosticSettings/read') })]);
    expect(await runCheck('foundry_diagnostic_logs_missing', checkContext({ checkpoints: [streamError('foundryDiagnosticSettings')] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
  });
});

// --- content filters ---------------------------------------------------------------------------------------------------

const deployment = (id: string, rai: string | null, over: Partial<FoundryDeploymentAttrs> = {}) =>
  estateRow(
    'foundryDeployments',
    id,
    {
      accountId: 'acc',
      subscriptionId: 's1',
      modelFormat: 'OpenAI',
      modelName: 'gpt-4o',
      modelVersion: '2024-11-20',
      sku: 'Standard',
      capacity: 10,
      raiPolicyName: rai,
      contentFilterMissing: rai === null,
      provisioningState: 'Succeeded',
      ...over,
    },
    { sliceKey: 'acc' },
  );
const harm = (source: 'Prompt' | 'Completion', over: Partial<RaiContentFilter> = {}): RaiContentFilter[] =>
  ['Hate', 'Sexual', 'Selfharm', 'Violence'].map((name) => ({ name, source, enabled: true, blocking: true, severityThreshold: 'Medium', ...over }));
const jailbreak = (over: Partial<RaiContentFilter> = {}): RaiContentFilter => ({
  name: 'Jailbreak',
  source: 'Prompt',
  enabled: true,
  blocking: true,
  severityThreshold: null,
  ...over,
});
const policy = (name: string, filters: RaiContentFilter[], over: Partial<FoundryRaiPolicyAttrs> = {}) =>
  estateRow(
    'foundryRaiPolicies',
    `/acc/raiPolicies/${name}`,
    { accountId: 'acc', subscriptionId: 's1', basePolicyName: 'Microsoft.DefaultV2', mode: 'Blocking', contentFilters: filters, ...over },
    { sliceKey: 'acc', name },
  );
const filterCtx = (deployments: ReturnType<typeof deployment>[], policies: ReturnType<typeof policy>[], checkpoints: Parameters<typeof checkContext>[0] = {}) =>
  checkContext({ estate: { foundryAccounts: accounts(['acc', {}]), foundryDeployments: deployments, foundryRaiPolicies: policies }, ...checkpoints });

describe('foundry_content_filter_weak', () => {
  it('passes the built-in defaults and a custom policy at Medium; fails High-only, annotate-only and disabled categories', async () => {
    const r = await runCheck(
      'foundry_content_filter_weak',
      filterCtx(
        [
          deployment('d-v2', 'Microsoft.DefaultV2'),
          deployment('d-v1', 'Microsoft.Default'),
          deployment('d-strict', 'strict'),
          deployment('d-relaxed', 'relaxed'),
          deployment('d-none', null),
        ],
        [
          policy('strict', [...harm('Prompt', { severityThreshold: 'Low' }), ...harm('Completion'), jailbreak()]),
          policy('relaxed', [
            ...harm('Prompt', { severityThreshold: 'High' }),
            ...harm('Completion').map((f) => (f.name === 'Violence' ? { ...f, enabled: false } : f.name === 'Hate' ? { ...f, blocking: false } : f)),
          ]),
        ],
      ),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['d-v2', 'pass'],
      ['d-v1', 'pass'],
      ['d-strict', 'pass'],
      ['d-relaxed', 'fail'],
    ]);
    const reason = resultFor(r, 'd-relaxed')?.reason ?? '';
    expect(reason).toContain('hate (prompt) high severity only');
    expect(reason).toContain('violence (completion) off');
    expect(reason).toContain('hate (completion) annotate only');
  });
  it('a category a custom policy does not list takes its built-in base; with an unknown base it counts as not configured', async () => {
    const r = await runCheck(
      'foundry_content_filter_weak',
      filterCtx(
        [deployment('d-inherits', 'partial'), deployment('d-orphan', 'orphan')],
        [policy('partial', [harm('Prompt')[0]!]), policy('orphan', [harm('Prompt')[0]!], { basePolicyName: null })],
      ),
    );
    expect(resultFor(r, 'd-inherits')?.status).toBe('pass');
    expect(resultFor(r, 'd-orphan')).toMatchObject({ status: 'fail', reason: expect.stringContaining('not configured') });
  });
  it('is not evaluated for a custom policy that is not listed, when the account policies were refused, and without the stream; embeddings are left out', async () => {
    const r = await runCheck(
      'foundry_content_filter_weak',
      filterCtx([deployment('d-missing', 'gone'), deployment('d-embed', 'gone', { modelName: 'text-embedding-3-large' })], [], {
        checkpoints: [sliceError('foundryRaiPolicies', 'acc', 'Forbidden', 'AuthorizationFailed on raiPolicies')],
      }),
    );
    expect(r.filter((x) => x.resourceType === 'foundryDeployment')).toEqual([
      expect.objectContaining({ resourceId: 'd-missing', status: 'not_evaluated', reason: expect.stringContaining('AuthorizationFailed') }),
    ]);
    expect(r.filter((x) => x.status !== 'not_evaluated')).toEqual([]);
    expect((await runCheck('foundry_content_filter_weak', filterCtx([deployment('d-missing', 'gone')], [])))[0]).toMatchObject({
      status: 'not_evaluated',
      reason: expect.stringContaining("'gone' is not among"),
    });
    expect(await runCheck('foundry_content_filter_weak', checkContext({ checkpoints: [streamError('foundryRaiPolicies')] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
  });
});

describe('foundry_prompt_shields_disabled', () => {
  it('passes DefaultV2 and a custom blocking Jailbreak filter; fails Microsoft.Default, annotate-only and off', async () => {
    const r = await runCheck(
      'foundry_prompt_shields_disabled',
      filterCtx(
        [
          deployment('d-v2', 'microsoft.defaultv2'),
          deployment('d-v1', 'Microsoft.Default'),
          deployment('d-block', 'block'),
          deployment('d-annotate', 'annotate'),
          deployment('d-off', 'off'),
        ],
        [
          policy('block', [...harm('Prompt'), jailbreak()]),
          policy('annotate', [...harm('Prompt'), jailbreak({ blocking: false })]),
          policy('off', [...harm('Prompt'), jailbreak({ enabled: false, blocking: false })]),
        ],
      ),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['d-v2', 'pass'],
      ['d-v1', 'fail'],
      ['d-block', 'pass'],
      ['d-annotate', 'fail'],
      ['d-off', 'fail'],
    ]);
    expect(resultFor(r, 'd-annotate')?.reason).toContain('only annotates');
  });
  it('is not evaluated without the accounts stream (no Reader role)', async () => {
    expect(await runCheck('foundry_prompt_shields_disabled', checkContext({ checkpoints: [noReader] }))).toEqual([
      expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining('Reader') }),
    ]);
  });
});
