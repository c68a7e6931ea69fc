import { describe, expect, it } from 'vitest';
import type { PowerBiReportSummary, PowerBiWorkspaceAttrs } from '../../src/sources/powerBi/streams/powerBiWorkspaces.ts';
import type { PowerBiTenantSettingAttrs } from '../../src/sources/powerBi/streams/powerBiTenantSettings.ts';
import type { PowerBiSharedLinkAttrs } from '../../src/sources/powerBi/streams/powerBiSharedLinks.ts';
import { checkContext, estateRow, resultFor, runCheck, streamError } from '../support/checks.ts';

const link = (kind: PowerBiSharedLinkAttrs['kind'], over: Partial<PowerBiSharedLinkAttrs> = {}): PowerBiSharedLinkAttrs => ({
  kind,
  artifactId: 'r1',
  displayName: 'Sales',
  artifactType: 'Report',
  shareType: kind === 'publishedToWeb' ? 'PublishToWeb' : 'Link',
  accessRight: kind === 'publishedToWeb' ? 'None' : 'Read',
  sharer: { emailAddress: 'ann@contoso.com', identifier: 'ann@contoso.com', graphId: 'u1', principalType: 'User' },
  ...over,
});
const report = (over: Partial<PowerBiReportSummary> = {}): PowerBiReportSummary => ({
  id: 'r1',
  name: 'Sales',
  datasetId: 'd1',
  reportType: 'PowerBIReport',
  endorsement: null,
  sensitivityLabelId: null,
  userCount: 2,
  externalUserCount: 0,
  ...over,
});
const workspace = (over: Partial<PowerBiWorkspaceAttrs> = {}): PowerBiWorkspaceAttrs => ({
  type: 'Workspace',
  state: 'Active',
  isOnDedicatedCapacity: false,
  capacityId: null,
  users: [],
  userCount: 3,
  externalUserCount: 0,
  sharedWithGroup: false,
  reports: [report()],
  datasets: [],
  dashboardCount: 0,
  dataflowCount: 0,
  scannedAt: null,
  ...over,
});
const notAuthorized = streamError(
  'powerBiSharedLinks',
  'POWER_BI_NOT_AUTHORIZED',
  "Enable the tenant setting 'Service principals can access read-only admin APIs'.",
);

describe('powerbi_publish_to_web', () => {
  it('passes the tenant when nothing is published to the web (organisation links do not count)', async () => {
    const r = await runCheck(
      'powerbi_publish_to_web',
      checkContext({ estate: { powerBiSharedLinks: [estateRow('powerBiSharedLinks', 'organizationLink/r1', link('organizationLink'))] } }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'pass' })]);
  });
  it('fails each artifact published to the web, naming the sharer', async () => {
    const r = await runCheck(
      'powerbi_publish_to_web',
      checkContext({ estate: { powerBiSharedLinks: [estateRow('powerBiSharedLinks', 'publishedToWeb/r1', link('publishedToWeb'))] } }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceId: 'publishedToWeb/r1', status: 'fail', reason: expect.stringContaining('ann@contoso.com') })]);
  });
  it('is not evaluated when Power BI refused the admin APIs, naming the tenant setting', async () => {
    const r = await runCheck('powerbi_publish_to_web', checkContext({ checkpoints: [notAuthorized] }));
    expect(r).toEqual([expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining('read-only admin APIs') })]);
  });
});

