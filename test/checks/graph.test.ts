import { describe, expect, it } from 'vitest';
import type { ExternalConnectionAttrs } from '../../src/sources/graph/streams/externalConnections.ts';
import type { TeamsAppAttrs } from '../../src/sources/graph/streams/teamsApps.ts';
import { checkContext, estateRow, resultFor, runCheck, sliceError, streamError } from '../support/checks.ts';

function installs(appId: string, users: number, over: Partial<TeamsAppAttrs> = {}) {
  return Array.from({ length: users }, (_, i) =>
    estateRow(
      'teamsApps',
      `u${i}/${appId}`,
      {
        userId: `u${i}`,
        installationId: `${appId}-${i}`,
        teamsAppId: appId,
        externalId: `ext-${appId}`,
        displayName: `App ${appId}`,
        version: '1.0',
        distributionMethod: 'sideloaded',
        azureADAppId: 'aad-1',
        publishingState: 'published',
        ...over,
      },
      { sliceKey: `u${i}` },
    ),
  );
}
const connection = (over: Partial<ExternalConnectionAttrs> = {}): ExternalConnectionAttrs => ({
  name: 'HR',
  description: null,
  state: 'ready',
  authorizedAppIds: ['app-1'],
  connectorId: 'ServiceNowKB',
  ...over,
});

describe('teams_custom_app_widely_installed', () => {
  it('passes when custom apps stay below the threshold and store apps are left out', async () => {
    const r = await runCheck(
      'teams_custom_app_widely_installed',
      checkContext({ estate: { teamsApps: [...installs('a', 19), ...installs('store', 50, { distributionMethod: 'store', externalId: null })] } }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'pass' })]);
  });
  it('fails a sideloaded or organisation app installed for 20 users or more', async () => {
    const r = await runCheck(
      'teams_custom_app_widely_installed',
      checkContext({ estate: { teamsApps: [...installs('a', 20), ...installs('b', 25, { distributionMethod: 'organization' })] } }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', resourceType: 'teamsApp', reason: expect.stringContaining('installed for 20 users') });
    expect(resultFor(r, 'b')?.status).toBe('fail');
  });
  it('is not evaluated without TeamsAppInstallation.ReadForUser.All, and per user batch that failed', async () => {
    expect((await runCheck('teams_custom_app_widely_installed', checkContext({ checkpoints: [streamError('teamsApps')] })))[0]?.status).toBe('not_evaluated');
    const r = await runCheck('teams_custom_app_widely_installed', checkContext({ checkpoints: [sliceError('teamsApps', 'u0', 'BATCH_THROTTLED')] }));
    expect(r.some((x) => x.status === 'not_evaluated' && x.resourceName === 'u0')).toBe(true);
  });
});

describe('external_connection_custom', () => {
  it('passes a Microsoft-built connector with one authorised app, and a draft connection', async () => {
    const r = await runCheck(
      'external_connection_custom',
      checkContext({
        estate: {
          externalConnections: [
            estateRow('externalConnections', 'c1', connection()),
            estateRow('externalConnections', 'c2', connection({ state: 'draft', connectorId: null })),
          ],
        },
      }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails a ready custom connection and one several apps can write to', async () => {
    const r = await runCheck(
      'external_connection_custom',
      checkContext({
        estate: {
          externalConnections: [
            estateRow('externalConnections', 'c1', connection({ connectorId: null })),
            estateRow('externalConnections', 'c2', connection({ authorizedAppIds: ['a', 'b'] })),
          ],
        },
      }),
    );
    expect(resultFor(r, 'c1')).toMatchObject({ status: 'fail', reason: expect.stringContaining('Custom connection') });
    expect(resultFor(r, 'c2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('2 applications') });
  });
  it('is not evaluated without ExternalConnection.Read.All', async () => {
    expect((await runCheck('external_connection_custom', checkContext({ checkpoints: [streamError('externalConnections')] })))[0]?.status).toBe(
      'not_evaluated',
    );
  });
});
