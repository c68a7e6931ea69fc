import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { powerPlatformGroundTruth, type PowerPlatformGroundTruth } from '../../emulator/index.ts';
import type { ConnectionAttrs } from '../../src/sources/powerPlatform/streams/connections.ts';
import type { ConnectorAttrs } from '../../src/sources/powerPlatform/streams/connectors.ts';
import type { DlpPolicyAttrs } from '../../src/sources/powerPlatform/streams/dlpPolicies.ts';
import type { FlowAttrs } from '../../src/sources/powerPlatform/streams/flows.ts';
import type { PowerAppAttrs } from '../../src/sources/powerPlatform/streams/powerApps.ts';
import type { TenantSettingsAttrs } from '../../src/sources/powerPlatform/streams/tenantSettings.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { countLive, listEstateObjects } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { world, type World } from './harness.ts';

const STREAMS = ['powerApps', 'flows', 'connectors', 'connections', 'dlpPolicies', 'tenantSettings'] as const;

/** Stored live counts of the Power Platform streams. */
async function stored(rt: Runtime, integrationId: string): Promise<Record<(typeof STREAMS)[number], number>> {
  const all = await countLive(rt.db, integrationId, STREAM_RUN_ORDER);
  return Object.fromEntries(STREAMS.map((s) => [s, all[s]])) as Record<(typeof STREAMS)[number], number>;
}

function expected(t: PowerPlatformGroundTruth): Record<(typeof STREAMS)[number], number> {
  return {
    powerApps: t.powerApps,
    flows: t.flows,
    connectors: t.connectors,
    connections: t.connections,
    dlpPolicies: t.dlpPolicies,
    tenantSettings: t.tenantSettings,
  };
}

