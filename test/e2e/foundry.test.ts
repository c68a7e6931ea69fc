import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foundryGroundTruth } from '../../emulator/index.ts';
import type { FoundryAccountAttrs } from '../../src/sources/arm/streams/foundryAccounts.ts';
import type { FoundryDeploymentAttrs } from '../../src/sources/arm/streams/foundryDeployments.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import { loadChecks } from '../../src/checks/loader.ts';
import { listCheckResults } from '../../src/store/repositories/findings.ts';
import { listEstateObjects } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { world, type World } from './harness.ts';

describe('Azure AI Foundry inventory through ARM', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  beforeAll(async () => {
    w = await world({
      seed: 'foundry-e2e',
      sizes: {
        users: 10,
        guests: 1,
        groups: 2,
        environments: 1,
        agents: 2,
        powerBiWorkspaces: 0,
        apps: 0,
        flows: 0,
        connections: 0,
        foundryAccounts: 7,
        azureSubscriptions: 2,
      },
    });
    w.tenant.azure!.pageSize = 2; // exercise nextLink paging
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  }, 60_000);
  afterAll(async () => w.close());

  it('collects accounts, projects and deployments equal to the ground truth', async () => {
    const truth = foundryGroundTruth(w.tenant);
    expect(truth.deploymentsWithoutContentFilter).toBeGreaterThan(0);
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => e.stream.startsWith('foundry'))).toEqual([]);
    const accounts = await listEstateObjects<FoundryAccountAttrs>(rt.db, integrationId, 'foundryAccounts');
    expect(accounts).toHaveLength(truth.accounts);
    expect(accounts.filter((a) => a.attrs.publicNetworkAccess === 'Enabled' && a.attrs.disableLocalAuth === false)).toHaveLength(
      truth.accountsPublicWithLocalAuth,
    );
    expect(await listEstateObjects(rt.db, integrationId, 'foundryProjects')).toHaveLength(truth.projects);
    const deployments = await listEstateObjects<FoundryDeploymentAttrs>(rt.db, integrationId, 'foundryDeployments');
    expect(deployments).toHaveLength(truth.deployments);
    expect(deployments.filter((d) => d.attrs.contentFilterMissing)).toHaveLength(truth.deploymentsWithoutContentFilter);
  }, 60_000);

  it('reads account security settings, content filters and diagnostic settings, and the checks judge them as served', async () => {
    const truth = foundryGroundTruth(w.tenant);
    const sec = Object.values(truth.accountSecurity);
    expect(sec.some((a) => a.logs) && sec.some((a) => !a.logs)).toBe(true);
    expect(truth.raiPolicies).toBeGreaterThan(0);
    await collectIntegration(rt, integrationId);
    const accounts = await listEstateObjects<FoundryAccountAttrs>(rt.db, integrationId, 'foundryAccounts');
    for (const a of accounts) {
      const t = truth.accountSecurity[a.id]!;
      expect(a.attrs.encryptionKeySource === 'Microsoft.KeyVault', a.id).toBe(t.cmk);
      expect(a.attrs.identityType === 'SystemAssigned', a.id).toBe(t.identity);
      expect(a.attrs.restrictOutboundNetworkAccess, a.id).toBe(t.outboundRestricted);
    }
    expect(await listEstateObjects(rt.db, integrationId, 'foundryRaiPolicies')).toHaveLength(truth.raiPolicies);
    const integration = await rt.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    const checks = (await loadChecks()).filter((c) => c.metadata.area === 'foundry');
    await evaluateIntegration(rt.db, integration, { checks });
    const results = await listCheckResults(rt.db, integrationId);
    const status = (checkId: string, id: string) => results.find((r) => r.check_id === checkId && r.resource_id === id)?.status;
    for (const [id, t] of Object.entries(truth.accountSecurity)) {
      expect(status('foundry_diagnostic_logs_missing', id), id).toBe(t.logs ? 'pass' : 'fail');
      expect(status('foundry_customer_managed_key_missing', id), id).toBe(t.cmk ? 'pass' : 'fail');
      expect(status('foundry_managed_identity_missing', id), id).toBe(t.identity ? 'pass' : 'fail');
      expect(status('foundry_outbound_network_unrestricted', id), id).toBe(t.outboundRestricted ? 'pass' : 'fail');
    }
    // Content filters: built-in defaults pass the harm check; the weakened custom policy fails both checks.
    for (const d of w.tenant.azure!.accounts.flatMap((a) => a.deployments)) {
      const name = (d.properties as { raiPolicyName?: string }).raiPolicyName;
      const id = String(d.id);
      if (!name || id.includes('/deployments/text-embedding')) {
        // No filter named (the other check's), or an embedding model (takes no prompt to shield): left out.
        expect(status('foundry_content_filter_weak', id)).toBeUndefined();
        continue;
      }
      if (results.every((r) => r.resource_id !== id)) continue; // a deployment of an account of another kind
      expect(status('foundry_content_filter_weak', id), `${id} ${name}`).toBe(name === 'relaxed-filter' ? 'fail' : 'pass');
      expect(status('foundry_prompt_shields_disabled', id), `${id} ${name}`).toBe(name === 'relaxed-filter' || name === 'Microsoft.Default' ? 'fail' : 'pass');
    }
    expect(results.some((r) => r.check_id === 'foundry_content_filter_weak' && r.status === 'fail')).toBe(true);
  }, 60_000);

  it('a 403 on one account\'s diagnostic settings makes it not evaluated, never a fail for "no setting seen"', async () => {
    const target = w.tenant.azure!.accounts.find((a) => a.kind === 'AIServices')!;
    target.diagnosticSettingsForbidden = true;
    try {
      const run = await collectIntegration(rt, integrationId);
      expect(run.errors.filter((e) => e.stream === 'foundryDiagnosticSettings')).toHaveLength(1);
      const integration = await rt.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
      const check = (await loadChecks()).find((c) => c.metadata.id === 'foundry_diagnostic_logs_missing')!;
      await evaluateIntegration(rt.db, integration, { checks: [check] });
      const r = (await listCheckResults(rt.db, integrationId)).find((x) => x.check_id === check.metadata.id && x.resource_id === target.id);
      expect(r?.status).toBe('not_evaluated');
      expect(r?.reason).toContain('AuthorizationFailed');
    } finally {
      target.diagnosticSettingsForbidden = false;
    }
  }, 60_000);

  it('a second round after adds, changes and deletions equals the new ground truth', async () => {
    const azure = w.tenant.azure!;
    const gone = azure.accounts.find((a) => a.kind === 'OpenAI')!;
    azure.accounts.splice(azure.accounts.indexOf(gone), 1);
    const kept = azure.accounts.find((a) => a.kind === 'AIServices')!;
    kept.deployments.pop();
    kept.properties.publicNetworkAccess = 'Disabled';
    const truth = foundryGroundTruth(w.tenant);
    await collectIntegration(rt, integrationId);
    const accounts = await listEstateObjects<FoundryAccountAttrs>(rt.db, integrationId, 'foundryAccounts');
    expect(accounts).toHaveLength(truth.accounts);
    expect(accounts.find((a) => a.id === kept.id)?.attrs.publicNetworkAccess).toBe('Disabled');
    expect(await listEstateObjects(rt.db, integrationId, 'foundryDeployments')).toHaveLength(truth.deployments);
    const deleted = await rt.db.selectFrom('estate_objects').select('id').where('stream', '=', 'foundryAccounts').where('deleted_at', 'is not', null).execute();
    expect(deleted.map((d) => d.id)).toEqual([gone.id]);
  }, 60_000);

  it('without an Azure role the streams are not collected and the error names Reader', async () => {
    const saved = w.tenant.azure!.roleAssignments.splice(0);
    try {
      const run = await collectIntegration(rt, integrationId);
      const err = run.errors.find((e) => e.stream === 'foundryAccounts');
      expect(err?.code).toBe('AZURE_READER_MISSING');
      expect(err?.message).toContain('Reader');
      expect(err?.message).toContain('az role assignment create');
      expect(run.errors.find((e) => e.stream === 'foundryDeployments')?.code).toBe('PARENT_STREAM_FAILED');
    } finally {
      w.tenant.azure!.roleAssignments.push(...saved);
    }
  }, 60_000);

  it('a 403 AuthorizationFailed on one subscription errors the slice with the Reader remedy and keeps the others', async () => {
    const azure = w.tenant.azure!;
    const first = azure.roleAssignments[0]!;
    const original = first.roleDefinitionName;
    first.roleDefinitionName = 'Cost Management Reader';
    try {
      const truth = foundryGroundTruth(w.tenant);
      expect(truth.forbiddenSubscriptions).toBe(1);
      const run = await collectIntegration(rt, integrationId);
      const err = run.errors.find((e) => e.stream === 'foundryAccounts');
      expect(err?.code).toBe('AZURE_READER_MISSING');
      expect(err?.message).toContain(first.scope.split('/')[2]!);
      expect(run.streams.foundryAccounts.records).toBe(truth.accounts);
    } finally {
      first.roleDefinitionName = original;
    }
  }, 60_000);
});
