import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentComponentsGroundTruth, COMPONENT_KINDS, type BotComponent } from '../../emulator/index.ts';
import type { AgentComponentAttrs } from '../../src/sources/dataverse/streams/agentComponents.ts';
import type { AgentSettingsAttrs } from '../../src/sources/dataverse/streams/agentSettings.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { listEstateObjects } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { world, type World } from './harness.ts';

/** Live components per kind as Vigil stored them. */
async function kinds(rt: Runtime, integrationId: string): Promise<Record<string, number>> {
  const rows = await listEstateObjects<AgentComponentAttrs>(rt.db, integrationId, 'agentComponents');
  const out = Object.fromEntries(COMPONENT_KINDS.map((k) => [k, 0])) as Record<string, number>;
  for (const r of rows) out[r.attrs.kind] = (out[r.attrs.kind] ?? 0) + 1;
  return out;
}

describe('Copilot Studio agent components', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  beforeAll(async () => {
    w = await world({
      seed: 'agentcomponents-e2e',
      sizes: { users: 20, guests: 2, groups: 4, environments: 4, agents: 12, powerBiWorkspaces: 0, apps: 0, flows: 0, connections: 0, foundryAccounts: 0 },
    });
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  }, 60_000);
  afterAll(async () => w.close());

  it('collects every component of readable environments, classified per kind, and errors only unreadable slices', async () => {
    const truth = agentComponentsGroundTruth(w.tenant);
    expect(truth.unreadableEnvironments).toBeGreaterThan(0);
    expect(truth.byKind.knowledge + truth.byKind.action + truth.byKind.mcp).toBeGreaterThan(0);
    const run = await collectIntegration(rt, integrationId);
    expect(run.streams.agentComponents.records).toBe(truth.components);
    expect(await kinds(rt, integrationId)).toEqual(truth.byKind);
    const errored = run.errors.filter((e) => e.stream === 'agentComponents');
    expect(errored).toHaveLength(truth.unreadableEnvironments);
    expect(run.streams.agentComponents.slices - errored.length).toBe(truth.readableEnvironments);

    const rows = await listEstateObjects<AgentComponentAttrs>(rt.db, integrationId, 'agentComponents');
    expect(rows.filter((r) => r.attrs.tool?.connectionMode === 'maker').length).toBe(truth.makerCredentialTools);
    expect(rows.filter((r) => r.attrs.topic?.callsHttp).length).toBe(truth.topicsCallingHttp);
    const bySource: Record<string, number> = {};
    for (const r of rows) if (r.attrs.knowledge) bySource[r.attrs.knowledge.sourceKind ?? '?'] = (bySource[r.attrs.knowledge.sourceKind ?? '?'] ?? 0) + 1;
    expect(bySource).toEqual(truth.knowledgeBySourceKind);
    expect(rows.filter((r) => r.attrs.kind === 'instructions').every((r) => (r.attrs.instructions?.length ?? 0) > 0)).toBe(true);

    const settings = await listEstateObjects<AgentSettingsAttrs>(rt.db, integrationId, 'agentSettings');
    expect(settings).toHaveLength(truth.agentSettings);
    expect(settings.every((s) => s.attrs.configurationParsed && s.attrs.channels?.some((c) => c.family === 'teams'))).toBe(true);

    // No instruction secret anywhere in the database in plain text.
    // One in an agent's instructions, one in a child agent's (AgentDialog settings.instructions): both inspected.
    expect(truth.plantedSecrets.length).toBe(2);
    const readableSecrets = rows.filter((r) => r.attrs.instructions?.containsSecret).length;
    expect(truth.plantedSecretsReadable).toBe(2);
    expect(rows.filter((r) => r.attrs.kind === 'agent' && r.attrs.agent?.relation === 'child' && r.attrs.instructions?.containsSecret)).toHaveLength(1);
    expect(readableSecrets).toBe(truth.plantedSecretsReadable);
    const all =
      JSON.stringify(await rt.db.selectFrom('estate_objects').selectAll().execute()) + JSON.stringify(await rt.db.selectFrom('agents').selectAll().execute());
    for (const secret of truth.plantedSecrets) expect(all).not.toContain(secret);
  }, 60_000);

  it('a second round after adds, changes and deletions equals the new ground truth and marks deletions', async () => {
    const org = w.tenant.environments.find(
      (e) => e.dataverse && agentComponentsGroundTruth(w.tenant).readableEnvironments > 0 && e.dataverse.appUsers.some((a) => a.appId === w.app.appId),
    )!.dataverse!;
    const comps = org.botcomponents!;
    const removed = comps.splice(0, 2);
    const changed = comps[0] as BotComponent;
    changed.data = 'kind: KnowledgeSourceConfiguration\nsource:\n  kind: PublicSiteSearchSource\n  site: https://changed.example.org/\n';
    changed.modifiedon = new Date().toISOString();
    comps.push({
      ...changed,
      botcomponentid: '0f0f0f0f-0000-4000-8000-000000000001',
      schemaname: 'new.topic',
      componenttype: 9,
      data: 'kind: AdaptiveDialog\nbeginDialog:\n  kind: OnRecognizedIntent\n  id: main\n  actions: []\n',
    });
    const truth = agentComponentsGroundTruth(w.tenant);
    const run = await collectIntegration(rt, integrationId);
    expect(run.streams.agentComponents.records).toBe(truth.components);
    expect(await kinds(rt, integrationId)).toEqual(truth.byKind);
    const deleted = await rt.db.selectFrom('estate_objects').select('id').where('stream', '=', 'agentComponents').where('deleted_at', 'is not', null).execute();
    expect(deleted.map((d) => d.id).sort()).toEqual(removed.map((r) => r.botcomponentid).sort());
    const row = (await listEstateObjects<AgentComponentAttrs>(rt.db, integrationId, 'agentComponents')).find((r) => r.id === changed.botcomponentid)!;
    expect(row.attrs.knowledge?.host).toBe('changed.example.org');
  }, 60_000);
});
