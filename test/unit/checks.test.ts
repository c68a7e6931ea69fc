import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coverageFromCheckpoints } from '../../src/checks/evaluate.ts';
import { loadChecks } from '../../src/checks/loader.ts';
import type { CheckContext } from '../../src/checks/types.ts';
import type { AgentsTable } from '../../src/store/schema.ts';

function agent(over: Partial<AgentsTable>): AgentsTable {
  return {
    integration_id: 'int_1', environment_id: 'env1', id: 'bot1', name: 'Bot', schema_name: null, authentication_mode: 2, authentication_trigger: 1, access_control_policy: 1,
    owner_id: 'su1', published_on: '2026-10-01T00:00:00Z', modified_on: '2026-10-01T00:00:00Z', created_on: null, state_code: 0, status_code: 1,
    raw: '{}', first_seen_at: '', last_seen_at: '', last_seen_run: 'run', deleted_at: null, ...over,
  };
}

function context(agents: AgentsTable[], checkpoints: Parameters<typeof coverageFromCheckpoints>[1] = []): CheckContext {
  return {
    integrationId: 'int_1', tenantId: 't', integration: { mode: 'customer-app', secretExpiresAt: '2028-01-01T00:00:00Z', credentialState: 'ok', credentialError: null }, now: new Date('2026-11-21T00:00:00Z'), coverage: coverageFromCheckpoints('run', checkpoints),
    inventory: {
      environments: [
        { integration_id: 'int_1', id: 'env1', display_name: 'Prod', sku: 'Production', is_default: 0, region: null, dataverse_url: 'https://x/', state: null, raw: '{}', first_seen_at: '', last_seen_at: '', last_seen_run: 'run', deleted_at: null },
        { integration_id: 'int_1', id: 'env2', display_name: 'Locked', sku: 'Sandbox', is_default: 0, region: null, dataverse_url: 'https://y/', state: null, raw: '{}', first_seen_at: '', last_seen_at: '', last_seen_run: 'run', deleted_at: null },
      ],
      agents,
      dataverseUsers: new Map([['env1/su1', { integration_id: 'int_1', environment_id: 'env1', id: 'su1', full_name: 'Ann', aad_object_id: 'u1', application_id: null, is_disabled: 0, raw: '{}', first_seen_at: '', last_seen_at: '', last_seen_run: 'run', deleted_at: null }]]),
      directoryUsers: new Map([['u1', { id: 'u1', display_name: 'Ann', user_principal_name: 'ann@x', account_enabled: 0, user_type: 'Member' }]]),
      estate: () => [],
    },
  };
}

describe('check library', async () => {
  const checks = await loadChecks();
  const byId = Object.fromEntries(checks.map((c) => [c.metadata.id, c]));

  it('loads the checks with validated metadata', () => {
    expect(Object.keys(byId)).toEqual(expect.arrayContaining([
      'agent_dormant',
      'agent_no_authentication',
      'agent_owner_disabled_or_missing',
      'agent_public_without_authentication',
      'environment_agents_not_readable',
      'integration_secret_expiry',
    ]));
  });

  it('fails the integration-health check 90 days before the secret expires, after expiry, and when credentials were refused', () => {
    const at = (secretExpiresAt: string, credentialState = 'ok') => byId.integration_secret_expiry!.run({ ...context([]), integration: { mode: 'customer-app', secretExpiresAt, credentialState, credentialError: 'AADSTS7000222' } })[0]!;
    expect(at('2027-03-01T00:00:00Z').status).toBe('pass');
    expect(at('2027-02-15T00:00:00Z')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/expires in 86 days/) });
    expect(at('2026-11-01T00:00:00Z')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/expired on 2026-11-01/) });
    expect(at('2028-01-01T00:00:00Z', 'expired')).toMatchObject({ status: 'fail', reason: expect.stringMatching(/Credentials expired/) });
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

  it('fails an agent without authentication and passes one with it', () => {
    const r = byId.agent_no_authentication!.run(context([agent({ id: 'a', authentication_mode: 1 }), agent({ id: 'b' })]));
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([['a', 'fail'], ['b', 'pass']]);
  });

  it('reports environments it could not read as not evaluated, never as passes', () => {
    const r = byId.agent_no_authentication!.run(context([], [{ stream: 'agents', slice_key: 'env2', status: 'error', error_code: '0x80072560', error_message: 'denied' }]));
    expect(r).toEqual([expect.objectContaining({ resourceId: 'env2', status: 'not_evaluated', reason: expect.stringMatching(/System Administrator/) })]);
    const env = byId.environment_agents_not_readable!.run(context([], [{ stream: 'agents', slice_key: 'env2', status: 'error', error_code: '0x80072560', error_message: 'denied' }]));
    expect(env.map((x) => [x.resourceId, x.status])).toEqual([['env1', 'pass'], ['env2', 'fail']]);
  });

  it('reports the whole tenant as not evaluated when environments could not be listed', () => {
    const r = byId.agent_dormant!.run(context([], [{ stream: 'environments', slice_key: '*', status: 'error', error_code: 'Forbidden', error_message: 'x' }]));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated', reason: expect.stringMatching(/management application/) })]);
  });

  it('follows the owner to a disabled directory user; not evaluated without users', () => {
    expect(byId.agent_owner_disabled_or_missing!.run(context([agent({})]))[0]).toMatchObject({ status: 'fail', reason: expect.stringMatching(/disabled in Microsoft Entra ID/) });
    expect(byId.agent_owner_disabled_or_missing!.run(context([agent({ owner_id: 'gone' })]))[0]).toMatchObject({ status: 'fail', reason: expect.stringMatching(/no longer exists/) });
    const noUsers = context([agent({})], [{ stream: 'users', slice_key: '*', status: 'error', error_code: 'MISSING_PERMISSION', error_message: 'User.Read.All is not granted' }]);
    expect(byId.agent_owner_disabled_or_missing!.run(noUsers)[0]).toMatchObject({ status: 'not_evaluated', reason: expect.stringMatching(/User.Read.All/) });
  });

  it('fails agents unchanged for over 180 days', () => {
    const r = byId.agent_dormant!.run(context([agent({ id: 'old', modified_on: '2026-05-01T00:00:00Z', published_on: null }), agent({ id: 'new' })]));
    expect(r.map((x) => x.status)).toEqual(['fail', 'pass']);
  });

  it('fails agents open to anyone only without authentication', () => {
    const r = byId.agent_public_without_authentication!.run(context([agent({ id: 'a', authentication_mode: 1, access_control_policy: 0 }), agent({ id: 'b', access_control_policy: 0 })]));
    expect(r.map((x) => x.status)).toEqual(['fail', 'pass']);
  });
});
