import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadChecks } from '../../src/checks/loader.ts';
import type { CheckContext } from '../../src/checks/types.ts';
import { agentRow, checkContext, environmentRow, runCheck, userRow, type ContextInput } from '../support/checks.ts';
import type { AgentsTable } from '../../src/store/schema.ts';

/** An agent row (the shared test row, without a schema name). */
const agent = (over: Partial<AgentsTable>): AgentsTable => agentRow({ schema_name: null, ...over });

function context(agents: AgentsTable[], checkpoints: NonNullable<ContextInput['checkpoints']> = []): CheckContext {
  return checkContext({
    environments: [
      environmentRow({ id: 'env1', display_name: 'Prod', dataverse_url: 'https://x/' }),
      environmentRow({ id: 'env2', display_name: 'Locked', sku: 'Sandbox', dataverse_url: 'https://y/' }),
    ],
    agents,
    dataverseUsers: [
      {
        integration_id: 'int_1',
        environment_id: 'env1',
        id: 'su1',
        full_name: 'Ann',
        aad_object_id: 'u1',
        application_id: null,
        is_disabled: 0,
        raw: '{}',
        first_seen_at: '',
        last_seen_at: '',
        last_seen_run: 'run',
        deleted_at: null,
      },
    ],
    users: [userRow({ id: 'u1', user_principal_name: 'ann@x', account_enabled: 0 })],
    checkpoints,
  });
}

describe('check library', async () => {
  const checks = await loadChecks();
  const byId = Object.fromEntries(checks.map((c) => [c.metadata.id, c]));

  it('loads the checks with validated metadata', async () => {
    expect(Object.keys(byId)).toEqual(
      expect.arrayContaining([
        'agent_dormant',
        'agent_no_authentication',
        'agent_owner_disabled_or_missing',
        'agent_public_without_authentication',
        'environment_agents_not_readable',
        'integration_secret_expiry',
      ]),
    );
  });

  it('fails the integration-health check 90 days before the secret expires, after expiry, and when credentials were refused', async () => {
    const at = async (secretExpiresAt: string, credentialState = 'ok') =>
      (
        await runCheck('integration_secret_expiry', {
          ...context([]),
          integration: { mode: 'customer-app', secretExpiresAt, credentialState, credentialError: 'AADSTS7000222' },
        })
      )[0]!;
    expect((await at('2027-03-01T00:00:00Z')).status).toBe('pass');
    expect(await at('2027-02-15T00:00:00Z')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/expires in 86 days/) });
    expect(await at('2026-11-01T00:00:00Z')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/expired on 2026-11-01/) });
    expect(await at('2028-01-01T00:00:00Z', 'expired')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/Credentials expired/) });
  });

  it('refuses a check whose id differs from its folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'checks-'));
    mkdirSync(join(dir, 'agents', 'right_name'), { recursive: true });
    writeFileSync(join(dir, 'agents', 'right_name', 'metadata.json'), JSON.stringify({ ...byId.agent_dormant!.metadata, id: 'wrong_name' }));
    await expect(loadChecks(dir)).rejects.toThrow(/does not match the folder name/);
  });

  it('refuses metadata without remediation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'checks-'));
    mkdirSync(join(dir, 'agents', 'agent_dormant'), { recursive: true });
    const { remediation: _r, ...rest } = byId.agent_dormant!.metadata;
    writeFileSync(join(dir, 'agents', 'agent_dormant', 'metadata.json'), JSON.stringify(rest));
    await expect(loadChecks(dir)).rejects.toThrow(/remediation/);
  });

  it('fails an agent without authentication and passes one with it', async () => {
    const r = await runCheck('agent_no_authentication', context([agent({ id: 'a', authentication_mode: 1 }), agent({ id: 'b' })]));
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['a', 'fail'],
      ['b', 'pass'],
    ]);
  });

  it('reports environments it could not read as not evaluated, never as passes', async () => {
    const r = await runCheck(
      'agent_no_authentication',
      context([], [{ stream: 'agents', slice_key: 'env2', status: 'error', error_code: '0x80072560', error_message: 'denied' }]),
    );
    expect(r).toEqual([expect.objectContaining({ resourceId: 'env2', status: 'not_evaluated', reason: expect.stringMatching(/System Administrator/) })]);
    const env = await runCheck(
      'environment_agents_not_readable',
      context([], [{ stream: 'agents', slice_key: 'env2', status: 'error', error_code: '0x80072560', error_message: 'denied' }]),
    );
    expect(env.map((x) => [x.resourceId, x.status])).toEqual([
      ['env1', 'pass'],
      ['env2', 'fail'],
    ]);
  });

  it('reports the whole tenant as not evaluated when environments could not be listed', async () => {
    const r = await runCheck(
      'agent_dormant',
      context([], [{ stream: 'environments', slice_key: '*', status: 'error', error_code: 'Forbidden', error_message: 'x' }]),
    );
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated', reason: expect.stringMatching(/management application/) })]);
  });

  it('follows the owner to a disabled directory user; not evaluated without users', async () => {
    expect((await runCheck('agent_owner_disabled_or_missing', context([agent({})])))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/disabled in Microsoft Entra ID/),
    });
    expect((await runCheck('agent_owner_disabled_or_missing', context([agent({ owner_id: 'gone' })])))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/no longer exists/),
    });
    const noUsers = context(
      [agent({})],
      [{ stream: 'users', slice_key: '*', status: 'error', error_code: 'MISSING_PERMISSION', error_message: 'User.Read.All is not granted' }],
    );
    expect((await runCheck('agent_owner_disabled_or_missing', noUsers))[0]).toMatchObject({
      status: 'not_evaluated',
      reason: expect.stringMatching(/User.Read.All/),
    });
  });

  it('fails agents unchanged for over 180 days', async () => {
    const r = await runCheck('agent_dormant', context([agent({ id: 'old', modified_on: '2026-05-01T00:00:00Z', published_on: null }), agent({ id: 'new' })]));
    expect(r.map((x) => x.status)).toEqual(['fail', 'pass']);
  });

  it('fails agents open to anyone only without authentication', async () => {
    const r = await runCheck(
      'agent_public_without_authentication',
      context([agent({ id: 'a', authentication_mode: 1, access_control_policy: 0 }), agent({ id: 'b', access_control_policy: 0 })]),
    );
    expect(r.map((x) => x.status)).toEqual(['fail', 'pass']);
  });
});
