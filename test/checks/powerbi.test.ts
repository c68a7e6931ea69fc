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

describe('Power BI tenant-setting checks (ScubaGear MS.POWERBI)', () => {
  const cases: [string, string, 'off' | 'on' | 'offOrScoped'][] = [
    ['powerbi_publish_to_web_setting', 'PublishToWeb', 'off'],
    ['powerbi_guest_access_setting', 'AllowGuestUserToAccessSharedContent', 'offOrScoped'],
    ['powerbi_guest_invitations_setting', 'ExternalSharingV2', 'offOrScoped'],
    ['powerbi_service_principal_api_access', 'ServicePrincipalAccessPermissionAPIs', 'offOrScoped'],
    ['powerbi_service_principal_profiles', 'AllowServicePrincipalsCreateAndUseProfiles', 'offOrScoped'],
    ['powerbi_resource_key_auth_allowed', 'BlockResourceKeyAuthentication', 'on'],
    ['powerbi_r_python_visuals', 'RScriptVisual', 'off'],
    ['powerbi_sensitivity_labels_disabled', 'EimInformationProtectionEdit', 'on'],
    ['powerbi_shareable_links_whole_org', 'ShareLinkToEntireOrg', 'offOrScoped'],
  ];
  it.each(cases)('%s judges %s (%s)', async (id, name, wanted) => {
    const status = async (over: Partial<PowerBiTenantSettingAttrs>) => (await settingsRun(id, setting(name, over)))[0]?.status;
    expect(await status({ enabled: true })).toBe(wanted === 'on' ? 'pass' : 'fail');
    expect(await status({ enabled: false })).toBe(wanted === 'on' ? 'fail' : 'pass');
    // Scoped to a security group: enough for the "off or scoped" policies, not for "off" ones.
    if (wanted !== 'on') expect(await status({ enabled: true, ...scoped })).toBe(wanted === 'offOrScoped' ? 'pass' : 'fail');
    // Another setting alone, or none at all: not evaluated, never a pass.
    expect(await settingsRun(id, setting('SomethingElse', { enabled: false }))).toEqual([
      expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining(name) }),
    ]);
    expect(await status({ enabled: null })).toBe('not_evaluated');
  });

  it('names the groups a scoped setting covers and says "entire organisation" otherwise', async () => {
    expect((await settingsRun('powerbi_publish_to_web_setting', setting('PublishToWeb', scoped)))[0]?.reason).toMatch(/for Fabric Approved Users/);
    expect((await settingsRun('powerbi_guest_access_setting', setting('AllowGuestUserToAccessSharedContent')))[0]?.reason).toMatch(/entire organisation/);
  });

  it('is not evaluated — with the reason — when the Fabric API refused or lacked List Tenant Settings', async () => {
    const refused = streamError('powerBiTenantSettings', 'POWER_BI_NOT_AUTHORIZED', 'Not collected: the Fabric admin API refused List Tenant Settings (403).');
    const r = await runCheck('powerbi_publish_to_web_setting', checkContext({ checkpoints: [refused] }));
    expect(r).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated', reason: expect.stringContaining('refused List Tenant Settings') }),
    ]);
  });
});
