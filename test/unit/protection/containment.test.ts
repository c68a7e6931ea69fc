import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOrganization } from '../../../src/access/index.ts';
import { flagOf } from '../../../src/cli/flags.ts';
import { PUBLIC_CLOUD } from '../../../src/config/cloud.ts';
import type { VigilError } from '../../../src/core/errors.ts';
import type { HttpClient } from '../../../src/platform/http/client.ts';
import { containAgent, releaseAgent, resolveContainmentTarget, type ContainmentDeps } from '../../../src/protection/containment.ts';
import { raiseAlert } from '../../../src/store/repositories/audit.ts';
import { listContainmentActions } from '../../../src/store/repositories/containment.ts';
import { insertIntegration } from '../../../src/store/repositories/integrations.ts';
import { insertAgentSteps } from '../../../src/store/repositories/protection.ts';
import { freshStore, type TestStore } from '../../store/dialects.ts';

const T = '11111111-1111-4111-8111-111111111111';
const APP = '22222222-2222-4222-8222-222222222222';
const AGENT = '33333333-3333-4333-8333-333333333333';
const OTHER_AGENT = '44444444-4444-4444-8444-444444444444';
const ENV = 'Default-11111111-1111-4111-8111-111111111111';
const AT = '2026-01-01T00:00:00.000Z';

