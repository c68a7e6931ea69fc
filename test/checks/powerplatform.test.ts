import { describe, expect, it } from 'vitest';
import type { ConnectionAttrs } from '../../src/sources/powerPlatform/streams/connections.ts';
import type { ConnectorAttrs } from '../../src/sources/powerPlatform/streams/connectors.ts';
import type { DlpPolicyAttrs } from '../../src/sources/powerPlatform/streams/dlpPolicies.ts';
import type { FlowAttrs } from '../../src/sources/powerPlatform/streams/flows.ts';
import type { PowerAppAttrs } from '../../src/sources/powerPlatform/streams/powerApps.ts';
import type { TenantIsolationAttrs, TenantSettingsObjectAttrs } from '../../src/sources/powerPlatform/streams/tenantSettings.ts';
import { checkContext, environmentRow, estateRow, resultFor, runCheck, sliceError, streamError, userRow } from '../support/checks.ts';

// --- builders ----------------------------------------------------------------------------------------------------

const settings = (over: Partial<TenantSettingsObjectAttrs> = {}) =>
  estateRow('tenantSettings', 'tenantSettings', {
    kind: 'tenantSettings',
    disableEnvironmentCreationByNonAdminUsers: true,
    disableTrialEnvironmentCreationByNonAdminUsers: true,
    disableDeveloperEnvironmentCreationByNonAdminUsers: true,
    disablePortalsCreationByNonAdminUsers: true,
    disableShareWithEveryone: true,
    enableGuestsToMake: false,
    disableConnectionSharingWithEveryone: true,
    settings: {},
    ...over,
  });
const isolation = (over: Partial<TenantIsolationAttrs> = {}) =>
  estateRow('tenantSettings', 'tenantIsolation', {
    kind: 'tenantIsolation',
    exists: true,
    enabled: true,
    allowedTenants: [{ tenantId: 'partner-tenant', inbound: true, outbound: false }],
    ...over,
  });
const tenantCtx = (s: Partial<TenantSettingsObjectAttrs> = {}, iso: Partial<TenantIsolationAttrs> = {}) =>
  checkContext({ estate: { tenantSettings: [settings(s), isolation(iso)] } });
const noSettings = streamError('tenantSettings', 'MANAGEMENT_APP_MISSING', 'Register the application as a Power Platform management application.');

const policy = (id: string, over: Partial<DlpPolicyAttrs> = {}) =>
  estateRow('dlpPolicies', id, {
    displayName: id,
    environmentType: 'AllEnvironments',
    environments: [],
    defaultConnectorsClassification: 'General',
    business: [],
    nonBusiness: [],
    blocked: ['shared_webcontents'],
    createdTime: null,
    lastModifiedTime: null,
    ...over,
  });
const defaultEnv = environmentRow({ id: 'Default-tenant-1', display_name: 'Contoso (default)', is_default: 1 });
const prodEnv = environmentRow({ id: 'env-prod', display_name: 'Prod' });
const devEnv = environmentRow({ id: 'env-dev', display_name: 'Dev' });
const dlpCtx = (...policies: ReturnType<typeof policy>[]) => checkContext({ environments: [defaultEnv, prodEnv, devEnv], estate: { dlpPolicies: policies } });

const principal = (id: string | null) => ({ id, displayName: null, userPrincipalName: null });
const app = (id: string, over: Partial<PowerAppAttrs> = {}) =>
  estateRow(
    'powerApps',
    id,
    {
      environmentId: 'env1',
      displayName: id,
      appType: 'canvas',
      owner: principal('u1'),
      createdTime: null,
      lastModifiedTime: null,
      lastPublishTime: null,
      sharedUsersCount: 0,
      sharedGroupsCount: 0,
      sharedWithTenant: false,
      connectionReferences: [],
      isBypassConsent: false,
      usesCustomApi: false,
      ...over,
    },
    { sliceKey: 'env1' },
  );
const flow = (id: string, over: Partial<FlowAttrs> = {}) =>
  estateRow(
    'flows',
    id,
    {
      environmentId: 'env1',
      displayName: id,
      state: 'Started',
      creator: { objectId: 'u1', userId: 'u1', userType: 'ActiveDirectory' },
      createdTime: null,
      lastModifiedTime: null,
      triggers: [{ type: 'Recurrence', kind: null, connectorId: null }],
      actions: [],
      hasHttpTrigger: false,
      hasHttpAction: false,
      httpTargets: [],
      connectionReferences: [],
      definitionRead: false,
      ...over,
    },
    { sliceKey: 'env1' },
  );
