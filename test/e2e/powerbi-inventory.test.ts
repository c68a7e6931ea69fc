import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { powerBiInventoryGroundTruth, type PowerBiInventoryTruth, type RequestLogEntry } from '../../emulator/index.ts';
import type { PowerBiSharedLinkAttrs } from '../../src/sources/powerBi/streams/powerBiSharedLinks.ts';
import type { PowerBiWorkspaceAttrs } from '../../src/sources/powerBi/streams/powerBiWorkspaces.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { credentialsFor, getIntegration, streamContext } from '../../src/integration/index.ts';
import { MAX_SCANS_IN_FLIGHT, modifiedUrl, scanWorkspaces } from '../../src/sources/powerBi/scanner.ts';
import { latestFinishedRun, saveDeltaLink } from '../../src/store/repositories/runs.ts';
import { listEstateObjects } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { ingestAudit, POWER_BI_SOURCE } from '../../src/sync/audit.ts';
import { setupSteps } from '../../src/onboarding/doctor.ts';
import { world, type World } from './harness.ts';

/** 250 workspaces: three scan batches of at most 100. */
const WORKSPACES = 250;

/** What a complete collection should hold: the ground truth but the deleted workspaces (not kept live). */
type Collected = Omit<PowerBiInventoryTruth, 'deletedWorkspaces'>;

async function collected(rt: Runtime, integrationId: string): Promise<Collected> {
  const ws = await listEstateObjects<PowerBiWorkspaceAttrs>(rt.db, integrationId, 'powerBiWorkspaces');
  const links = await listEstateObjects<PowerBiSharedLinkAttrs>(rt.db, integrationId, 'powerBiSharedLinks');
  return {
    workspaces: ws.length,
    personalWorkspaces: ws.filter((w) => w.attrs.type === 'PersonalGroup').length,
    reports: ws.reduce((n, w) => n + w.attrs.reports.length, 0),
    datasets: ws.reduce((n, w) => n + w.attrs.datasets.length, 0),
    dashboards: ws.reduce((n, w) => n + w.attrs.dashboardCount, 0),
    dataflows: ws.reduce((n, w) => n + w.attrs.dataflowCount, 0),
    workspacesWithGuests: ws.filter((w) => w.attrs.externalUserCount > 0).length,
    workspacesSharedWithGroups: ws.filter((w) => w.attrs.sharedWithGroup).length,
    publishedToWeb: links.filter((l) => l.attrs.kind === 'publishedToWeb').length,
    organizationLinks: links.filter((l) => l.attrs.kind === 'organizationLink').length,
  };
}

function expected(t: PowerBiInventoryTruth): Collected {
  const { deletedWorkspaces: _d, ...rest } = t;
  return rest;
}

/** Power BI requests of the log, as `METHOD /path-after-admin`. */
function powerBiCalls(entries: RequestLogEntry[]): string[] {
  return entries
    .filter((e) => e.service === 'powerBi')
    .map((e) => `${e.method} ${e.path.replace(/^\/powerbi\/v1\.0\/myorg\/admin\//, '').replace(/\?.*$/, '')}`);
}

