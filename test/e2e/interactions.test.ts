import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCopilotInteractions, copilotGroundTruth, COPILOT_SKU_ID } from '../../emulator/index.ts';
import type { CopilotInteractionAttrs } from '../../src/sources/graph/streams/copilotInteractions.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { world, type World } from './harness.ts';

const SIZES = { users: 40, guests: 3, groups: 4, environments: 1, agents: 0, powerBiWorkspaces: 0, copilotUsersPercent: 50, copilotPairsPerUser: 8 };

interface Row {
  id: string;
  slice_key: string;
  raw: string;
  attrs: string;
  deleted_at: string | null;
}

async function rows(rt: Runtime, integrationId: string): Promise<Row[]> {
  return (await rt.db
    .selectFrom('estate_objects')
    .select(['id', 'slice_key', 'raw', 'attrs', 'deleted_at'])
    .where('integration_id', '=', integrationId)
    .where('stream', '=', 'copilotInteractions')
    .execute()) as Row[];
}

const graphInteractionCalls = (w: World) =>
  w.emulator.control.requests({ service: 'graph' }).filter((r) => r.path.includes('/interactionHistory/getAllEnterpriseInteractions'));
const userOf = (path: string) => /\/copilot\/users\/([^/]+)\//.exec(path)![1]!;

describe('Copilot interaction history collection and content inspection', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  const licensedIds = () => new Set(w.tenant.users.filter((u) => u.assignedLicenses?.some((l) => l.skuId === COPILOT_SKU_ID)).map((u) => u.id));

  beforeAll(async () => {
    w = await world({ seed: 'copilot-e2e', sizes: SIZES });
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  });
  afterAll(async () => w.close());

  it('collects every interaction of the licensed users, flags exactly the planted content and stores none of it in clear', async () => {
    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => e.stream === 'copilotInteractions' || e.stream === 'users')).toEqual([]);
    const truth = copilotGroundTruth(w.tenant);
    expect(truth.licensedUsers).toBeGreaterThan(0);

    // One request per licensed user (each history fits one page of 100), none for the others.
    const calls = graphInteractionCalls(w);
    expect(calls.map((c) => userOf(c.path)).sort()).toEqual([...licensedIds()].sort());

    const stored = await rows(rt, integrationId);
    expect(stored).toHaveLength(truth.interactions);
    const attrs = stored.map((r) => JSON.parse(r.attrs) as CopilotInteractionAttrs);
    expect(attrs.filter((a) => a.inspection.secrets > 0)).toHaveLength(truth.withSecrets);
    expect(attrs.filter((a) => a.inspection.personal > 0)).toHaveLength(truth.withPersonal);
    for (const a of attrs) {
      expect(a.userId).toBe(stored.find((r) => r.id.startsWith(`${a.userId}/`))!.slice_key);
      if (a.inspection.secrets > 0) expect(a.inspection.types.some((t) => t === 'aws_access_key' || t === 'azure_storage_connection_string')).toBe(true);
      if (a.inspection.personal > 0) expect(a.inspection.types).toEqual(expect.arrayContaining(['card_number', 'us_ssn']));
    }

    // The database holds none of the planted values in clear; the near-misses stay as they were (not flagged).
    const dump = stored.map((r) => `${r.raw}\n${r.attrs}`).join('\n');
    expect(truth.plantedValues.length).toBeGreaterThan(0);
    for (const v of truth.plantedValues) expect(dump).not.toContain(v);
    expect(truth.nearMissValues.length).toBeGreaterThan(0);
    for (const v of truth.nearMissValues) expect(dump).toContain(v);
    const flaggedNearMissOnly = stored.filter((r) => {
      const raw = JSON.parse(r.raw) as { body: { content: string } };
      const a = JSON.parse(r.attrs) as CopilotInteractionAttrs;
      return raw.body.content.includes('Reference numbers') && !raw.body.content.includes('[REDACTED') && a.inspection.secrets + a.inspection.personal > 0;
    });
    expect(flaggedNearMissOnly).toEqual([]);
  });

  it('a second round reads only the new interactions, one filtered request per licensed user, and keeps the old ones', async () => {
    const before = await rows(rt, integrationId);
    const added = addCopilotInteractions(w.tenant, { pairs: 2, seed: 'round-2', after: w.tenant.referenceTime });
    const addedCount = Object.values(added).reduce((n, l) => n + l.length, 0);
    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integrationId, { full: true });
    expect(run.errors.filter((e) => e.stream === 'copilotInteractions')).toEqual([]);
    expect(run.streams.copilotInteractions.records).toBe(addedCount);
    expect(run.streams.copilotInteractions.incrementalSlices).toBe(licensedIds().size);

    const calls = graphInteractionCalls(w);
    expect(calls.map((c) => userOf(c.path)).sort()).toEqual([...licensedIds()].sort());
    for (const c of calls) expect(decodeURIComponent(c.path)).toMatch(/\$filter=createdDateTime gt \d{4}-\d{2}-\d{2}T/);

    const after = await rows(rt, integrationId);
    expect(after).toHaveLength(before.length + addedCount);
    expect(after.filter((r) => r.deleted_at !== null)).toEqual([]);
    expect(after).toHaveLength(copilotGroundTruth(w.tenant).interactions);
    for (const v of copilotGroundTruth(w.tenant).plantedValues) expect(after.map((r) => r.raw + r.attrs).join('\n')).not.toContain(v);
  });
});

describe('Copilot interaction history without the permission', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({ seed: 'copilot-noperm', sizes: SIZES, permissions: ['User.Read.All', 'GroupMember.Read.All', 'ActivityFeed.Read', 'Tenant.Read.All'] });
  });
  afterAll(async () => w.close());

  it('records the stream as not collected, naming AiEnterpriseInteraction.Read.All, and calls nothing', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integration.id);
    const errors = run.errors.filter((e) => e.stream === 'copilotInteractions');
    expect(errors).toEqual([expect.objectContaining({ code: 'MISSING_PERMISSION', message: expect.stringContaining('AiEnterpriseInteraction.Read.All') })]);
    expect(graphInteractionCalls(w)).toEqual([]);
    expect(await rows(rt, integration.id)).toEqual([]);
  });
});