const http = (url: string, host: string | null) => ({ via: 'Http', method: 'POST', url, host });
const connection = (id: string, over: Partial<ConnectionAttrs> = {}) =>
  estateRow(
    'connections',
    id,
    {
      environmentId: 'env1',
      connectorId: 'shared_sql',
      displayName: id,
      createdBy: { id: 'u1', displayName: 'Ann', userPrincipalName: 'ann@contoso.com' },
      createdTime: null,
      lastModifiedTime: null,
      statuses: ['Connected'],
      isErrored: false,
      authenticationType: 'oauth',
      accountName: 'ann@contoso.com',
      isShared: false,
      sharedWithTenant: false,
      sharedWith: [],
      ...over,
    },
    { sliceKey: 'env1' },
  );
const connector = (id: string, over: Partial<ConnectorAttrs> = {}) =>
  estateRow(
    'connectors',
    id,
    {
      environmentId: 'env1',
      connectorId: id,
      displayName: id,
      isCustom: true,
      publisher: null,
      tier: 'Premium',
      backendUrl: 'https://api.contoso.com/v1',
      backendHost: 'api.contoso.com',
      createdBy: null,
      createdTime: null,
      ...over,
    },
    { sliceKey: 'env1' },
  );
const users = [
  userRow({ id: 'u1', user_principal_name: 'ann@contoso.com' }),
  userRow({ id: 'u2', user_principal_name: 'bob@contoso.onmicrosoft.com' }),
  userRow({ id: 'off', user_principal_name: 'leaver@contoso.com', account_enabled: 0 }),
  userRow({ id: 'g1', user_principal_name: 'eve_fabrikam.com#EXT#@contoso.onmicrosoft.com', user_type: 'Guest' }),
];
const noUsers = streamError('users', 'MISSING_PERMISSION', 'Grant User.Read.All to read directory users.');

// --- tenant settings ---------------------------------------------------------------------------------------------

const flagChecks = [
  ['pp_environment_creation_admins_only', 'disableEnvironmentCreationByNonAdminUsers'],
  ['pp_trial_environment_creation_admins_only', 'disableTrialEnvironmentCreationByNonAdminUsers'],
  ['pp_portal_creation_admins_only', 'disablePortalsCreationByNonAdminUsers'],
  ['pp_share_with_everyone_disabled', 'disableShareWithEveryone'],
] as const;

describe('pp_environment_creation_admins_only', () => {
  it('passes when only admins can create environments', async () => {
    expect(await runCheck('pp_environment_creation_admins_only', tenantCtx())).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'pass' })]);
  });
  it('fails when any user can create environments', async () => {
    const r = await runCheck(
      'pp_environment_creation_admins_only',
      tenantCtx({ disableEnvironmentCreationByNonAdminUsers: false, disableTrialEnvironmentCreationByNonAdminUsers: true }),
    );
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('production and sandbox') });
  });
  it('is not evaluated when tenant settings were not collected, or lack the field', async () => {
    expect((await runCheck('pp_environment_creation_admins_only', checkContext({ checkpoints: [noSettings] })))[0]).toMatchObject({
      status: 'not_evaluated',
      reason: expect.stringContaining('management application'),
    });
    expect((await runCheck('pp_environment_creation_admins_only', tenantCtx({ disableEnvironmentCreationByNonAdminUsers: null })))[0]?.status).toBe(
      'not_evaluated',
    );
    expect((await runCheck('pp_environment_creation_admins_only', checkContext({ estate: { tenantSettings: [isolation()] } })))[0]?.status).toBe(
      'not_evaluated',
    );
  });
});

