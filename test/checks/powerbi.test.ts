import { describe, expect, it } from 'vitest';
import type { PowerBiReportSummary, PowerBiWorkspaceAttrs } from '../../src/sources/powerBi/streams/powerBiWorkspaces.ts';
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
