import { describe, expect, it } from 'vitest';
import { checkContext, environmentRow, runCheck, sliceError, streamError } from '../support/checks.ts';

describe('integration_missing_permissions', () => {
  it('passes every capability whose streams ran', async () => {
    const r = await runCheck('integration_missing_permissions', checkContext());
    expect(r.length).toBeGreaterThanOrEqual(2);
    expect(new Set(r.map((x) => x.status))).toEqual(new Set(['pass']));
  });
  it('fails the capability whose permission was missing, naming the permission', async () => {
    const r = await runCheck('integration_missing_permissions', checkContext({ checkpoints: [streamError('groups'), streamError('memberships')] }));
    const groups = r.find((x) => x.resourceId.endsWith('/directory.groups'));
    expect(groups).toMatchObject({ status: 'fail', reason: expect.stringContaining('GroupMember.Read.All') });
    expect(r.find((x) => x.resourceId.endsWith('/directory.users'))?.status).toBe('pass');
  });
  it('fails Power BI when its read-only admin APIs refused the app (judged by the API, not by a missing role)', async () => {
    const message =
      'Not collected: Power BI refused its read-only admin APIs to this service principal (401 PowerBINotAuthorizedException). … Fix: Turn on Fabric admin portal > Tenant settings > Admin API settings > "Service principals can access read-only admin APIs" …';
    const r = await runCheck(
      'integration_missing_permissions',
      checkContext({
        checkpoints: [
          streamError('powerBiWorkspaces', 'POWER_BI_NOT_AUTHORIZED', message),
          streamError('powerBiSharedLinks', 'POWER_BI_NOT_AUTHORIZED', message),
        ],
      }),
    );
    expect(r.find((x) => x.resourceId.endsWith('/powerBi.tenant'))).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('Service principals can access read-only admin APIs'),
    });
    expect(r.find((x) => x.resourceId.endsWith('/directory.users'))?.status).toBe('pass');
  });
  it('does not pass a capability whose stream failed for another reason: not evaluated, naming the stream and the code', async () => {
    const r = await runCheck(
      'integration_missing_permissions',
      checkContext({ checkpoints: [streamError('users', 'UPSTREAM_UNAVAILABLE', 'Graph answered 503 three times')] }),
    );
    const users = r.find((x) => x.resourceId.endsWith('/directory.users'));
    expect(users).toMatchObject({ status: 'not_evaluated', reason: expect.stringContaining("'users' could not be read (UPSTREAM_UNAVAILABLE)") });
    expect(users!.reason).toContain('Graph answered 503 three times');
    expect(r.find((x) => x.resourceId.endsWith('/directory.groups'))?.status).toBe('pass');
  });
  it('does not pass a capability when a child stream was skipped because its parent failed, nor when one slice failed', async () => {
    const parent = await runCheck(
      'integration_missing_permissions',
      checkContext({ checkpoints: [streamError('memberships', 'PARENT_STREAM_FAILED', 'Not collected: the groups stream failed in this run.')] }),
    );
    expect(parent.find((x) => x.resourceId.endsWith('/directory.groups'))).toMatchObject({
      status: 'not_evaluated',
      reason: expect.stringContaining('PARENT_STREAM_FAILED'),
    });
    const slice = await runCheck(
      'integration_missing_permissions',
      checkContext({ checkpoints: [sliceError('teamsApps', 'batch-3', 'BATCH_THROTTLED', 'inner requests still throttled after 8 attempts')] }),
    );
    expect(slice.find((x) => x.resourceId.endsWith('/teams.installedApps'))).toMatchObject({
      status: 'not_evaluated',
      reason: expect.stringContaining("'teamsApps' for batch-3 could not be read (BATCH_THROTTLED)"),
    });
  });
  it('fails a capability whose whole read Graph refused as insufficient privileges (403 Authorization_RequestDenied), naming the permission', async () => {
    const r = await runCheck(
      'integration_missing_permissions',
      checkContext({ checkpoints: [streamError('externalConnections', 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.')] }),
    );
    expect(r.find((x) => x.resourceId.endsWith('/graph.externalConnections'))).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('ExternalConnection.Read.All is not granted'),
    });
  });
  it('is not evaluated before the first collection', async () => {
    const r = await runCheck('integration_missing_permissions', checkContext({ neverCollected: true }));
    expect(new Set(r.map((x) => x.status))).toEqual(new Set(['not_evaluated']));
  });
});

describe('integration_not_management_app', () => {
  it('passes when environments were listed', async () => {
    expect((await runCheck('integration_not_management_app', checkContext()))[0]?.status).toBe('pass');
  });
  it('fails when BAP refused with Forbidden (not registered)', async () => {
    const r = await runCheck(
      'integration_not_management_app',
      checkContext({ checkpoints: [streamError('environments', 'Forbidden', 'does not have permission to access the path')] }),
    );
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('management application') });
  });
  it('is not evaluated before the first collection or on another failure', async () => {
    expect((await runCheck('integration_not_management_app', checkContext({ neverCollected: true })))[0]?.status).toBe('not_evaluated');
    expect(
      (await runCheck('integration_not_management_app', checkContext({ checkpoints: [streamError('environments', 'UPSTREAM_UNAVAILABLE')] })))[0]?.status,
    ).toBe('not_evaluated');
  });
});

describe('integration_secret_expiry', () => {
  it('passes a secret with more than 90 days left, and the managed app', async () => {
    expect((await runCheck('integration_secret_expiry', checkContext({ integration: { secretExpiresAt: '2027-06-01T00:00:00Z' } })))[0]?.status).toBe('pass');
    expect((await runCheck('integration_secret_expiry', checkContext({ integration: { mode: 'managed-app', secretExpiresAt: null } })))[0]?.status).toBe(
      'pass',
    );
  });
  it('fails 90 days before expiry, after expiry and when refused', async () => {
    expect((await runCheck('integration_secret_expiry', checkContext({ integration: { secretExpiresAt: '2027-02-15T00:00:00Z' } })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/expires in 86 days/),
    });
    expect((await runCheck('integration_secret_expiry', checkContext({ integration: { secretExpiresAt: '2026-11-01T00:00:00Z' } })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/expired on 2026-11-01/),
    });
    expect(
      (await runCheck('integration_secret_expiry', checkContext({ integration: { credentialState: 'expired', credentialError: 'AADSTS7000222' } })))[0]?.status,
    ).toBe('fail');
  });
  it('is not evaluated when the expiry date is unknown', async () => {
    expect((await runCheck('integration_secret_expiry', checkContext({ integration: { secretExpiresAt: null } })))[0]?.status).toBe('not_evaluated');
  });
});

describe('environment_agents_not_readable', () => {
  it('passes environments whose agents were read (and those without Dataverse)', async () => {
    const r = await runCheck(
      'environment_agents_not_readable',
      checkContext({ environments: [environmentRow(), environmentRow({ id: 'env2', dataverse_url: null })] }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails the environment whose Dataverse refused Vigil, naming the role to grant', async () => {
    const r = await runCheck(
      'environment_agents_not_readable',
      checkContext({ environments: [environmentRow()], checkpoints: [sliceError('agents', 'env1', '0x80072560')] }),
    );
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringMatching(/System Administrator/) });
  });
  it('is not evaluated for the tenant when environments could not be listed', async () => {
    const r = await runCheck('environment_agents_not_readable', checkContext({ checkpoints: [streamError('environments', 'Forbidden', 'x')] }));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' })]);
  });
});