describe('pp_trial_environment_creation_admins_only', () => {
  it('passes when only admins can create trial environments', async () => {
    expect((await runCheck('pp_trial_environment_creation_admins_only', tenantCtx({ disableEnvironmentCreationByNonAdminUsers: false })))[0]?.status).toBe(
      'pass',
    );
  });
  it('fails when any user can create trial environments', async () => {
    expect(
      (await runCheck('pp_trial_environment_creation_admins_only', tenantCtx({ disableTrialEnvironmentCreationByNonAdminUsers: false })))[0],
    ).toMatchObject({ status: 'fail', reason: expect.stringContaining('trial') });
  });
  it('is not evaluated without tenant settings', async () => {
    expect((await runCheck('pp_trial_environment_creation_admins_only', checkContext({ checkpoints: [noSettings] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('pp_portal_creation_admins_only', () => {
  it('passes when only admins can create Power Pages sites', async () => {
    expect((await runCheck('pp_portal_creation_admins_only', tenantCtx()))[0]?.status).toBe('pass');
  });
  it('fails when any user can create Power Pages sites', async () => {
    expect((await runCheck('pp_portal_creation_admins_only', tenantCtx({ disablePortalsCreationByNonAdminUsers: false })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('Power Pages'),
    });
  });
  it('is not evaluated when the setting is missing from the body', async () => {
    expect((await runCheck('pp_portal_creation_admins_only', tenantCtx({ disablePortalsCreationByNonAdminUsers: null })))[0]).toMatchObject({
      status: 'not_evaluated',
      reason: expect.stringContaining('disablePortalsCreationByNonAdminUsers'),
    });
  });
});

describe('pp_share_with_everyone_disabled', () => {
  it('passes when sharing with everyone is disabled', async () => {
    expect((await runCheck('pp_share_with_everyone_disabled', tenantCtx()))[0]?.status).toBe('pass');
  });
  it('fails when makers can share with everyone', async () => {
    expect((await runCheck('pp_share_with_everyone_disabled', tenantCtx({ disableShareWithEveryone: false })))[0]?.status).toBe('fail');
  });
  it('is not evaluated without tenant settings', async () => {
    expect((await runCheck('pp_share_with_everyone_disabled', checkContext({ checkpoints: [noSettings] })))[0]?.status).toBe('not_evaluated');
  });
});

it('each tenant-setting check reads only its own field', async () => {
  for (const [id, field] of flagChecks) {
    for (const [other] of flagChecks) {
      const r = await runCheck(other, tenantCtx({ [field]: false }));
      expect(r[0]?.status, `${other} with ${field}=false`).toBe(other === id ? 'fail' : 'pass');
    }
  }
});

describe('pp_tenant_isolation_enabled', () => {
  it('passes when tenant isolation is on', async () => {
    expect((await runCheck('pp_tenant_isolation_enabled', tenantCtx()))[0]?.status).toBe('pass');
  });
  it('fails when isolation is disabled or no policy exists', async () => {
    expect((await runCheck('pp_tenant_isolation_enabled', tenantCtx({}, { enabled: false })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('turned off'),
    });
    expect((await runCheck('pp_tenant_isolation_enabled', tenantCtx({}, { enabled: false, exists: false, allowedTenants: [] })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('No tenant isolation policy'),
    });
  });
  it('is not evaluated when the isolation policy was not collected', async () => {
    expect((await runCheck('pp_tenant_isolation_enabled', checkContext({ checkpoints: [noSettings] })))[0]?.status).toBe('not_evaluated');
    expect((await runCheck('pp_tenant_isolation_enabled', checkContext({ estate: { tenantSettings: [settings()] } })))[0]?.status).toBe('not_evaluated');
  });
});

describe('pp_tenant_isolation_allowlist', () => {
  it('passes named tenants and an empty allowlist when isolation is on', async () => {
    expect((await runCheck('pp_tenant_isolation_allowlist', tenantCtx()))[0]).toMatchObject({ status: 'pass', detail: { allowedTenants: ['partner-tenant'] } });
    expect((await runCheck('pp_tenant_isolation_allowlist', tenantCtx({}, { allowedTenants: [] })))[0]?.status).toBe('pass');
  });
  it('fails an allowlist that allows any tenant, and isolation turned off', async () => {
    const any = await runCheck(
      'pp_tenant_isolation_allowlist',
      tenantCtx(
        {},
        {
          allowedTenants: [
            { tenantId: 'partner', inbound: true, outbound: true },
            { tenantId: '*', inbound: false, outbound: true },
          ],
        },
      ),
    );
    expect(any[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('(*) outbound') });
    expect((await runCheck('pp_tenant_isolation_allowlist', tenantCtx({}, { enabled: false })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('off'),
    });
  });
  it('is not evaluated without tenant settings', async () => {
    expect((await runCheck('pp_tenant_isolation_allowlist', checkContext({ checkpoints: [noSettings] })))[0]?.status).toBe('not_evaluated');
  });
});

// --- DLP scope ---------------------------------------------------------------------------------------------------

describe('pp_dlp_default_environment', () => {
  it('passes when a policy covers the default environment (all, except others, only it)', async () => {
    for (const p of [
      policy('all'),
      policy('except', { environmentType: 'ExceptEnvironments', environments: ['env-prod'] }),
      policy('only', { environmentType: 'OnlyEnvironments', environments: ['default-tenant-1'] }),
    ]) {
      const r = await runCheck('pp_dlp_default_environment', dlpCtx(p));
      expect(r, p.id).toEqual([
        expect.objectContaining({
          resourceType: 'environment',
          resourceId: 'Default-tenant-1',
          status: 'pass',
          detail: expect.objectContaining({ policies: [p.id] }),
        }),
      ]);
    }
  });
  it('fails when the only policies exclude the default environment or list only others', async () => {
    const r = await runCheck(
      'pp_dlp_default_environment',
      dlpCtx(
        policy('except', { environmentType: 'ExceptEnvironments', environments: ['Default-tenant-1'] }),
        policy('only', { environmentType: 'OnlyEnvironments', environments: ['env-prod'] }),
        policy('odd', { environmentType: 'SomethingNew', environments: ['Default-tenant-1'] }),
      ),
    );
    expect(r).toEqual([expect.objectContaining({ resourceId: 'Default-tenant-1', status: 'fail' })]);
    expect((await runCheck('pp_dlp_default_environment', dlpCtx()))[0]?.status).toBe('fail');
  });
  it('is not evaluated without DLP policies or environments', async () => {
    expect(await runCheck('pp_dlp_default_environment', checkContext({ checkpoints: [streamError('dlpPolicies')] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
    expect((await runCheck('pp_dlp_default_environment', checkContext({ checkpoints: [streamError('environments')] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('pp_environment_without_dlp', () => {
  it('passes every non-default environment under an all-environments policy (ScubaGear #1396)', async () => {
    const r = await runCheck('pp_environment_without_dlp', dlpCtx(policy('all')));
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['env-prod', 'pass'],
      ['env-dev', 'pass'],
    ]);
  });
  it('fails only the environments an exclude-scope policy leaves out (ScubaGear #1396)', async () => {
    const r = await runCheck('pp_environment_without_dlp', dlpCtx(policy('except', { environmentType: 'ExceptEnvironments', environments: ['env-dev'] })));
    expect(resultFor(r, 'env-prod')?.status).toBe('pass');
    expect(resultFor(r, 'env-dev')).toMatchObject({ status: 'fail', reason: expect.stringContaining('No DLP policy') });
    const both = await runCheck(
      'pp_environment_without_dlp',
      dlpCtx(
        policy('except', { environmentType: 'ExceptEnvironments', environments: ['env-dev'] }),
        policy('only', { environmentType: 'OnlyEnvironments', environments: ['env-dev'] }),
      ),
    );
    expect(resultFor(both, 'env-dev')).toMatchObject({ status: 'pass', detail: expect.objectContaining({ policies: ['only'] }) });
  });
  it('is not evaluated without DLP policies', async () => {
    expect(await runCheck('pp_environment_without_dlp', checkContext({ environments: [prodEnv], checkpoints: [streamError('dlpPolicies')] }))).toEqual([
      expect.objectContaining({ status: 'not_evaluated' }),
    ]);
  });
});

// --- apps --------------------------------------------------------------------------------------------------------

describe('pp_app_shared_with_everyone', () => {
  it('passes an app not shared with everyone', async () => {
    expect((await runCheck('pp_app_shared_with_everyone', checkContext({ estate: { powerApps: [app('a1')] } })))[0]).toMatchObject({
      resourceType: 'app',
      status: 'pass',
    });
  });
  it('fails an app shared with everyone', async () => {
    const r = await runCheck('pp_app_shared_with_everyone', checkContext({ estate: { powerApps: [app('a1'), app('a2', { sharedWithTenant: true })] } }));
    expect(resultFor(r, 'a2')?.status).toBe('fail');
    expect(resultFor(r, 'a1')?.status).toBe('pass');
  });
  it('is not evaluated for an app without permissions and for an unreadable environment', async () => {
    const r = await runCheck(
      'pp_app_shared_with_everyone',
      checkContext({ estate: { powerApps: [app('a1', { sharedWithTenant: null })] }, checkpoints: [sliceError('powerApps', 'env2')] }),
    );
    expect(resultFor(r, 'a1')?.status).toBe('not_evaluated');
    expect(r.find((x) => x.resourceName === 'env2')?.status).toBe('not_evaluated');
    expect(r.some((x) => x.status === 'pass')).toBe(false);
  });
});

describe('pp_app_owner_disabled_or_missing', () => {
  it('passes an app whose owner is active', async () => {
    expect((await runCheck('pp_app_owner_disabled_or_missing', checkContext({ users, estate: { powerApps: [app('a1')] } })))[0]?.status).toBe('pass');
  });
  it('fails apps whose owner is disabled or deleted', async () => {
    const r = await runCheck(
      'pp_app_owner_disabled_or_missing',
      checkContext({ users, estate: { powerApps: [app('a1', { owner: principal('off') }), app('a2', { owner: principal('gone') })] } }),
    );
    expect(resultFor(r, 'a1')).toMatchObject({ status: 'fail', reason: expect.stringContaining('disabled') });
    expect(resultFor(r, 'a2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('no longer exists') });
  });
  it('is not evaluated without directory users or an owner id', async () => {
    expect(
      await runCheck(
        'pp_app_owner_disabled_or_missing',
        checkContext({ estate: { powerApps: [app('a1', { owner: principal('gone') })] }, checkpoints: [noUsers] }),
      ),
    ).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated', reason: expect.stringContaining('User.Read.All') })]);
    expect(
      (await runCheck('pp_app_owner_disabled_or_missing', checkContext({ users, estate: { powerApps: [app('a1', { owner: principal(null) })] } })))[0]?.status,
    ).toBe('not_evaluated');
  });
});

describe('guest_owns_app', () => {
  it('passes an app owned by a member', async () => {
    expect((await runCheck('guest_owns_app', checkContext({ users, estate: { powerApps: [app('a1')] } })))[0]?.status).toBe('pass');
  });
  it('fails an app owned by a guest', async () => {
    expect((await runCheck('guest_owns_app', checkContext({ users, estate: { powerApps: [app('a1', { owner: principal('g1') })] } })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('#EXT#'),
    });
  });
  it('is not evaluated without directory users', async () => {
    expect(
      (await runCheck('guest_owns_app', checkContext({ estate: { powerApps: [app('a1', { owner: principal('g1') })] }, checkpoints: [noUsers] })))[0]?.status,
    ).toBe('not_evaluated');
  });
});

// --- flows -------------------------------------------------------------------------------------------------------

describe('pp_flow_http_trigger', () => {
  it('passes a flow without an HTTP request trigger', async () => {
    expect((await runCheck('pp_flow_http_trigger', checkContext({ estate: { flows: [flow('f1')] } })))[0]).toMatchObject({
      resourceType: 'flow',
      status: 'pass',
    });
  });
  it('fails a flow started by an HTTP request', async () => {
    const r = await runCheck(
      'pp_flow_http_trigger',
      checkContext({ estate: { flows: [flow('f1'), flow('f2', { hasHttpTrigger: true, triggers: [{ type: 'Request', kind: 'Http', connectorId: null }] })] } }),
    );
    expect(resultFor(r, 'f2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('anyone with its URL') });
    expect(resultFor(r, 'f1')?.status).toBe('pass');
  });
  it('is not evaluated when flows were not collected or an environment was unreadable', async () => {
    expect((await runCheck('pp_flow_http_trigger', checkContext({ checkpoints: [streamError('flows')] })))[0]?.status).toBe('not_evaluated');
    expect((await runCheck('pp_flow_http_trigger', checkContext({ checkpoints: [sliceError('flows', 'env9')] })))[0]).toMatchObject({
      status: 'not_evaluated',
      resourceName: 'env9',
    });
  });
});

describe('pp_flow_external_http', () => {
  const dvEnv = environmentRow({ id: 'env1', dataverse_url: 'https://org1.crm.dynamics.com/' });
  const ctxWith = (...flows: ReturnType<typeof flow>[]) => checkContext({ users, environments: [dvEnv], estate: { flows } });
  it('passes flows calling only the organisation, its SharePoint, Dataverse and Microsoft APIs', async () => {
    const f = flow('f1', {
      hasHttpAction: true,
      definitionRead: true,
      httpTargets: [
        http('https://api.contoso.com/x', 'api.contoso.com'),
        http('https://contoso.sharepoint.com/_api', 'contoso.sharepoint.com'),
        http('https://org1.crm.dynamics.com/api/data', 'org1.crm.dynamics.com'),
        http('https://graph.microsoft.com/v1.0/me', 'graph.microsoft.com'),
      ],
    });
    const r = await runCheck('pp_flow_external_http', ctxWith(f, flow('f2')));
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails flows calling outside hosts (look-alike domains, shared Azure hosting) or run-time URLs', async () => {
    const r = await runCheck(
      'pp_flow_external_http',
      ctxWith(
        flow('f1', {
          hasHttpAction: true,
          definitionRead: true,
          httpTargets: [
            http('https://api.contoso.com/x', 'api.contoso.com'),
            http('https://contoso.com.evil.io/drop', 'contoso.com.evil.io'),
            http('https://x.azurewebsites.net/', 'x.azurewebsites.net'),
          ],
        }),
        flow('f2', { hasHttpAction: true, definitionRead: true, httpTargets: [http("@{triggerBody()?['url']}", null)] }),
        flow('f3', { hasHttpAction: true, definitionRead: true, httpTargets: [http('https://fabrikam.sharepoint.com/x', 'fabrikam.sharepoint.com')] }),
      ),
    );
    expect(resultFor(r, 'f1')).toMatchObject({
      status: 'fail',
      detail: expect.objectContaining({ externalHosts: ['contoso.com.evil.io', 'x.azurewebsites.net'] }),
    });
    expect(resultFor(r, 'f2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('run time') });
    expect(resultFor(r, 'f3')?.status).toBe('fail');
  });
  it('is not evaluated for a flow whose definition was not read, and without directory users', async () => {
    const r = await runCheck('pp_flow_external_http', ctxWith(flow('f1', { hasHttpAction: true, definitionRead: false })));
    expect(resultFor(r, 'f1')?.status).toBe('not_evaluated');
    expect(await runCheck('pp_flow_external_http', checkContext({ estate: { flows: [flow('f1')] }, checkpoints: [noUsers] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
  });
});

describe('pp_flow_owner_disabled_or_missing', () => {
  it('passes flows whose creator is active or a service principal', async () => {
    const r = await runCheck(
      'pp_flow_owner_disabled_or_missing',
      checkContext({ users, estate: { flows: [flow('f1'), flow('f2', { creator: { objectId: 'sp1', userId: null, userType: 'ServicePrincipal' } })] } }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails flows whose creator is disabled or deleted', async () => {
    const r = await runCheck(
      'pp_flow_owner_disabled_or_missing',
      checkContext({
        users,
        estate: {
          flows: [
            flow('f1', { creator: { objectId: 'off', userId: 'off', userType: 'ActiveDirectory' } }),
            flow('f2', { creator: { objectId: 'gone', userId: 'gone', userType: 'ActiveDirectory' } }),
          ],
        },
      }),
    );
    expect(r.map((x) => x.status)).toEqual(['fail', 'fail']);
  });
  it('is not evaluated without directory users', async () => {
    expect((await runCheck('pp_flow_owner_disabled_or_missing', checkContext({ estate: { flows: [flow('f1')] }, checkpoints: [noUsers] })))[0]?.status).toBe(
      'not_evaluated',
    );
  });
});

describe('guest_owns_flow', () => {
  it('passes a flow created by a member', async () => {
    expect((await runCheck('guest_owns_flow', checkContext({ users, estate: { flows: [flow('f1')] } })))[0]?.status).toBe('pass');
  });
  it('fails a flow created by a guest', async () => {
    expect(
      (
        await runCheck(
          'guest_owns_flow',
          checkContext({ users, estate: { flows: [flow('f1', { creator: { objectId: 'g1', userId: 'g1', userType: 'ActiveDirectory' } })] } }),
        )
      )[0]?.status,
    ).toBe('fail');
  });
  it('is not evaluated without directory users', async () => {
    expect((await runCheck('guest_owns_flow', checkContext({ estate: { flows: [flow('f1')] }, checkpoints: [noUsers] })))[0]?.status).toBe('not_evaluated');
  });
});

// --- connections and connectors ----------------------------------------------------------------------------------

describe('pp_connection_maker_credentials', () => {
  it('passes unshared connections and shared service-principal connections', async () => {
    const r = await runCheck(
      'pp_connection_maker_credentials',
      checkContext({ estate: { connections: [connection('c1'), connection('c2', { isShared: true, sharedWith: ['grp'], authenticationType: 'oauthSP' })] } }),
    );
    expect(r.map((x) => [x.resourceType, x.status])).toEqual([
      ['connection', 'pass'],
      ['connection', 'pass'],
    ]);
  });
  it("fails shared connections on the maker's OAuth sign-in", async () => {
    const r = await runCheck(
      'pp_connection_maker_credentials',
      checkContext({
        estate: {
          connections: [connection('c1', { isShared: true, sharedWith: ['u2', 'grp'] }), connection('c2', { isShared: true, sharedWithTenant: true })],
        },
      }),
    );
    expect(resultFor(r, 'c1')).toMatchObject({ status: 'fail', reason: expect.stringContaining("ann@contoso.com's own credentials") });
    expect(resultFor(r, 'c2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('everyone') });
  });
  it('is not evaluated when connections were not collected', async () => {
    expect((await runCheck('pp_connection_maker_credentials', checkContext({ checkpoints: [streamError('connections')] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('pp_custom_connector_insecure_backend', () => {
  it('passes a custom connector on HTTPS (third-party hosts included) and leaves standard connectors out', async () => {
    const r = await runCheck(
      'pp_custom_connector_insecure_backend',
      checkContext({
        estate: {
          connectors: [
            connector('shared_a'),
            connector('shared_b', { backendUrl: 'https://api.vendor.io', backendHost: 'api.vendor.io' }),
            connector('shared_sql', { isCustom: false, backendUrl: 'http://x' }),
          ],
        },
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['shared_a', 'pass'],
      ['shared_b', 'pass'],
    ]);
  });
  it('fails a custom connector whose backend is plain HTTP', async () => {
    expect(
      (
        await runCheck(
          'pp_custom_connector_insecure_backend',
          checkContext({ estate: { connectors: [connector('shared_a', { backendUrl: 'http://10.0.0.5:8080/api', backendHost: '10.0.0.5' })] } }),
        )
      )[0],
    ).toMatchObject({ status: 'fail', reason: expect.stringContaining('plain HTTP') });
  });
  it('is not evaluated without a backend URL or without connectors', async () => {
    expect(
      (
        await runCheck(
          'pp_custom_connector_insecure_backend',
          checkContext({ estate: { connectors: [connector('shared_a', { backendUrl: null, backendHost: null })] } }),
        )
      )[0]?.status,
    ).toBe('not_evaluated');
    expect((await runCheck('pp_custom_connector_insecure_backend', checkContext({ checkpoints: [streamError('connectors')] })))[0]?.status).toBe(
      'not_evaluated',
    );
  });
});

// --- environment settings (content security policy) ---------------------------------------------------------------

describe('pp_content_security_policy', () => {
  const csp = (env: string, model: boolean | null, canvas: boolean | null, reportUri: string | null = null) =>
    estateRow(
      'environmentSettings',
      env,
      {
        environmentId: env,
        organizationId: 'o1',
        cspEnforcedModelDriven: model,
        cspEnforcedCanvas: canvas,
        cspReportUri: reportUri,
        cspConfigurationModelDriven: null,
        cspConfigurationCanvas: null,
        auditEnabled: null,
        userAccessAuditEnabled: null,
        auditRetentionDays: null,
        sessionTimeoutEnabled: null,
        sessionTimeoutMinutes: null,
        inactivityTimeoutEnabled: null,
        inactivityTimeoutMinutes: null,
        blockedAttachments: null,
        ipFirewallEnabled: null,
        ipFirewallAuditOnly: null,
        ipFirewallAllowedRanges: null,
        ipCookieBindingEnabled: null,
      },
      { sliceKey: env },
    );
  const envs = [environmentRow({ id: 'e1' }), environmentRow({ id: 'e2' }), environmentRow({ id: 'e3' }), environmentRow({ id: 'teams', dataverse_url: null })];
  it('passes an environment enforcing CSP for model-driven and canvas apps, leaving environments without Dataverse out', async () => {
    const r = await runCheck(
      'pp_content_security_policy',
      checkContext({ environments: [envs[0]!, envs[3]!], estate: { environmentSettings: [csp('e1', true, true)] } }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceType: 'environment', resourceId: 'e1', status: 'pass' })]);
  });
  it('fails environments that do not enforce it, reporting-only included', async () => {
    const r = await runCheck(
      'pp_content_security_policy',
      checkContext({
        environments: envs.slice(0, 2),
        estate: { environmentSettings: [csp('e1', false, true, 'https://r.contoso.com'), csp('e2', true, false)] },
      }),
    );
    expect(resultFor(r, 'e1')).toMatchObject({ status: 'fail', reason: expect.stringContaining('model-driven apps (violations are only reported)') });
    expect(resultFor(r, 'e2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('canvas') });
  });
  it('is not evaluated for an unreadable environment, a missing or null setting, and without the stream', async () => {
    const r = await runCheck(
      'pp_content_security_policy',
      checkContext({
        environments: envs.slice(0, 3),
        estate: { environmentSettings: [csp('e2', null, true)] },
        checkpoints: [sliceError('environmentSettings', 'e1', 'Forbidden', 'The user is not a member of the organization.')],
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['e1', 'not_evaluated'],
      ['e2', 'not_evaluated'],
      ['e3', 'not_evaluated'],
    ]);
    expect(resultFor(r, 'e1')?.reason).toContain('not a member');
    expect(await runCheck('pp_content_security_policy', checkContext({ checkpoints: [streamError('environmentSettings')] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
  });
});

describe('pp_dlp_http_connector_not_blocked', () => {
  const allBlocked = { blocked: ['http', 'httpwebhook', 'shared_webcontents'] };
  it('passes when covering policies block every HTTP connector (listed, or by a Blocked default group)', async () => {
    expect((await runCheck('pp_dlp_http_connector_not_blocked', dlpCtx(policy('all', allBlocked))))[0]).toMatchObject({
      resourceId: 'Default-tenant-1',
      status: 'pass',
    });
    const split = dlpCtx(
      policy('p1', { blocked: ['http'] }),
      policy('p2', {
        environmentType: 'OnlyEnvironments',
        environments: ['Default-tenant-1'],
        blocked: [],
        business: ['shared_sharepointonline'],
        defaultConnectorsClassification: 'Blocked',
      }),
    );
    expect((await runCheck('pp_dlp_http_connector_not_blocked', split))[0]?.status).toBe('pass');
  });
  it('fails when an HTTP connector is allowed, or the only blocking policy excludes the default environment', async () => {
    const r = await runCheck('pp_dlp_http_connector_not_blocked', dlpCtx(policy('all', { blocked: ['http'], nonBusiness: ['httpwebhook'] })));
    expect(r[0]).toMatchObject({ status: 'fail', detail: expect.objectContaining({ open: ['HttpWebhook', 'shared_webcontents'] }) });
    const excluded = await runCheck(
      'pp_dlp_http_connector_not_blocked',
      dlpCtx(policy('except', { ...allBlocked, environmentType: 'ExceptEnvironments', environments: ['Default-tenant-1'] })),
    );
    expect(excluded[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('no DLP policy covers it') });
  });
  it('is not evaluated without DLP policies', async () => {
    expect((await runCheck('pp_dlp_http_connector_not_blocked', checkContext({ checkpoints: [streamError('dlpPolicies')] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('pp_dlp_default_environment_allowlist', () => {
  const run = (...policies: ReturnType<typeof policy>[]) => runCheck('pp_dlp_default_environment_allowlist', dlpCtx(...policies));
  const strict = {
    defaultConnectorsClassification: 'Blocked',
    business: ['shared_sharepointonline', 'shared_office365'],
    nonBusiness: [],
    blocked: ['shared_twitter'],
  };
  it('passes when only allow-listed connectors are usable and new connectors are blocked by default', async () => {
    expect(await run(policy('all', strict))).toEqual([expect.objectContaining({ resourceId: 'Default-tenant-1', status: 'pass' })]);
  });
  it('fails a connector outside the allow-list that no covering policy blocks, naming it', async () => {
    const r = await run(policy('all', { ...strict, nonBusiness: ['shared_dropbox'] }));
    expect(r).toEqual([expect.objectContaining({ status: 'fail', reason: expect.stringContaining('shared_dropbox') })]);
  });
  it('counts a connector blocked by another covering policy as blocked (the most restrictive wins)', async () => {
    const r = await run(policy('all', { ...strict, nonBusiness: ['shared_dropbox'] }), policy('all2', { ...strict, blocked: ['shared_dropbox'] }));
    expect(r[0]?.status).toBe('pass');
  });
  it('fails when no policy blocks new connectors by default', async () => {
    const r = await run(policy('all', { ...strict, defaultConnectorsClassification: 'General' }));
    expect(r).toEqual([expect.objectContaining({ status: 'fail', reason: expect.stringMatching(/every new connector/) })]);
  });
  it('ignores policies that do not cover the default environment; fails when none does', async () => {
    const r = await run(policy('only', { ...strict, environmentType: 'OnlyEnvironments', environments: ['env-dev'] }));
    expect(r).toEqual([expect.objectContaining({ status: 'fail', reason: expect.stringMatching(/No DLP policy/) })]);
  });
  it('is not evaluated when the groups were not read or the policies not collected', async () => {
    expect((await run(policy('all', { ...strict, connectorGroupsRead: false })))[0]?.status).toBe('not_evaluated');
    expect(await runCheck('pp_dlp_default_environment_allowlist', checkContext({ checkpoints: [streamError('dlpPolicies')] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
  });
});
