import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foundryGroundTruth } from '../../emulator/index.ts';
import type { FoundryAccountAttrs } from '../../src/sources/arm/streams/foundryAccounts.ts';
import type { FoundryDeploymentAttrs } from '../../src/sources/arm/streams/foundryDeployments.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
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
