import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { openStore } from '../../src/store/db.ts';
import { autoGrantAccess } from '../../src/onboarding/environments.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { world, type World } from '../e2e/harness.ts';
import { copyDataDir, dumpCollection, killAndResume, pool, random, report, suiteSeed } from './support.ts';

/**
 * Crash recovery of `vigil collect`, as the README promises it ("any SIGKILL, resumed, gives the same database as an
 * uninterrupted run"): the real CLI, against the emulator over HTTPS, kills itself (SIGKILL) right after a random
 * stored page, then the same command runs again until it completes; the database must then hold exactly what an
 * uninterrupted run stored — every inventory row with its deleted flag, every check result and finding.
 *
 * Twenty kills during a first collection, twenty during a delta run (a second collection after users, groups,
 * memberships and agents changed upstream: reads users, groups and memberships from their delta links). The points
 * are drawn from a seeded generator: the seed is printed, and VIGIL_RELIABILITY_SEED=<seed> replays them.
 */
describe('vigil collect killed by SIGKILL at random pages and resumed', () => {
  const seed = suiteSeed();
  const next = random(seed);
  const KILLS = 20;
  let w: World;
  let integrationId: string;
  /** A data directory with the integration added and nothing collected. */
  let fresh: string;
  /** A data directory after one complete collection: the delta runs start here. */
  let collected: string;
  // Small pages: a small tenant still stores ≈ 100 pages, each a point a kill can land on.
  const env = { VIGIL_GRAPH_PAGE_SIZE: '4', VIGIL_DATAVERSE_PAGE_SIZE: '4' };
  let cliEnv: Record<string, string>;

  const dump = async (dataDir: string) => {
    const db = await openStore({ dataDir, migrate: false });
    try {
      return await dumpCollection(db);
    } finally {
      await db.destroy();
    }
  };

  /** Collects once without interruption on `dataDir`, as `vigil collect` does; returns the pages stored and the dump. */
  const uninterrupted = async (dataDir: string) => {
    const rt = await w.runtime(dataDir, env);
    let pages = 0;
    try {
      await collectAndEvaluate(rt, integrationId, { afterPage: () => void pages++, grantAccess: autoGrantAccess(rt, rt.config.autoGrantAccess) });
      return { pages, reference: await dumpCollection(rt.db) };
    } finally {
      await rt.close();
    }
  };

  const scenario = async (name: string, template: string) => {
    const started = Date.now();
    const referenceDir = copyDataDir(template);
    const { pages, reference } = await uninterrupted(referenceDir);
    const points = Array.from({ length: KILLS }, () => 1 + Math.floor(next() * pages));
    const outcomes = await pool(
      points.map((page) => () => killAndResume({ template, args: ['collect', integrationId, '--json'], env: cliEnv, page, reference, dump })),
      2,
    );
    console.log(report(name, seed, outcomes, pages, Date.now() - started));
    return { outcomes, referenceDir };
  };

  beforeAll(async () => {
    w = await world({
      seed: 'reliability-collect',
      sizes: {
        users: 24,
        guests: 3,
        groups: 5,
        environments: 3,
        agents: 6,
        powerBiWorkspaces: 2,
        copilotUsersPercent: 20,
        copilotPairsPerUser: 2,
        apps: 3,
        flows: 3,
        connectors: 1,
        connections: 3,
        agentComponentsPerAgent: 2,
        azureSubscriptions: 1,
        foundryAccounts: 1,
        foundryProjects: 1,
        foundryDeployments: 1,
        externalConnections: 1,
        teamsAppsPerUser: 1,
        teamsAppCatalog: 4,
      },
    });
    fresh = join(mkdtempSync(join(tmpdir(), 'vigil-rel-template-')), 'data');
    const rt = await w.runtime(fresh, env);
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
    await rt.close();
    cliEnv = { ...env, VIGIL_ENDPOINTS_FILE: w.endpointsFile };
  });
  afterAll(async () => w.close());

  it(`${KILLS} kills during a first collection: every resumed database equals the uninterrupted one`, async () => {
    const { outcomes, referenceDir } = await scenario('first collection', fresh);
    collected = referenceDir;
    expect(outcomes.map((o) => o.killed)).toEqual(outcomes.map(() => true));
    expect(outcomes.filter((o) => o.difference.length > 0)).toEqual([]);
  }, 300_000);

  it(`${KILLS} kills during a delta run after the tenant changed: every resumed database equals the uninterrupted one`, async () => {
    expect(collected, 'the first scenario leaves the collected template').toBeDefined();
    // Changes a delta round carries: hires, a rename, a leaver (who also leaves its groups), a new group with a
    // member, a deleted group, a membership removed; and in Dataverse an agent changed and one deleted.
    const ctl = w.emulator.control;
    const t = w.tenant;
    const members = t.users.filter((u) => u.userType === 'Member').slice(1);
    // Hires enough for the users delta round to span pages (4 a page), so kills also land inside a delta round.
    for (let i = 0; i < 5; i++) ctl.add(t.id, 'users', { userPrincipalName: `reliability.hire${i}@${t.domains[0]}`, displayName: `Reliability Hire ${i}` });
    ctl.update(t.id, 'users', members[1]!.id, { displayName: 'Renamed Person' });
    ctl.remove(t.id, 'users', members[2]!.id);
    const group = ctl.add(t.id, 'groups', { displayName: 'Reliability Group' }) as { id: string };
    ctl.add(t.id, 'memberships', { groupId: group.id, memberId: members[3]!.id });
    ctl.remove(t.id, 'groups', t.groups.at(-1)!.id);
    const [groupId, ids] = Object.entries(t.memberships).find(([g, m]) => g !== group.id && m.length > 1)!;
    ctl.remove(t.id, 'memberships', { groupId, memberId: ids[0]! });
    const bots = t.environments.flatMap((e) => e.dataverse?.bots ?? []);
    ctl.update(t.id, 'bots', bots[0]!.botid, { authenticationmode: 1 });
    ctl.remove(t.id, 'bots', bots[1]!.botid);

    const { outcomes } = await scenario('delta run', collected);
    expect(outcomes.map((o) => o.killed)).toEqual(outcomes.map(() => true));
    expect(outcomes.filter((o) => o.difference.length > 0)).toEqual([]);
  }, 300_000);
});
