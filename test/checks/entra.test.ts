import { describe, expect, it } from 'vitest';
import type { DataverseUsersTable } from '../../src/store/schema.ts';
import { agentRow, checkContext, resultFor, runCheck, streamError, userRow } from '../support/checks.ts';

function systemUser(id: string, aad: string): DataverseUsersTable {
  return {
    integration_id: 'int_1',
    environment_id: 'env1',
    id,
    full_name: id,
    aad_object_id: aad,
    application_id: null,
    is_disabled: 0,
    raw: '{}',
    first_seen_at: '',
    last_seen_at: '',
    last_seen_run: 'run',
    deleted_at: null,
  };
}

describe('guest_owns_agent', () => {
  const base = {
    dataverseUsers: [systemUser('su1', 'u1'), systemUser('su2', 'g1')],
    users: [userRow({ id: 'u1' }), userRow({ id: 'g1', user_type: 'Guest', user_principal_name: 'eve_fabrikam.com#EXT#@contoso.onmicrosoft.com' })],
  };
  it('passes agents owned by members', async () => {
    const r = await runCheck('guest_owns_agent', checkContext({ ...base, agents: [agentRow({ id: 'a', owner_id: 'su1' })] }));
    expect(r.map((x) => x.status)).toEqual(['pass']);
  });
  it('fails an agent whose owner maps to a guest', async () => {
    const r = await runCheck(
      'guest_owns_agent',
      checkContext({ ...base, agents: [agentRow({ id: 'a', owner_id: 'su1' }), agentRow({ id: 'b', owner_id: 'su2' })] }),
    );
    expect(resultFor(r, 'b')).toMatchObject({ status: 'fail', reason: expect.stringContaining('eve_fabrikam.com#EXT#') });
    expect(resultFor(r, 'a')?.status).toBe('pass');
  });
  it('is not evaluated when users were not collected (missing User.Read.All)', async () => {
    const r = await runCheck('guest_owns_agent', checkContext({ ...base, agents: [agentRow({ owner_id: 'su2' })], checkpoints: [streamError('users')] }));
    expect(r).toEqual([expect.objectContaining({ status: 'not_evaluated', resourceType: 'tenant' })]);
  });
});

describe('agent_owner_disabled_or_missing', () => {
  const dv = [systemUser('su1', 'u1'), systemUser('su2', 'u2')];
  it('passes an agent whose owner is enabled everywhere', async () => {
    const r = await runCheck(
      'agent_owner_disabled_or_missing',
      checkContext({ dataverseUsers: dv, users: [userRow({ id: 'u1' })], agents: [agentRow({ owner_id: 'su1' })] }),
    );
    expect(r[0]?.status).toBe('pass');
  });
  it('fails an agent whose owner is disabled in Entra ID or gone', async () => {
    const r = await runCheck(
      'agent_owner_disabled_or_missing',
      checkContext({
        dataverseUsers: dv,
        users: [userRow({ id: 'u1', account_enabled: 0 })],
        agents: [agentRow({ id: 'a', owner_id: 'su1' }), agentRow({ id: 'b', owner_id: 'su2' }), agentRow({ id: 'c', owner_id: 'nobody' })],
      }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/disabled in Microsoft Entra ID/) });
    expect(resultFor(r, 'b')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/no longer exists in Microsoft Entra ID/) });
    expect(resultFor(r, 'c')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/no longer exists in the environment/) });
  });
  it('is not evaluated without directory users', async () => {
    const r = await runCheck(
      'agent_owner_disabled_or_missing',
      checkContext({
        dataverseUsers: dv,
        agents: [agentRow({ owner_id: 'su1' })],
        checkpoints: [streamError('users', 'MISSING_PERMISSION', 'User.Read.All is not granted')],
      }),
    );
    expect(r[0]).toMatchObject({ status: 'not_evaluated', reason: expect.stringMatching(/User.Read.All/) });
  });
});