describe('Power Platform inventory collected over the emulator', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  beforeAll(async () => {
    w = await world({
      seed: 'pp-e2e',
      sizes: { users: 30, guests: 4, groups: 4, environments: 4, agents: 4, powerBiWorkspaces: 0, apps: 14, flows: 14, connectors: 4, connections: 14 },
    });
    w.tenant.powerPlatform!.pageSize = 2; // several nextLink pages per environment
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  }, 60_000);
  afterAll(async () => w.close());

  it('stores every stream equal to the ground truth, with the risky properties checks will read', async () => {
    const truth = powerPlatformGroundTruth(w.tenant);
    expect(truth.readableEnvironments).toBe(w.tenant.environments.length);
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => (STREAMS as readonly string[]).includes(e.stream))).toEqual([]);
    expect(await stored(rt, integrationId)).toEqual(expected(truth));

    const apps = await listEstateObjects<PowerAppAttrs>(rt.db, integrationId, 'powerApps');
    expect(apps.filter((a) => a.attrs.sharedWithTenant === true)).toHaveLength(truth.risks.appsSharedWithTenant);
    expect(apps.filter((a) => a.attrs.isBypassConsent === true)).toHaveLength(truth.risks.appsBypassConsent);
    expect(apps.every((a) => a.attrs.owner.id !== null && a.attrs.environmentId === a.sliceKey)).toBe(true);

    const flows = await listEstateObjects<FlowAttrs>(rt.db, integrationId, 'flows');
    const external = (f: FlowAttrs) =>
      f.httpTargets.some((t) => t.host !== null && !t.host.endsWith('.internal') && !w.tenant.domains.some((d) => t.host === d || t.host!.endsWith(`.${d}`)));
    expect(flows.filter((f) => external(f.attrs))).toHaveLength(truth.risks.flowsWithExternalHttp);
    expect(flows.filter((f) => f.attrs.hasHttpTrigger)).toHaveLength(truth.risks.flowsWithHttpTrigger);
    // Definitions are read only for flows with an HTTP action; those carry connection names.
    expect(flows.every((f) => f.attrs.definitionRead === f.attrs.hasHttpAction)).toBe(true);
    const model = w.tenant.powerPlatform!;
    for (const f of flows.filter((x) => x.attrs.definitionRead)) {
      const m = model.flows.find((x) => x.name === f.id)!;
      expect(
        f.attrs.connectionReferences
          .filter((r) => r.connectionName)
          .map((r) => r.connectionName)
          .sort(),
      ).toEqual(m.connectionReferences.map((r) => r.connection).sort());
    }

    const connections = await listEstateObjects<ConnectionAttrs>(rt.db, integrationId, 'connections');
    const users = new Map(w.tenant.users.map((u) => [u.id, u]));
    expect(connections.filter((c) => users.get(c.attrs.createdBy.id!)?.accountEnabled === false)).toHaveLength(truth.risks.connectionsByDisabledUsers);
    expect(connections.filter((c) => users.get(c.attrs.createdBy.id!)?.userType === 'Guest')).toHaveLength(truth.risks.connectionsByGuests);
    expect(connections.filter((c) => c.attrs.isErrored)).toHaveLength(truth.risks.connectionsErrored);
    expect(connections.filter((c) => c.attrs.sharedWithTenant)).toHaveLength(truth.risks.connectionsSharedWithTenant);
    expect(connections.filter((c) => c.attrs.authenticationType === 'oauth').every((c) => c.attrs.accountName === c.attrs.createdBy.userPrincipalName)).toBe(
      true,
    );

    const connectors = await listEstateObjects<ConnectorAttrs>(rt.db, integrationId, 'connectors');
    expect(connectors.filter((c) => c.attrs.isCustom)).toHaveLength(truth.customConnectors);
    expect(connectors.filter((c) => c.attrs.isCustom && c.attrs.backendHost !== null)).toHaveLength(truth.risks.customConnectorsExternal);

    // The policy list carries no connector groups: each policy is read on its own, and its groups are stored.
    const dlp = await listEstateObjects<DlpPolicyAttrs>(rt.db, integrationId, 'dlpPolicies');
    for (const m of model.dlpPolicies) {
      const got = dlp.find((d) => d.id === m.name)!.attrs;
      expect([got.business, got.nonBusiness, got.blocked].map((g) => [...g].sort())).toEqual([m.business, m.nonBusiness, m.blocked].map((g) => [...g].sort()));
      expect(got.connectorGroupsRead).toBe(true);
    }
    expect(dlp.some((d) => d.attrs.blocked.includes('Http'))).toBe(true);

    const settings = await listEstateObjects<TenantSettingsAttrs>(rt.db, integrationId, 'tenantSettings');
    const ts = settings.find((s) => s.id === 'tenantSettings')!.attrs;
    const iso = settings.find((s) => s.id === 'tenantIsolation')!.attrs;
    expect(ts.kind === 'tenantSettings' && ts.disableEnvironmentCreationByNonAdminUsers === !truth.risks.environmentCreationOpen).toBe(true);
    expect(ts.kind === 'tenantSettings' && ts.disablePortalsCreationByNonAdminUsers === !truth.risks.portalCreationOpen).toBe(true);
    expect(iso.kind === 'tenantIsolation' && iso.enabled === truth.risks.tenantIsolationEnabled).toBe(true);
  }, 60_000);

  it('a second round after adds, changes and deletions equals the new ground truth; deleted objects are kept, marked deleted', async () => {
    const pp = w.tenant.powerPlatform!;
    const template = pp.apps[0]!;
    const added = { ...template, name: '0a0a0a0a-0000-4000-8000-00000000abcd', displayName: 'Added app', sharedWithTenant: true };
    pp.apps.push(added);
    const changed = pp.flows[1]!;
    changed.displayName = 'Renamed flow';
    changed.state = 'Stopped';
    const goneConnection = pp.connections.splice(2, 1)[0]!;
    const goneDlp = pp.dlpPolicies.splice(0, 1)[0]!;
    const truth = powerPlatformGroundTruth(w.tenant);

    // Right after a complete read, the per-environment inventory is reused (refresh interval): nothing is read
    // from the Power Apps / Power Automate admin APIs, nothing stored changes or is marked deleted.
    const requestsBefore = [...rt.http.stats.entries()].filter(([api]) => api === 'powerApps' || api === 'flow').reduce((n, [, s]) => n + s.requests, 0);
    const reused = await collectIntegration(rt, integrationId);
    expect(reused.streams.powerApps.reusedFrom).toBeTruthy();
    expect(reused.streams.flows.reusedFrom).toBeTruthy();
    expect([...rt.http.stats.entries()].filter(([api]) => api === 'powerApps' || api === 'flow').reduce((n, [, s]) => n + s.requests, 0)).toBe(requestsBefore);
    expect((await listEstateObjects(rt.db, integrationId, 'powerApps')).some((a) => a.id === added.name)).toBe(false);

    const run = await collectIntegration(rt, integrationId, { full: true });
    expect(run.errors.filter((e) => (STREAMS as readonly string[]).includes(e.stream))).toEqual([]);
    expect(await stored(rt, integrationId)).toEqual(expected(truth));
    const apps = await listEstateObjects<PowerAppAttrs>(rt.db, integrationId, 'powerApps');
    expect(apps.find((a) => a.id === added.name)?.attrs.sharedWithTenant).toBe(true);
    const flow = (await listEstateObjects<FlowAttrs>(rt.db, integrationId, 'flows')).find((f) => f.id === changed.name)!;
    expect(flow.attrs.displayName).toBe('Renamed flow');
    expect(flow.attrs.state).toBe('Stopped');

    const deleted = await rt.db
      .selectFrom('estate_objects')
      .select(['stream', 'id'])
      .where('integration_id', '=', integrationId)
      .where('deleted_at', 'is not', null)
      .where('stream', 'in', [...STREAMS])
      .orderBy('stream')
      .execute();
    expect(deleted).toEqual([
      { stream: 'connections', id: `${goneConnection.environment}/${goneConnection.name}` },
      { stream: 'dlpPolicies', id: goneDlp.name },
    ]);
  }, 60_000);

  it('without the management-app registration every stream is recorded errored and nothing stored is marked deleted', async () => {
    const before = await stored(rt, integrationId);
    w.app.isManagementApp = false;
    try {
      const run = await collectIntegration(rt, integrationId);
      for (const s of STREAMS)
        expect(
          run.errors.some((e) => e.stream === s),
          s,
        ).toBe(true);
      expect(run.errors.find((e) => e.stream === 'dlpPolicies')?.message).toContain('does not have permission to access the path');
      expect(run.errors.find((e) => e.stream === 'powerApps')?.code).toBe('PARENT_STREAM_FAILED');
      expect(await stored(rt, integrationId)).toEqual(before);
      expect(powerPlatformGroundTruth(w.tenant).powerApps).toBe(0);
    } finally {
      w.app.isManagementApp = true;
    }
  }, 60_000);
});
