import { afterEach, describe, expect, it } from 'vitest';
import { ensureOrganization } from '../../src/access/index.ts';
import { insertIntegration } from '../../src/store/repositories/integrations.ts';
import {
  conversationTimeline,
  deleteProtectionPolicy,
  getProtectionEndpoint,
  getProtectionEndpointOfIntegration,
  insertAgentSteps,
  insertProtectionEndpoint,
  listAgentSteps,
  listProtectionEndpoints,
  listProtectionPolicies,
  markProtectionAnalysis,
  markProtectionValidated,
  recordProtectionAuthFailure,
  updateProtectionEndpoint,
  upsertProtectionPolicy,
  type AgentStepRow,
} from '../../src/store/repositories/protection.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';

const T = '11111111-1111-4111-8111-111111111111';
const APP = '22222222-2222-4222-8222-222222222222';

async function seed(store: TestStore) {
  const org = (await ensureOrganization(store.db, 'Contoso')).id;
  const at = '2026-01-01T00:00:00.000Z';
  await insertIntegration(store.db, {
    id: 'int_a',
    organization_id: org,
    name: 'contoso',
    mode: 'customer-app',
    tenant_id: T,
    client_id: APP,
    sp_object_id: null,
    secret_envelope: null,
    secret_expires_at: null,
    verification: null,
    verified_at: null,
    created_at: at,
    updated_at: at,
  });
  await insertProtectionEndpoint(store.db, {
    id: 'pe_abc',
    organization_id: org,
    integration_id: 'int_a',
    app_id: APP,
    audiences: JSON.stringify([APP]),
    created_at: at,
    updated_at: at,
    validated_at: null,
    first_analysis_at: null,
    last_analysis_at: null,
    auth_failures: 0,
    last_auth_failure_at: null,
    last_auth_failure_reason: null,
  });
  return org;
}

function step(org: string, id: string, receivedAt: string, conversation: string, agent = 'agent-1', blocked = false): AgentStepRow {
  return {
    id,
    organization_id: org,
    integration_id: 'int_a',
    endpoint_id: 'pe_abc',
    received_at: receivedAt,
    correlation_id: 'c',
    environment_id: 'env',
    agent_id: agent,
    agent_name: 'Agent \u0000 one',
    user_id: 'u',
    conversation_id: conversation,
    message_id: 'm',
    plan_id: 'p',
    plan_step_id: 'ps',
    channel_id: 'pva-studio',
    tool_id: 'tool',
    tool_name: 'Send email',
    tool_type: 'ToolDefinition',
    block_action: blocked ? 1 : 0,
    would_block: 0,
    mode: 'block',
    reason_code: blocked ? 101 : 0,
    reason: 'r',
    decided_by: null,
    verdicts: '[]',
    policy_ids: '[]',
    latency_ms: 12.5,
    engine_ms: 3.25,
    timed_out: 0,
    client_ip: null,
  };
}

