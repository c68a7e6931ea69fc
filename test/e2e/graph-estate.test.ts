import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphEstateGroundTruth, groundTruth } from '../../emulator/index.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { countLive } from '../../src/store/repositories/inventory.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { world, type World } from './harness.ts';

/**
 * Graph estate end to end: memberships by group delta (`members@delta`), external connections, and Teams apps per
 * user through `$batch`, compared with the emulator's ground truth after a first and a changed second round.
 */
describe('Graph estate collection', () => {
  let w: World;
  let rt: Runtime;
  let integrationId: string;
  const sizes = { users: 70, guests: 5, groups: 9, environments: 1, agents: 0, externalConnections: 4, teamsAppsPerUser: 2, teamsAppCatalog: 14 };
  const env = { VIGIL_GRAPH_PAGE_SIZE: '4' };

  const expected = () => {
    const truth = groundTruth(w.tenant);
    const estate = graphEstateGroundTruth(w.tenant);
    return { memberships: truth.memberships, externalConnections: estate.externalConnections, teamsApps: estate.teamsAppInstallations };
  };
  const stored = async () => {
    const c = await countLive(rt.db, integrationId, STREAM_RUN_ORDER);
    return { memberships: c.memberships, externalConnections: c.externalConnections, teamsApps: c.teamsApps };
  };
  const graphRequests = (pattern: RegExp) => w.emulator.control.requests({ service: 'graph' }).filter((r) => pattern.test(r.path)).length;

  beforeAll(async () => {
    w = await world({ seed: 'graph-estate', sizes });
    rt = await w.runtime(undefined, env);
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  });
  afterAll(async () => w.close());

  it('stores exactly the ground truth of memberships, external connections and installed Teams apps', async () => {
    const run = await collectIntegration(rt, integrationId);
    expect(run.errors.filter((e) => ['memberships', 'externalConnections', 'teamsApps'].includes(e.stream))).toEqual([]);
    expect(await stored()).toEqual(expected());
    // 20 users per $batch slice.
    expect(run.streams.teamsApps.slices).toBe(Math.ceil(w.tenant.users.length / 20));
    const kinds = await rt.db.selectFrom('group_memberships').select('member_type').where('deleted_at', 'is', null).execute();
    expect(new Set(kinds.map((k) => k.member_type))).toEqual(
      new Set(
        Object.entries(groundTruth(w.tenant).membershipsByKind)
          .filter(([, n]) => n > 0)
          .map(([k]) => k),
      ),
    );
    const apps = await rt.db.selectFrom('estate_objects').select(['attrs', 'slice_key']).where('stream', '=', 'teamsApps').execute();
    const methods = new Set(apps.map((a) => (JSON.parse(a.attrs) as { distributionMethod: string }).distributionMethod));
    expect(methods).toEqual(new Set(['store', 'organization', 'sideloaded']));
  });

  it('a second unchanged round reads memberships in one request', async () => {
    const before = { groups: graphRequests(/\/groups\/delta/), users: graphRequests(/\/users\/delta/), members: graphRequests(/\/members/) };
    const batches = graphRequests(/\/\$batch/);
    const run = await collectIntegration(rt, integrationId);
    expect(run.streams.memberships).toMatchObject({ records: 0, incrementalSlices: 1 });
    // Teams app installations (a $batch per 20 users, no incremental read) are reused within their refresh interval.
    expect(run.streams.teamsApps.reusedFrom).toBeTruthy();
    expect(graphRequests(/\/\$batch/) - batches).toBe(0);
    // groups stream + memberships stream: one request each; no per-group member reads.
    expect(graphRequests(/\/groups\/delta/) - before.groups).toBe(2);
    expect(graphRequests(/\/users\/delta/) - before.users).toBe(1);
    expect(graphRequests(/\/members/) - before.members).toBe(0);
    expect(await stored()).toEqual(expected());
  });

  it('a changed second round equals the new ground truth and marks what went away', async () => {
    const ctl = w.emulator.control;
    const t = w.tenant;
    const [g1, g2, g3] = [t.groups[1]!, t.groups[2]!, t.groups[3]!];
    const newcomer = t.users.find((u) => !t.memberships[g1.id]!.includes(u.id))!;
    ctl.add(t.id, 'memberships', { groupId: g1.id, memberId: newcomer.id });
    const leaving = t.memberships[g2.id]!.find((id) => t.users.some((u) => u.id === id))!;
    ctl.remove(t.id, 'memberships', { groupId: g2.id, memberId: leaving });
    const g3Members = t.memberships[g3.id]!.length;
    ctl.remove(t.id, 'groups', g3.id);

    const estate = t.graphEstate!;
    const installer = t.users.find((u) => (estate.installedApps[u.id] ?? []).length < estate.teamsApps.length)!;
    const newApp = estate.teamsApps.find((a) => !(estate.installedApps[installer.id] ?? []).includes(a.id))!;
    (estate.installedApps[installer.id] ??= []).push(newApp.id);
    const uninstaller = t.users.find((u) => u.id !== installer.id && (estate.installedApps[u.id] ?? []).length > 0)!;
    const uninstalled = estate.installedApps[uninstaller.id]!.shift()!;
    const removedConnection = estate.externalConnections.shift()!;

    // A plain run: memberships by delta (the added member, the removed one, the deleted group's members as ids).
    const run = await collectIntegration(rt, integrationId);
    expect(run.streams.memberships.incrementalSlices).toBe(1);
    expect(g3Members).toBeGreaterThan(0);
    const membership = (g: string, m: string) =>
      rt.db.selectFrom('group_memberships').select('deleted_at').where('group_id', '=', g).where('member_id', '=', m).executeTakeFirstOrThrow();
    const checkMemberships = async () => {
      expect((await membership(g1.id, newcomer.id)).deleted_at).toBeNull();
      expect((await membership(g2.id, leaving)).deleted_at).not.toBeNull();
      const g3Rows = await rt.db.selectFrom('group_memberships').select('deleted_at').where('group_id', '=', g3.id).execute();
      expect(g3Rows.length).toBeGreaterThan(0);
      expect(g3Rows.every((r) => r.deleted_at !== null)).toBe(true);
    };
    await checkMemberships();

    // A full run reads Teams apps although their refresh interval has not passed, and memberships from the start.
    const full = await collectIntegration(rt, integrationId, { full: true });
    expect(full.streams.memberships.incrementalSlices ?? 0).toBe(0);
    expect(await stored()).toEqual(expected());
    await checkMemberships();
    const estateRow = (stream: string, id: string) =>
      rt.db.selectFrom('estate_objects').select('deleted_at').where('stream', '=', stream).where('id', '=', id).executeTakeFirstOrThrow();
    expect((await estateRow('externalConnections', removedConnection.id)).deleted_at).not.toBeNull();
    const installId = (userId: string, appId: string) => `${userId}/${Buffer.from(`${userId}##${appId}`).toString('base64')}`;
    expect((await estateRow('teamsApps', installId(uninstaller.id, uninstalled))).deleted_at).not.toBeNull();
    expect((await estateRow('teamsApps', installId(installer.id, newApp.id))).deleted_at).toBeNull();
  });

  it('with inner 429s inside $batch, every installation is still collected', async () => {
    const fresh = await w.runtime(undefined, env);
    const { integration } = await addCustomerAppIntegration(fresh, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    w.emulator.control.faults(); // counters start from here
    const before = w.emulator.control.faults().counters.total;
    w.emulator.control.setFaults({
      rate: 0.3,
      kinds: ['429', '429-fractional'],
      seed: 11,
      services: ['graph'],
      match: '/installedApps',
      maxRetryAfterSeconds: 0.3,
    });
    try {
      const run = await collectIntegration(fresh, integration.id);
      expect(run.errors.filter((e) => e.stream === 'teamsApps')).toEqual([]);
      expect(w.emulator.control.faults().counters.total - before).toBeGreaterThan(5);
      expect((await countLive(fresh.db, integration.id, STREAM_RUN_ORDER)).teamsApps).toBe(graphEstateGroundTruth(w.tenant).teamsAppInstallations);
    } finally {
      w.emulator.control.clearFaults();
    }
  });
});