describe('Power BI inventory through the scanner APIs', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;

  beforeAll(async () => {
    w = await world({ seed: 'pbi-inventory', sizes: { users: 12, guests: 3, groups: 2, environments: 1, agents: 0, powerBiWorkspaces: WORKSPACES } });
    rt = await w.runtime();
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  });
  afterAll(async () => w.close());

  const truth = () => powerBiInventoryGroundTruth(w.tenant);

  it("set up as Microsoft documents (no Power BI permission, the tenant setting on): verified from the API's answer, not the roles claim", async () => {
    const { report, integration } = await addCustomerAppIntegration(await w.runtime(), {
      tenantId: w.tenant.id,
      clientId: w.app.appId,
      clientSecret: w.secret,
    });
    expect(report.grantedRoles.powerBi).toEqual([]);
    expect(report.powerBi).toMatchObject({ access: 'granted', consentedPermissions: [], tenantSetting: 'Service principals can access read-only admin APIs' });
    expect(report.capabilities.find((c) => c.id === 'powerBi.tenant')).toMatchObject({ status: 'granted' });
    expect(report.missingPermissions.map((m) => m.permission)).not.toContain('Tenant.Read.All');
    expect(report.permissionList).toBe('quick');
    const step = setupSteps(integration, report).find((x) => x.title.startsWith('Power BI'))!;
    expect(step).toMatchObject({ state: 'done', observed: expect.stringMatching(/covers the app, which holds no Power BI permission/) });
  });

  it('collects every workspace with its reports, datasets and users, and every widely shared report, equal to the ground truth', async () => {
    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => e.stream.startsWith('powerBi'))).toEqual([]);
    expect(await collected(rt, integrationId)).toEqual(expected(truth()));
    const calls = powerBiCalls(w.emulator.control.requests());
    expect(calls.filter((c) => c === 'GET workspaces/modified')).toHaveLength(1);
    expect(calls.filter((c) => c === 'POST workspaces/getInfo')).toHaveLength(Math.ceil(WORKSPACES / 100));
    expect(calls.filter((c) => c.startsWith('GET workspaces/scanResult/'))).toHaveLength(Math.ceil(WORKSPACES / 100));
    expect(w.emulator.control.requests({ service: 'powerBi' }).filter((e) => e.status === 429)).toEqual([]);

    // Attributes: data sources resolved, guests counted, sharers named.
    const ws = await listEstateObjects<PowerBiWorkspaceAttrs>(rt.db, integrationId, 'powerBiWorkspaces');
    const model = w.tenant.powerBi!.workspaces;
    const sample = ws.find((o) => o.attrs.datasets.length > 0)!;
    const source = model.find((m) => m.id === sample.id)!;
    expect(sample.name).toBe(source.name);
    expect(sample.attrs.datasets.map((d) => d.datasourceTypes.length > 0)).toEqual(source.datasets.map((d) => d.datasourceIds.length > 0));
    expect(sample.attrs.users.map((u) => u.accessRight)).toEqual(source.users.map((u) => u.accessRight));
    const links = await listEstateObjects<PowerBiSharedLinkAttrs>(rt.db, integrationId, 'powerBiSharedLinks');
    expect(links.every((l) => l.attrs.sharer?.emailAddress && l.attrs.sharer.principalType === 'User')).toBe(true);
    expect(links.filter((l) => l.attrs.kind === 'publishedToWeb').every((l) => l.attrs.shareType === 'PublishToWeb')).toBe(true);
    // The same token (no roles) reads the activity events.
    const audit = await ingestAudit(rt, integrationId, { contentTypes: [], initialLookbackHours: 2 });
    expect(audit.contentTypes[POWER_BI_SOURCE]).toMatchObject({ status: 'ok' });
  });

  it('a second unchanged round asks only which workspaces changed, scans nothing and stores no workspace', async () => {
    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integrationId);
    expect(run.streams.powerBiWorkspaces).toMatchObject({ records: 0, erroredSlices: 0, incrementalSlices: 1 });
    const calls = powerBiCalls(w.emulator.control.requests());
    expect(calls.filter((c) => !c.startsWith('GET widelySharedArtifacts/') && !c.endsWith('/v1/admin/tenantsettings'))).toEqual(['GET workspaces/modified']);
    expect(calls.filter((c) => c.startsWith('GET widelySharedArtifacts/')).length).toBeGreaterThanOrEqual(2);
    const modified = w.emulator.control.requests({ service: 'powerBi' }).find((e) => e.path.includes('workspaces/modified'))!;
    expect(modified.path).toMatch(/modifiedSince=/);
    expect(await collected(rt, integrationId)).toEqual(expected(truth()));
  });

  it('after changes only the modified workspaces are rescanned; a deleted workspace is marked deleted', async () => {
    const live = w.tenant.powerBi!.workspaces.filter((x) => x.type === 'Workspace' && x.state === 'Active');
    const [a, b, c] = [live[0]!, live[1]!, live[2]!];
    w.emulator.control.changePowerBiWorkspace(w.tenant.id, a.id, { kind: 'addReport', name: 'Board pack', publishToWeb: true });
    w.emulator.control.changePowerBiWorkspace(w.tenant.id, b.id, { kind: 'shareExternally', email: 'auditor@partner.example' });
    w.emulator.control.changePowerBiWorkspace(w.tenant.id, c.id, { kind: 'delete' });
    const before = truth();
    expect(before.deletedWorkspaces).toBe(1);

    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => e.stream.startsWith('powerBi'))).toEqual([]);
    // One batch holding the three changed workspaces; two stored, one removed.
    expect(powerBiCalls(w.emulator.control.requests()).filter((x) => x === 'POST workspaces/getInfo')).toHaveLength(1);
    expect(run.streams.powerBiWorkspaces).toMatchObject({ records: 2, incrementalSlices: 1 });
    expect(run.markedDeleted).toBeGreaterThanOrEqual(1);
    expect(await collected(rt, integrationId)).toEqual(expected(before));
    const ws = await listEstateObjects<PowerBiWorkspaceAttrs>(rt.db, integrationId, 'powerBiWorkspaces');
    expect(ws.find((o) => o.id === c.id)).toBeUndefined();
    expect(ws.find((o) => o.id === a.id)!.attrs.reports.map((r) => r.name)).toContain('Board pack');
    expect(ws.find((o) => o.id === b.id)!.attrs.users.some((u) => u.emailAddress === 'auditor@partner.example' && u.userType === 'Guest')).toBe(true);
    const deleted = await rt.db
      .selectFrom('estate_objects')
      .select(['deleted_at'])
      .where('integration_id', '=', integrationId)
      .where('stream', '=', 'powerBiWorkspaces')
      .where('id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(deleted.deleted_at).not.toBeNull();
  });

  it('a failed scan records the round as errored (not collected); the next round picks the change up', async () => {
    const target = w.tenant.powerBi!.workspaces.find((x) => x.type === 'Workspace' && x.state === 'Active')!;
    w.emulator.control.changePowerBiWorkspace(w.tenant.id, target.id, { kind: 'rename', name: 'Renamed finance' });
    w.tenant.powerBi!.failScans = 1;
    const failed = await collectIntegration(rt, integrationId);
    expect(failed.errors.filter((e) => e.stream === 'powerBiWorkspaces')).toEqual([expect.objectContaining({ code: 'POWER_BI_SCAN_FAILED' })]);
    const stale = await listEstateObjects(rt.db, integrationId, 'powerBiWorkspaces');
    expect(stale.find((o) => o.id === target.id)!.name).not.toBe('Renamed finance');
    const next = await collectIntegration(rt, integrationId);
    expect(next.errors.filter((e) => e.stream.startsWith('powerBi'))).toEqual([]);
    expect((await listEstateObjects(rt.db, integrationId, 'powerBiWorkspaces')).find((o) => o.id === target.id)!.name).toBe('Renamed finance');
    expect(await collected(rt, integrationId)).toEqual(expected(truth()));
  });

  it('a previous round older than the 30 days modifiedSince accepts starts a full round', async () => {
    const last = await latestFinishedRun(rt.db, integrationId);
    const ctx = streamContext(rt, credentialsFor(rt, await getIntegration(rt.db, integrationId)));
    await saveDeltaLink(
      rt.db,
      integrationId,
      'powerBiWorkspaces',
      '*',
      modifiedUrl(ctx, new Date(Date.now() - 31 * 86_400_000).toISOString()),
      last!.id,
      new Date().toISOString(),
    );
    w.emulator.control.resetLog();
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => e.stream.startsWith('powerBi'))).toEqual([]);
    expect(run.streams.powerBiWorkspaces.incrementalSlices).toBeUndefined();
    expect(run.streams.powerBiWorkspaces.records).toBe(truth().workspaces);
    const modified = w.emulator.control.requests({ service: 'powerBi' }).filter((e) => e.path.includes('workspaces/modified'));
    expect(modified.map((e) => /modifiedSince/.test(e.path))).toEqual([false]);
    expect(await collected(rt, integrationId)).toEqual(expected(truth()));
  });

  it('a run stopped after the first scanned batch resumes with the remaining batches and ends with the same counts', async () => {
    const fresh = await w.runtime();
    const { integration } = await addCustomerAppIntegration(fresh, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const stop = new AbortController();
    await expect(
      collectIntegration(fresh, integration.id, {
        signal: stop.signal,
        afterPage: (stream) => {
          if (stream === 'powerBiWorkspaces') stop.abort(new Error('killed mid-scan'));
        },
      }),
    ).rejects.toMatchObject({ code: 'COLLECTION_ABORTED' });
    const partial = await listEstateObjects(fresh.db, integration.id, 'powerBiWorkspaces');
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(truth().workspaces);

    w.emulator.control.resetLog();
    const resumed = await collectIntegration(fresh, integration.id);
    expect(resumed.resumed).toBe(true);
    expect(resumed.errors.filter((e) => e.stream.startsWith('powerBi'))).toEqual([]);
    // The batch stored before the stop is not scanned again.
    expect(powerBiCalls(w.emulator.control.requests()).filter((x) => x === 'POST workspaces/getInfo')).toHaveLength(Math.ceil(truth().workspaces / 100) - 1);
    expect(resumed.streams.powerBiWorkspaces.records).toBe(truth().workspaces);
    expect(await collected(fresh, integration.id)).toEqual(expected(truth()));
  });

  it('PowerBINotAuthorizedException: both streams are recorded as not collected, naming the tenant setting to enable', async () => {
    w.emulator.control.setPowerBiAdminApiAccess(w.tenant.id, false);
    try {
      const fresh = await w.runtime();
      const { integration } = await addCustomerAppIntegration(fresh, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
      const run = await collectIntegration(fresh, integration.id);
      for (const stream of ['powerBiWorkspaces', 'powerBiSharedLinks']) {
        const error = run.errors.find((e) => e.stream === stream);
        expect(error, stream).toMatchObject({
          code: 'POWER_BI_NOT_AUTHORIZED',
          message: expect.stringMatching(/Not collected.*"Service principals can access read-only admin APIs"/),
        });
      }
      expect(await listEstateObjects(fresh.db, integration.id, 'powerBiWorkspaces')).toEqual([]);
      // The rest of the collection went on.
      expect(run.streams.users.records).toBe(w.truth.users);
    } finally {
      w.emulator.control.setPowerBiAdminApiAccess(w.tenant.id, true);
    }
  });

  it('never has more than 16 scans in flight, and waits out throttled (429 Retry-After) scanner calls', async () => {
    const ctx = streamContext(rt, credentialsFor(rt, await getIntegration(rt.db, integrationId)));
    const ids = w.tenant.powerBi!.workspaces.filter((x) => x.state === 'Active').map((x) => x.id);
    w.emulator.control.resetLog();
    w.emulator.control.setFaults({ rate: 0.25, kinds: ['429'], services: ['powerBi'], match: '/workspaces/', seed: 'pbi-throttle' });
    try {
      const batches = Array.from({ length: MAX_SCANS_IN_FLIGHT + 6 }, (_, i) => [ids[i]!]);
      const results = await Promise.all(batches.map((b) => scanWorkspaces(ctx, b, { firstPollMs: 50 })));
      expect(results.map((r) => (r.result.workspaces as { id: string }[]).map((x) => x.id))).toEqual(batches);
      expect(w.emulator.control.faults().counters.byService.powerBi ?? 0).toBeGreaterThan(0);
    } finally {
      w.emulator.control.clearFaults();
    }
    // Vigil's scans in flight, from the emulator's log in order: one more at each scan started (getInfo answered 202),
    // one less at each result read. (The emulator's own 16-scan limit may also count scans an earlier test left.)
    let inFlight = 0;
    let most = 0;
    for (const e of w.emulator.control.requests({ service: 'powerBi' }).sort((a, b) => a.seq - b.seq)) {
      if (e.path.includes('/workspaces/getInfo') && e.status === 202) most = Math.max(most, ++inFlight);
      if (e.path.includes('/workspaces/scanResult/') && e.status === 200) inFlight--;
    }
    // Never over the limit; and the scans did overlap (a one-at-a-time scanner would pass the bound alone). Exactly 16
    // at once is not guaranteed: a scan delayed by a 429 may start after another finished (15 seen under CI's load).
    expect(most).toBeLessThanOrEqual(MAX_SCANS_IN_FLIGHT);
    expect(most).toBeGreaterThan(MAX_SCANS_IN_FLIGHT / 2);
    expect(inFlight).toBe(0);
  });
});