describe.each(DIALECTS)('protection repository on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('keeps one endpoint per integration and records validation, analyses and refused calls', async () => {
    store = await freshStore(dialect);
    const org = await seed(store);
    await expect(insertProtectionEndpoint(store.db, { ...(await getProtectionEndpoint(store.db, 'pe_abc'))!, id: 'pe_other' })).rejects.toThrow();
    await markProtectionValidated(store.db, 'pe_abc', '2026-01-02T00:00:00.000Z');
    await markProtectionAnalysis(store.db, 'pe_abc', '2026-01-03T00:00:00.000Z');
    await markProtectionAnalysis(store.db, 'pe_abc', '2026-01-04T00:00:00.000Z');
    await recordProtectionAuthFailure(store.db, 'pe_abc', 'tenant', '2026-01-05T00:00:00.000Z');
    await recordProtectionAuthFailure(store.db, 'pe_abc', 'expired', '2026-01-06T00:00:00.000Z');
    expect(await updateProtectionEndpoint(store.db, 'pe_abc', { app_id: APP, audiences: '["x"]' }, '2026-01-07T00:00:00.000Z')).toBe(true);
    expect(await updateProtectionEndpoint(store.db, 'pe_none', { app_id: APP, audiences: '[]' }, '2026-01-07T00:00:00.000Z')).toBe(false);
    const e = (await getProtectionEndpointOfIntegration(store.db, 'int_a'))!;
    expect(e).toMatchObject({
      validated_at: '2026-01-02T00:00:00.000Z',
      first_analysis_at: '2026-01-03T00:00:00.000Z',
      last_analysis_at: '2026-01-04T00:00:00.000Z',
      auth_failures: 2,
      last_auth_failure_reason: 'expired',
      last_auth_failure_at: '2026-01-06T00:00:00.000Z',
      audiences: '["x"]',
    });
    expect((await listProtectionEndpoints(store.db, org)).map((r) => r.id)).toEqual(['pe_abc']);
    expect(await listProtectionEndpoints(store.db, 'org_other')).toEqual([]);
  });

  it('lists steps newest first with filters and keyset pages, and a conversation oldest first (U+0000 stored as U+FFFD)', async () => {
    store = await freshStore(dialect);
    const org = await seed(store);
    // Several rows in one statement, as the webhook writes a batch.
    await insertAgentSteps(
      store.db,
      store.db,
      Array.from({ length: 5 }, (_, i) =>
        step(org, `stp_${i}`, `2026-01-01T00:00:0${i}.000Z`, i % 2 ? 'conv-b' : 'conv-a', i < 3 ? 'agent-1' : 'agent-2', i === 4),
      ),
    );
    await insertAgentSteps(store.db, store.db, [step(org, 'stp_5', '2026-01-01T00:00:04.000Z', 'conv-a')]);
    const all = await listAgentSteps(store.db, { integrationIds: ['int_a'] });
    expect(all.map((s) => s.id)).toEqual(['stp_5', 'stp_4', 'stp_3', 'stp_2', 'stp_1', 'stp_0']);
    expect(all[0]!.agent_name).toBe('Agent \uFFFD one');
    expect(all[0]!.latency_ms).toBe(12.5);
    const first = await listAgentSteps(store.db, { organizationId: org, limit: 2 });
    const next = await listAgentSteps(store.db, { organizationId: org, limit: 2, after: { receivedAt: first[1]!.received_at, id: first[1]!.id } });
    expect([...first, ...next].map((s) => s.id)).toEqual(['stp_5', 'stp_4', 'stp_3', 'stp_2']);
    expect((await listAgentSteps(store.db, { integrationIds: ['int_a'], agentId: 'agent-2' })).map((s) => s.id)).toEqual(['stp_4', 'stp_3']);
    expect((await listAgentSteps(store.db, { integrationIds: ['int_a'], outcome: 'blocked' })).map((s) => s.id)).toEqual(['stp_4']);
    expect(
      (await listAgentSteps(store.db, { integrationIds: ['int_a'], from: '2026-01-01T00:00:02.000Z', to: '2026-01-01T00:00:04.000Z' })).map((s) => s.id),
    ).toEqual(['stp_3', 'stp_2']);
    expect(await listAgentSteps(store.db, { integrationIds: [] })).toEqual([]);
    expect((await conversationTimeline(store.db, 'int_a', 'conv-a')).map((s) => s.id)).toEqual(['stp_0', 'stp_2', 'stp_4', 'stp_5']);
  });

  it('filters steps by environment and by outcome: decisions (blocked or would block), allowed, timed out', async () => {
    store = await freshStore(dialect);
    const org = await seed(store);
    const rows = [
      { ...step(org, 'stp_0', '2026-01-01T00:00:00.000Z', 'c'), environment_id: 'env-other' },
      step(org, 'stp_1', '2026-01-01T00:00:01.000Z', 'c', 'agent-1', true),
      { ...step(org, 'stp_2', '2026-01-01T00:00:02.000Z', 'c'), would_block: 1 },
      { ...step(org, 'stp_3', '2026-01-01T00:00:03.000Z', 'c'), timed_out: 1 },
    ];
    await insertAgentSteps(store.db, store.db, rows);
    const ids = async (q: Parameters<typeof listAgentSteps>[1]) => (await listAgentSteps(store.db, { integrationIds: ['int_a'], ...q })).map((s) => s.id);
    expect(await ids({ environmentId: 'env-other' })).toEqual(['stp_0']);
    expect(await ids({ outcome: 'decision' })).toEqual(['stp_2', 'stp_1']);
    expect(await ids({ outcome: 'would-block' })).toEqual(['stp_2']);
    expect(await ids({ outcome: 'timeout' })).toEqual(['stp_3']);
    expect(await ids({ outcome: 'allowed' })).toEqual(['stp_0']);
    expect(await ids({ outcome: 'decision', environmentId: 'env' })).toEqual(['stp_2', 'stp_1']);
  });

  it('upserts a policy per scope, lists and deletes within the organization', async () => {
    store = await freshStore(dialect);
    const org = await seed(store);
    const base = { organization_id: org, environment_id: null, updated_by: 'me', updated_at: '2026-01-01T00:00:00.000Z' };
    expect(await upsertProtectionPolicy(store.db, { ...base, id: 'pp_org', integration_id: null, agent_id: null, policy: '{"mode":"monitor"}' })).toBe(
      'pp_org',
    );
    expect(await upsertProtectionPolicy(store.db, { ...base, id: 'pp_agent', integration_id: 'int_a', agent_id: 'bot', policy: '{"mode":"block"}' })).toBe(
      'pp_agent',
    );
    // The same scope again replaces the policy and keeps its id.
    expect(await upsertProtectionPolicy(store.db, { ...base, id: 'pp_new', integration_id: null, agent_id: null, policy: '{"mode":"block"}' })).toBe('pp_org');
    const rows = await listProtectionPolicies(store.db, org);
    expect(rows.map((r) => [r.id, r.policy])).toEqual([
      ['pp_agent', '{"mode":"block"}'],
      ['pp_org', '{"mode":"block"}'],
    ]);
    expect(await deleteProtectionPolicy(store.db, 'org_other', 'pp_agent')).toBe(false);
    expect(await deleteProtectionPolicy(store.db, org, 'pp_agent')).toBe(true);
    expect((await listProtectionPolicies(store.db, org)).map((r) => r.id)).toEqual(['pp_org']);
  });
});