describe('powerbi_organization_links', () => {
  it('passes read-only organisation links', async () => {
    const r = await runCheck(
      'powerbi_organization_links',
      checkContext({ estate: { powerBiSharedLinks: [estateRow('powerBiSharedLinks', 'organizationLink/r1', link('organizationLink'))] } }),
    );
    expect(r[0]?.status).toBe('pass');
  });
  it('fails an organisation link that grants reshare or edit', async () => {
    const r = await runCheck(
      'powerbi_organization_links',
      checkContext({
        estate: { powerBiSharedLinks: [estateRow('powerBiSharedLinks', 'organizationLink/r1', link('organizationLink', { accessRight: 'ReadReshare' }))] },
      }),
    );
    expect(r[0]).toMatchObject({ status: 'fail', reason: expect.stringContaining('ReadReshare') });
  });
  it('is not evaluated when Power BI refused the admin APIs', async () => {
    expect((await runCheck('powerbi_organization_links', checkContext({ checkpoints: [notAuthorized] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('powerbi_external_sharing', () => {
  it('passes workspaces without guests, and ignores personal workspaces', async () => {
    const r = await runCheck(
      'powerbi_external_sharing',
      checkContext({
        estate: {
          powerBiWorkspaces: [
            estateRow('powerBiWorkspaces', 'w1', workspace()),
            estateRow('powerBiWorkspaces', 'w2', workspace({ type: 'PersonalGroup', externalUserCount: 1 })),
          ],
        },
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([['w1', 'pass']]);
  });
  it('fails a workspace where a guest holds a role or a report is shared with a guest', async () => {
    const r = await runCheck(
      'powerbi_external_sharing',
      checkContext({
        estate: {
          powerBiWorkspaces: [
            estateRow('powerBiWorkspaces', 'w1', workspace({ externalUserCount: 1 })),
            estateRow('powerBiWorkspaces', 'w2', workspace({ reports: [report({ externalUserCount: 2, name: 'Board pack' })] })),
          ],
        },
      }),
    );
    expect(resultFor(r, 'w1')).toMatchObject({ status: 'fail', reason: expect.stringContaining('workspace role') });
    expect(resultFor(r, 'w2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('Board pack') });
  });
  it('is not evaluated when workspaces were not scanned', async () => {
    expect(
      (await runCheck('powerbi_external_sharing', checkContext({ checkpoints: [streamError('powerBiWorkspaces', 'POWER_BI_NOT_AUTHORIZED')] })))[0]?.status,
    ).toBe('not_evaluated');
  });
});

const setting = (settingName: string, over: Partial<PowerBiTenantSettingAttrs> = {}) =>
  estateRow('powerBiTenantSettings', settingName, {
    settingName,
    title: settingName,
    enabled: true,
    canSpecifySecurityGroups: true,
    group: 'Export and sharing settings',
    enabledSecurityGroups: [],
    excludedSecurityGroups: [],
    properties: [],
    delegateToWorkspace: null,
    delegateToCapacity: null,
    delegateToDomain: null,
    ...over,
  });
const scoped = { enabledSecurityGroups: [{ graphId: 'g1', name: 'Fabric Approved Users' }] };
const settingsRun = (id: string, ...rows: ReturnType<typeof setting>[]) => runCheck(id, checkContext({ estate: { powerBiTenantSettings: rows } }));

type Wanted = 'off' | 'on' | 'offOrScoped';
const statusOf = async (id: string, name: string, over: Partial<PowerBiTenantSettingAttrs>) => (await settingsRun(id, setting(name, over)))[0]?.status;
/** Pass and fail of one tenant-setting check: the compliant state passes, the other fails; scoping counts only for "off or scoped". */
async function judges(id: string, name: string, wanted: Wanted, expectPass: boolean) {
  const good = wanted === 'on' ? { enabled: true } : { enabled: false };
  const bad = wanted === 'on' ? { enabled: false } : { enabled: true };
  if (expectPass) {
    expect(await statusOf(id, name, good)).toBe('pass');
    if (wanted === 'offOrScoped') expect(await statusOf(id, name, { enabled: true, ...scoped })).toBe('pass');
  } else {
    expect(await statusOf(id, name, bad)).toBe('fail');
    if (wanted === 'off') expect(await statusOf(id, name, { enabled: true, ...scoped })).toBe('fail');
  }
}
/** Not evaluated, never a pass: the setting absent, without a value, or the stream refused. */
async function notEvaluated(id: string, name: string) {
  expect(await settingsRun(id, setting('SomethingElse', { enabled: false }))).toEqual([
    expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining(name) }),
  ]);
  expect(await statusOf(id, name, { enabled: null })).toBe('not_evaluated');
  const refused = streamError('powerBiTenantSettings', 'POWER_BI_NOT_AUTHORIZED', 'Not collected: the Fabric admin API refused List Tenant Settings (403).');
  expect(await runCheck(id, checkContext({ checkpoints: [refused] }))).toEqual([
    expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated', reason: expect.stringContaining('refused List Tenant Settings') }),
  ]);
}

describe('powerbi_publish_to_web_setting', () => {
  it('passes when PublishToWeb is disabled', () => judges('powerbi_publish_to_web_setting', 'PublishToWeb', 'off', true));
  it('fails when PublishToWeb is enabled, even for a group', () => judges('powerbi_publish_to_web_setting', 'PublishToWeb', 'off', false));
  it('is not evaluated when PublishToWeb is missing, valueless or unreadable', () => notEvaluated('powerbi_publish_to_web_setting', 'PublishToWeb'));
});

describe('powerbi_guest_access_setting', () => {
  it('passes when AllowGuestUserToAccessSharedContent is disabled or scoped to security groups', () =>
    judges('powerbi_guest_access_setting', 'AllowGuestUserToAccessSharedContent', 'offOrScoped', true));
  it('fails when AllowGuestUserToAccessSharedContent is enabled for the entire organisation', () =>
    judges('powerbi_guest_access_setting', 'AllowGuestUserToAccessSharedContent', 'offOrScoped', false));
  it('is not evaluated when AllowGuestUserToAccessSharedContent is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_guest_access_setting', 'AllowGuestUserToAccessSharedContent'));
});

describe('powerbi_guest_invitations_setting', () => {
  it('passes when ExternalSharingV2 is disabled or scoped to security groups', () =>
    judges('powerbi_guest_invitations_setting', 'ExternalSharingV2', 'offOrScoped', true));
  it('fails when ExternalSharingV2 is enabled for the entire organisation', () =>
    judges('powerbi_guest_invitations_setting', 'ExternalSharingV2', 'offOrScoped', false));
  it('is not evaluated when ExternalSharingV2 is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_guest_invitations_setting', 'ExternalSharingV2'));
});

describe('powerbi_service_principal_api_access', () => {
  it('passes when ServicePrincipalAccessPermissionAPIs is disabled or scoped to security groups', () =>
    judges('powerbi_service_principal_api_access', 'ServicePrincipalAccessPermissionAPIs', 'offOrScoped', true));
  it('fails when ServicePrincipalAccessPermissionAPIs is enabled for the entire organisation', () =>
    judges('powerbi_service_principal_api_access', 'ServicePrincipalAccessPermissionAPIs', 'offOrScoped', false));
  it('is not evaluated when ServicePrincipalAccessPermissionAPIs is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_service_principal_api_access', 'ServicePrincipalAccessPermissionAPIs'));
});

describe('powerbi_service_principal_profiles', () => {
  it('passes when AllowServicePrincipalsCreateAndUseProfiles is disabled or scoped to security groups', () =>
    judges('powerbi_service_principal_profiles', 'AllowServicePrincipalsCreateAndUseProfiles', 'offOrScoped', true));
  it('fails when AllowServicePrincipalsCreateAndUseProfiles is enabled for the entire organisation', () =>
    judges('powerbi_service_principal_profiles', 'AllowServicePrincipalsCreateAndUseProfiles', 'offOrScoped', false));
  it('is not evaluated when AllowServicePrincipalsCreateAndUseProfiles is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_service_principal_profiles', 'AllowServicePrincipalsCreateAndUseProfiles'));
});

describe('powerbi_resource_key_auth_allowed', () => {
  it('passes when BlockResourceKeyAuthentication is enabled', () => judges('powerbi_resource_key_auth_allowed', 'BlockResourceKeyAuthentication', 'on', true));
  it('fails when BlockResourceKeyAuthentication is disabled', () => judges('powerbi_resource_key_auth_allowed', 'BlockResourceKeyAuthentication', 'on', false));
  it('is not evaluated when BlockResourceKeyAuthentication is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_resource_key_auth_allowed', 'BlockResourceKeyAuthentication'));
});

describe('powerbi_r_python_visuals', () => {
  it('passes when RScriptVisual is disabled', () => judges('powerbi_r_python_visuals', 'RScriptVisual', 'off', true));
  it('fails when RScriptVisual is enabled, even for a group', () => judges('powerbi_r_python_visuals', 'RScriptVisual', 'off', false));
  it('is not evaluated when RScriptVisual is missing, valueless or unreadable', () => notEvaluated('powerbi_r_python_visuals', 'RScriptVisual'));
});

describe('powerbi_sensitivity_labels_disabled', () => {
  it('passes when EimInformationProtectionEdit is enabled', () => judges('powerbi_sensitivity_labels_disabled', 'EimInformationProtectionEdit', 'on', true));
  it('fails when EimInformationProtectionEdit is disabled', () => judges('powerbi_sensitivity_labels_disabled', 'EimInformationProtectionEdit', 'on', false));
  it('is not evaluated when EimInformationProtectionEdit is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_sensitivity_labels_disabled', 'EimInformationProtectionEdit'));
});

describe('powerbi_shareable_links_whole_org', () => {
  it('passes when ShareLinkToEntireOrg is disabled or scoped to security groups', () =>
    judges('powerbi_shareable_links_whole_org', 'ShareLinkToEntireOrg', 'offOrScoped', true));
  it('fails when ShareLinkToEntireOrg is enabled for the entire organisation', () =>
    judges('powerbi_shareable_links_whole_org', 'ShareLinkToEntireOrg', 'offOrScoped', false));
  it('is not evaluated when ShareLinkToEntireOrg is missing, valueless or unreadable', () =>
    notEvaluated('powerbi_shareable_links_whole_org', 'ShareLinkToEntireOrg'));
});

describe('Power BI tenant-setting reasons', () => {
  it('names the groups a scoped setting covers and says "entire organisation" otherwise', async () => {
    expect((await settingsRun('powerbi_publish_to_web_setting', setting('PublishToWeb', scoped)))[0]?.reason).toMatch(/for Fabric Approved Users/);
    expect((await settingsRun('powerbi_guest_access_setting', setting('AllowGuestUserToAccessSharedContent')))[0]?.reason).toMatch(/entire organisation/);
  });
});