describe('Power BI with Tenant.Read.All admin-consented, as the seed lists', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({
      seed: 'pbi-seed-grant',
      permissions: 'quick',
      sizes: { users: 8, guests: 1, groups: 2, environments: 1, agents: 0, powerBiWorkspaces: 4 },
    });
  });
  afterAll(async () => w.close());

  it('refused as Microsoft documents: both streams and the activity events are not collected, naming Tenant.Read.All to remove; the doctor says so', async () => {
    const rt = await w.runtime();
    const { integration, report } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    expect(report.grantedRoles.powerBi).toEqual(['Tenant.Read.All']);
    expect(report.powerBi).toMatchObject({ access: 'refused', consentedPermissions: ['Tenant.Read.All'] });
    expect(report.powerBi!.fix).toMatch(/^Remove Tenant\.Read\.All from the app .*"Service principals can access read-only admin APIs": Enabled/);
    const step = setupSteps(integration, report).find((x) => x.title.startsWith('Power BI'))!;
    expect(step).toMatchObject({
      state: 'missing',
      observed: expect.stringMatching(/must not have any admin-consent-required Power BI permissions/),
      fix: expect.stringMatching(/Remove Tenant\.Read\.All/),
    });

    const run = await collectIntegration(rt, integration.id);
    for (const stream of ['powerBiWorkspaces', 'powerBiSharedLinks']) {
      expect(
        run.errors.find((e) => e.stream === stream),
        stream,
      ).toMatchObject({
        code: 'POWER_BI_NOT_AUTHORIZED',
        message: expect.stringMatching(
          /^Not collected: .*holds the admin-consented Power BI Service application permission Tenant\.Read\.All.*Fix: Remove Tenant\.Read\.All/,
        ),
      });
    }
    // Called, not skipped on the roles claim: the refusal is Power BI's answer.
    expect(w.emulator.control.requests({ service: 'powerBi' }).some((e) => e.status === 401)).toBe(true);
    expect(run.streams.users.records).toBe(w.truth.users);
    const audit = await ingestAudit(rt, integration.id, { contentTypes: [], initialLookbackHours: 2 });
    expect(audit.contentTypes[POWER_BI_SOURCE]).toMatchObject({ status: 'unavailable', stored: 0, reason: expect.stringMatching(/Tenant\.Read\.All/) });
  });

  it('where Power BI serves such an app anyway, it is collected; the doctor still advises removing the permission', async () => {
    w.emulator.control.setPowerBiSettings(w.tenant.id, { rejectServicePrincipalsWithPowerBiRoles: false });
    try {
      const rt = await w.runtime();
      const { integration, report } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
      expect(report.powerBi).toMatchObject({
        access: 'granted',
        consentedPermissions: ['Tenant.Read.All'],
        fix: expect.stringMatching(/remove Tenant\.Read\.All/),
      });
      expect(setupSteps(integration, report).find((x) => x.title.startsWith('Power BI'))).toMatchObject({ state: 'incomplete' });
      const run = await collectIntegration(rt, integration.id);
      expect(run.errors.filter((e) => e.stream.startsWith('powerBi'))).toEqual([]);
      expect((await listEstateObjects(rt.db, integration.id, 'powerBiWorkspaces')).length).toBe(powerBiInventoryGroundTruth(w.tenant).workspaces);
    } finally {
      w.emulator.control.setPowerBiSettings(w.tenant.id, { rejectServicePrincipalsWithPowerBiRoles: true });
    }
  });
});