/** The argument errors of containment: each names the field the person must fix (as a flag in the CLI). */
describe('containment: which agent, from the arguments, an alert or an agent step', () => {
  let store: TestStore;
  let alertOfAgent: string;
  let alertWithoutAgent: string;
  let alertOfOther: string;

  beforeAll(async () => {
    store = await freshStore('sqlite');
    const org = (await ensureOrganization(store.db, 'Contoso')).id;
    for (const [id, name, tenant] of [
      ['int_a', 'contoso', T],
      ['int_b', 'fabrikam', '55555555-5555-4555-8555-555555555555'],
    ] as const)
      await insertIntegration(store.db, {
        id,
        organization_id: org,
        name,
        mode: 'customer-app',
        tenant_id: tenant,
        client_id: APP,
        sp_object_id: null,
        secret_envelope: null,
        secret_expires_at: null,
        verification: null,
        verified_at: null,
        created_at: AT,
        updated_at: AT,
      });
    const alert = async (integrationId: string, key: string, detail: Record<string, unknown>) =>
      (await raiseAlert(store.db, { integrationId, ruleId: 'r', severity: 'high', title: 't', dedupeKey: key, detail }, AT)).id;
    alertOfAgent = await alert('int_a', 'a', { agentId: AGENT, environmentId: ENV });
    alertWithoutAgent = await alert('int_a', 'b', { user: 'someone' });
    alertOfOther = await alert('int_b', 'c', { agentId: AGENT, environmentId: ENV });
    await insertAgentSteps(store.db, store.db, [
      {
        id: 'step_1',
        organization_id: org,
        integration_id: 'int_a',
        endpoint_id: 'pe_x',
        received_at: AT,
        correlation_id: null,
        environment_id: ENV,
        agent_id: OTHER_AGENT,
        agent_name: 'HR bot',
        user_id: null,
        conversation_id: 'c1',
        message_id: null,
        plan_id: null,
        plan_step_id: null,
        channel_id: null,
        tool_id: null,
        tool_name: null,
        tool_type: null,
        block_action: 1,
        would_block: 1,
        mode: 'block',
        reason_code: 1,
        reason: 'r',
        decided_by: null,
        verdicts: '[]',
        policy_ids: '[]',
        latency_ms: 1,
        engine_ms: 1,
        timed_out: 0,
        client_ip: null,
      },
    ]);
  });
  afterAll(async () => store?.drop());

  const resolve = (t: Parameters<typeof resolveContainmentTarget>[1]) => resolveContainmentTarget(store.db, t);
  const rejection = async (p: Promise<unknown>): Promise<VigilError> => {
    const e = await p.then(
      () => undefined,
      (err: VigilError) => err,
    );
    if (!e) throw new Error('accepted');
    return e;
  };

  it('takes the agent and environment from an alert, an agent step, or the arguments (a braced or upper-case GUID too)', async () => {
    expect(await resolve({ integration: 'contoso', alertId: alertOfAgent })).toMatchObject({ agentId: AGENT, environmentId: ENV, alertId: alertOfAgent });
    expect(await resolve({ integration: 'int_a', stepId: 'step_1' })).toMatchObject({ agentId: OTHER_AGENT, environmentId: ENV, stepId: 'step_1' });
    expect(await resolve({ integration: 'int_a', agentId: `{${AGENT.toUpperCase()}}`, environmentId: ENV })).toMatchObject({ agentId: AGENT });
  });

  it('refuses what names no agent or environment, naming the field (the flag in the CLI)', async () => {
    const none = await rejection(resolve({ integration: 'int_a', environmentId: ENV }));
    expect(none).toMatchObject({ code: 'INVALID_INPUT', field: 'agentId' });
    expect(none.render(flagOf).field).toBe('--agent');
    const noAgent = await rejection(resolve({ integration: 'int_a', alertId: alertWithoutAgent }));
    expect(noAgent.message).toBe(`alert ${alertWithoutAgent} names no agent.`);
    const noEnv = await rejection(resolve({ integration: 'int_a', agentId: AGENT }));
    expect(noEnv).toMatchObject({ code: 'INVALID_INPUT', field: 'environmentId' });
    expect(noEnv.message).toMatch(/not in the collected inventory/);
    expect(noEnv.render(flagOf).field).toBe('--environment');
  });

  it('refuses malformed ids before any call', async () => {
    expect(await rejection(resolve({ integration: 'int_a', agentId: 'HR bot', environmentId: ENV }))).toMatchObject({
      code: 'INVALID_INPUT',
      field: 'agentId',
    });
    expect(await rejection(resolve({ integration: 'int_a', agentId: AGENT, environmentId: '../../admin' }))).toMatchObject({
      code: 'INVALID_INPUT',
      field: 'environmentId',
    });
  });

  it('refuses an agent or environment other than the one the alert or step is about', async () => {
    const e = await rejection(resolve({ integration: 'int_a', alertId: alertOfAgent, agentId: OTHER_AGENT }));
    expect(e).toMatchObject({ code: 'INVALID_INPUT', field: 'agentId' });
    expect(e.message).toBe(`alert ${alertOfAgent} is about agent ${AGENT}, not ${OTHER_AGENT}.`);
    expect(await rejection(resolve({ integration: 'int_a', stepId: 'step_1', environmentId: 'another-env' }))).toMatchObject({ field: 'environmentId' });
    expect(await rejection(resolve({ integration: 'int_a', stepId: 'step_1', alertId: alertOfAgent }))).toMatchObject({ field: 'agentId' });
  });

  it('does not find an alert or step of another integration, nor an unknown integration', async () => {
    expect(await rejection(resolve({ integration: 'int_a', alertId: alertOfOther }))).toMatchObject({ code: 'ALERT_NOT_FOUND', field: 'alertId' });
    expect(await rejection(resolve({ integration: 'int_b', stepId: 'step_1' }))).toMatchObject({ code: 'AGENT_STEP_NOT_FOUND', field: 'stepId' });
    expect(await rejection(resolve({ integration: 'nope', agentId: AGENT, environmentId: ENV }))).toMatchObject({ code: 'INTEGRATION_NOT_FOUND' });
  });

  it('needs the author of an action, and says "not available" without a Power Platform API endpoint (recorded as refused)', async () => {
    const deps: ContainmentDeps = {
      db: store.db,
      http: {} as HttpClient,
      cloud: { ...PUBLIC_CLOUD, name: 'custom', powerPlatform: undefined },
      acquireToken: async () => {
        throw new Error('no sign-in expected');
      },
    };
    const signIn = { kind: 'device-code' as const, prompt: () => undefined };
    const noAuthor = await rejection(containAgent(deps, { integration: 'int_a', alertId: alertOfAgent, requestedBy: '  ', signIn }));
    expect(noAuthor).toMatchObject({ code: 'INVALID_INPUT', field: 'actor' });
    expect(noAuthor.render(flagOf).field).toBe('--by');
    const na = await rejection(releaseAgent(deps, { integration: 'int_a', alertId: alertOfAgent, requestedBy: 'alice', signIn }));
    expect(na).toMatchObject({ code: 'CONTAINMENT_NOT_AVAILABLE', kind: 'authorization', field: 'VIGIL_ENDPOINTS_FILE' });
    expect(na.message).toBe("Not available: the cloud profile 'custom' names no Power Platform API endpoint.");
    expect(await listContainmentActions(store.db, { integrationId: 'int_a' })).toMatchObject([
      { action: 'release', requested_by: 'alice', signed_in_as: null, outcome: 'refused', alert_id: alertOfAgent, error_code: 'CONTAINMENT_NOT_AVAILABLE' },
    ]);
  });
});
