import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groundTruth } from '../../emulator/index.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import * as m0011 from '../../src/store/migrations/0011_slice_read_mode.ts';
import { STREAM_RUN_ORDER, type StreamName } from '../../src/sources/index.ts';
import { countLive } from '../../src/store/repositories/inventory.ts';
import { findRunningRun, listCheckpoints } from '../../src/store/repositories/runs.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { DIALECTS, freshStore, type TestStore } from '../store/dialects.ts';
import { world, type World } from './harness.ts';

/**
 * Issue 14, point 3: a collection stopped after a delta round checkpointed done, then resumed, used to mark every user,
 * group and membership it did not see in that round — the whole directory — deleted, and later runs (and `--full`)
 * kept them so. Each case stops a run at an exact page (the engine's abort signal, raised from `afterPage`: the
 * page's transaction committed, the process state is lost, exactly what a SIGKILL there leaves), then resumes it.
 */
describe.each(DIALECTS)('a collection stopped after a checkpoint and resumed (%s)', (dialect) => {
  let w: World;
  let store: TestStore;
  let rt: Runtime;
  let integrationId: string;

  beforeAll(async () => {
    w = await world({ seed: `delta-resume-${dialect}`, sizes: { users: 18, guests: 2, groups: 4, environments: 1, agents: 0, powerBiWorkspaces: 3 } });
    store = await freshStore(dialect);
    // Five users a Graph page: the users round spans several pages, so a stop can land inside it.
    rt = await w.runtime(store.dataDir, { ...store.env, VIGIL_GRAPH_PAGE_SIZE: '5' });
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
    await collectIntegration(rt, integrationId);
  });
  afterAll(async () => {
    await w.close();
    await store.drop();
  });

  /** Runs a collection that stops right after the `nth` stored page of `stream`; returns the unfinished run's checkpoints. */
  const stoppedAfter = async (stream: StreamName, nth: number, full = false) => {
    const stop = new AbortController();
    let pages = 0;
    const afterPage = (s: StreamName) => {
      if (s === stream && ++pages === nth) stop.abort(new Error('killed'));
    };
    // One stream at a time: the stop lands at a known point of the run (streams of different services otherwise overlap).
    await expect(collectIntegration(rt, integrationId, { signal: stop.signal, afterPage, full, streamsAtOnce: 1 })).rejects.toMatchObject({
      code: 'COLLECTION_ABORTED',
    });
    const run = await findRunningRun(rt.db, integrationId);
    expect(run, 'the run is left unfinished').toBeDefined();
    return { runId: run!.id, checkpoints: await listCheckpoints(rt.db, run!.id) };
  };

  const live = async () => {
    const c = await countLive(rt.db, integrationId, STREAM_RUN_ORDER);
    return { users: c.users, groups: c.groups, memberships: c.memberships, powerBiWorkspaces: c.powerBiWorkspaces };
  };
  const truth = () => {
    const t = groundTruth(w.tenant);
    return { users: t.users, groups: t.groups, memberships: t.memberships, powerBiWorkspaces: w.tenant.powerBi!.workspaces.length };
  };
  const deletedUsers = async () =>
    (
      await rt.db
        .selectFrom('directory_users')
        .select('id')
        .where('integration_id', '=', integrationId)
        .where('deleted_at', 'is not', null)
        .orderBy('id')
        .execute()
    ).map((r) => r.id);

  it('killed right after its delta round of users checkpointed done: the resumed run marks deleted only the leaver', async () => {
    const ctl = w.emulator.control;
    const members = w.tenant.users.filter((u) => u.userType === 'Member');
    const leaver = members.at(-1)!;
    ctl.remove(w.tenant.id, 'users', leaver.id);
    ctl.add(w.tenant.id, 'users', { userPrincipalName: `delta.hire.${dialect}@${w.tenant.domains[0]}`, displayName: 'Delta Hire' });

    // The delta round of users is one page (two changes): stopped right after it, its checkpoint says done by delta.
    const stopped = await stoppedAfter('users', 1);
    expect(stopped.checkpoints.map((c) => [c.stream, c.status, c.read_mode])).toEqual([['users', 'done', 'delta']]);

    const resumed = await collectIntegration(rt, integrationId);
    expect([resumed.resumed, resumed.runId]).toEqual([true, stopped.runId]);
    expect(resumed.streams.users.incrementalSlices).toBe(1);
    expect(await live()).toEqual(truth());
    expect(await deletedUsers()).toEqual([leaver.id]);
  });

  it('the delta state lost upstream (410) mid-run: the slice becomes a full round at once, and a stop inside it resumes in full', async () => {
    w.emulator.control.expireDeltaTokens(w.tenant.id);
    // The users round answers 410, is read again from the start in full; stopped after its second page.
    const stopped = await stoppedAfter('users', 2);
    const users = stopped.checkpoints.find((c) => c.stream === 'users')!;
    expect([users.status, users.read_mode, users.cursor === null]).toEqual(['in_progress', 'full', false]);
    expect(
      await rt.db.selectFrom('stream_states').select('stream').where('integration_id', '=', integrationId).where('stream', '=', 'users').execute(),
    ).toEqual([]);

    const resumed = await collectIntegration(rt, integrationId);
    expect(resumed.runId).toBe(stopped.runId);
    expect(resumed.streams.users.incrementalSlices ?? 0).toBe(0);
    expect(await live()).toEqual(truth());
    // The full round's end stored the next delta link, from the resumed run.
    const link = await rt.db
      .selectFrom('stream_states')
      .select('run_id')
      .where('integration_id', '=', integrationId)
      .where('stream', '=', 'users')
      .executeTakeFirst();
    expect(link?.run_id).toBe(stopped.runId);
  });

  it('`full` brings back rows an earlier version wrongly marked deleted, a resumed run included, and reads everything from the start', async () => {
    // What an interrupted run of an earlier version left: the directory and the Power BI estate marked deleted.
    const at = new Date().toISOString();
    for (const table of ['directory_users', 'directory_groups', 'group_memberships'] as const)
      await rt.db.updateTable(table).set({ deleted_at: at }).where('integration_id', '=', integrationId).execute();
    await rt.db
      .updateTable('estate_objects')
      .set({ deleted_at: at })
      .where('integration_id', '=', integrationId)
      .where('stream', '=', 'powerBiWorkspaces')
      .execute();
    expect(await live()).toEqual({ users: 0, groups: 0, memberships: 0, powerBiWorkspaces: 0 });

    // A plain run reads by delta: nothing changed upstream, nothing comes back. Stop it after that round of users.
    const stopped = await stoppedAfter('users', 1);
    expect(stopped.checkpoints.map((c) => [c.stream, c.status, c.read_mode])).toEqual([['users', 'done', 'delta']]);
    expect((await live()).users).toBe(0);

    // Resumed with `full`: the users slice done by delta is read again in full, the rest in full from the start.
    const full = await collectIntegration(rt, integrationId, { full: true });
    expect([full.resumed, full.runId]).toEqual([true, stopped.runId]);
    for (const s of ['users', 'groups', 'memberships', 'powerBiWorkspaces'] as const) expect(full.streams[s].incrementalSlices ?? 0, s).toBe(0);
    expect(await live()).toEqual(truth());
    const modes = (await listCheckpoints(rt.db, stopped.runId))
      .filter((c) => ['users', 'groups', 'memberships', 'powerBiWorkspaces'].includes(c.stream))
      .map((c) => `${c.stream}:${c.read_mode}`);
    expect(modes.sort()).toEqual(['groups:full', 'memberships:full', 'powerBiWorkspaces:full', 'users:full']);

    // And a `full` run from scratch does the same, then the next plain run reads by delta again (a new link).
    await rt.db.updateTable('directory_users').set({ deleted_at: at }).where('integration_id', '=', integrationId).execute();
    const again = await collectIntegration(rt, integrationId, { full: true });
    expect(again.streams.users).toMatchObject({ records: truth().users });
    expect(await live()).toEqual(truth());
    const plain = await collectIntegration(rt, integrationId);
    expect(plain.streams.users).toMatchObject({ records: 0, incrementalSlices: 1 });
    expect(await live()).toEqual(truth());
  });

  it('upgrading to 0011 heals a database an earlier version damaged: the next plain collection is a full round', async () => {
    // The damage as an interrupted run of an earlier version left it: the directory marked deleted, delta links kept
    // (so every later delta round saw no change and left it so).
    const at = new Date().toISOString();
    for (const table of ['directory_users', 'directory_groups', 'group_memberships'] as const)
      await rt.db.updateTable(table).set({ deleted_at: at }).where('integration_id', '=', integrationId).execute();
    expect(await rt.db.selectFrom('stream_states').select('stream').where('integration_id', '=', integrationId).execute()).not.toEqual([]);
    await m0011.down(rt.db);
    await m0011.up(rt.db);
    expect(await rt.db.selectFrom('stream_states').select('stream').execute()).toEqual([]);

    const run = await collectIntegration(rt, integrationId);
    for (const s of ['users', 'groups', 'memberships'] as const) expect(run.streams[s].incrementalSlices ?? 0, s).toBe(0);
    expect(await live()).toEqual(truth());
  });
});
