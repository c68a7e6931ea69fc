import { describe, expect, it } from 'vitest';
import { agentRow, checkContext, resultFor, runCheck, sliceError, streamError } from '../support/checks.ts';

describe('agent_shared_with_everyone', () => {
  it('passes an agent restricted to Copilot readers or groups', async () => {
    const r = await runCheck(
      'agent_shared_with_everyone',
      checkContext({ agents: [agentRow({ id: 'a', access_control_policy: 1 }), agentRow({ id: 'b', access_control_policy: 2 })] }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails an agent whose access control policy is Any', async () => {
    const r = await runCheck(
      'agent_shared_with_everyone',
      checkContext({ agents: [agentRow({ id: 'a', access_control_policy: 0 }), agentRow({ id: 'b', access_control_policy: 1 })] }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/Any/) });
    expect(resultFor(r, 'b')?.status).toBe('pass');
  });
  it('is not evaluated where agents could not be read: the tenant when the stream did not run, the environment when its Dataverse refused', async () => {
    const none = await runCheck(
      'agent_shared_with_everyone',
      checkContext({ agents: [agentRow()], checkpoints: [streamError('agents', 'PARENT_STREAM_FAILED')] }),
    );
    expect(none).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' })]);
    const env = await runCheck('agent_shared_with_everyone', checkContext({ agents: [], checkpoints: [sliceError('agents', 'env1')] }));
    expect(env).toEqual([expect.objectContaining({ resourceType: 'environment', resourceId: 'env1', status: 'not_evaluated' })]);
  });
});

describe('agent_no_authentication', () => {
  it('passes agents that authenticate with Microsoft or manually', async () => {
    const r = await runCheck(
      'agent_no_authentication',
      checkContext({ agents: [agentRow({ id: 'a', authentication_mode: 2 }), agentRow({ id: 'b', authentication_mode: 3 })] }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails an agent whose authentication is None', async () => {
    const r = await runCheck('agent_no_authentication', checkContext({ agents: [agentRow({ id: 'a', authentication_mode: 1 })] }));
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringMatching(/None/) });
  });
  it('is not evaluated for an environment whose Dataverse refused Vigil', async () => {
    const r = await runCheck('agent_no_authentication', checkContext({ checkpoints: [sliceError('agents', 'env1', '0x80072560')] }));
    expect(r).toEqual([expect.objectContaining({ resourceId: 'env1', status: 'not_evaluated', reason: expect.stringMatching(/System Administrator/) })]);
  });
});

describe('agent_public_without_authentication', () => {
  it('passes an agent open to Any that still requires authentication', async () => {
    const r = await runCheck('agent_public_without_authentication', checkContext({ agents: [agentRow({ access_control_policy: 0, authentication_mode: 2 })] }));
    expect(r[0]?.status).toBe('pass');
  });
  it('fails an agent open to Any without authentication', async () => {
    const r = await runCheck('agent_public_without_authentication', checkContext({ agents: [agentRow({ access_control_policy: 0, authentication_mode: 1 })] }));
    expect(r[0]?.status).toBe('fail');
  });
  it('is not evaluated for the tenant when environments could not be listed', async () => {
    const r = await runCheck('agent_public_without_authentication', checkContext({ checkpoints: [streamError('environments', 'Forbidden', 'x')] }));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated', reason: expect.stringMatching(/management application/) })]);
  });
});

describe('agent_dormant', () => {
  it('passes an agent changed within 180 days', async () => {
    expect((await runCheck('agent_dormant', checkContext({ agents: [agentRow({ modified_on: '2026-10-01T00:00:00Z' })] })))[0]?.status).toBe('pass');
  });
  it('fails an agent unchanged and unpublished for over 180 days', async () => {
    const r = await runCheck('agent_dormant', checkContext({ agents: [agentRow({ modified_on: '2026-05-01T00:00:00Z', published_on: null })] }));
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringMatching(/204 days/) });
  });
  it('is not evaluated for an agent without dates', async () => {
    expect((await runCheck('agent_dormant', checkContext({ agents: [agentRow({ modified_on: null, published_on: null })] })))[0]?.status).toBe('not_evaluated');
  });
});
