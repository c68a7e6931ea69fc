import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateIntegration } from '../../src/checks/evaluate.ts';
import { collectionJobHandler } from '../../src/sync/worker.ts';
import { addCustomerAppIntegration, verifyStoredIntegration } from '../../src/onboarding/integrations.ts';
import { getIntegration } from '../../src/integration/index.ts';
import { listCheckResults } from '../../src/store/repositories/findings.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { countLive } from '../../src/store/repositories/inventory.ts';
import { findRunningRun, listCheckpoints } from '../../src/store/repositories/runs.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { parseExposition, sampleSum, sampleValue } from '../support/metrics.ts';
import { DIALECTS, freshStore, type TestStore } from '../store/dialects.ts';
import { dumpDatabase, TEST_ENV, world, type World } from './harness.ts';
import { CLI } from '../support/process.ts';

/** Adds the integration, collects, evaluates; returns the runtime. */
async function collected(w: World, dataDir?: string, env?: Record<string, string>): Promise<{ rt: Runtime; integrationId: string }> {
  const rt = await w.runtime(dataDir, env);
  const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
  const run = await collectIntegration(rt, integration.id);
  expect(run.status).toBe('partial'); // one environment without an application user, by construction
  const metrics = parseExposition(await rt.metrics!.text());
  expect(sampleValue(metrics, 'vigil_collection_runs_total', { status: 'partial' })).toBe(1);
  expect(sampleValue(metrics, 'vigil_collection_runs_running')).toBe(0);
  expect(sampleValue(metrics, 'vigil_collection_run_duration_seconds_count')).toBe(1);
  expect(sampleValue(metrics, 'vigil_upstream_requests_total', { api: 'graph', status: '200' })).toBeGreaterThan(0);
  expect(sampleSum(metrics, 'vigil_upstream_requests_total')).toBe([...rt.http.stats.values()].reduce((n, s) => n + s.requests, 0));
  await evaluateIntegration(rt.db, await getIntegration(rt.db, integration.id), { now: new Date(w.tenant.referenceTime!) });
  // Every check ran to the end on what its metadata declares (an undeclared read fails the check).
  expect((await listCheckResults(rt.db, integration.id)).filter((r) => r.reason?.startsWith('Check failed'))).toEqual([]);
  return { rt, integrationId: integration.id };
}

function failures(results: { check_id: string; status: string; resource_type: string }[], checkId: string, status = 'fail', type = 'agent'): number {
  return results.filter((r) => r.check_id === checkId && r.status === status && r.resource_type === type).length;
}

describe.each([
  ['small', { users: 40, guests: 6, groups: 10, environments: 4, agents: 30 }, {}],
  ['paged', { users: 2300, guests: 150, groups: 60, environments: 5, agents: 180 }, { VIGIL_DATAVERSE_PAGE_SIZE: '25' }],
])('collection of a %s tenant', (_name, sizes, env) => {
  let w: World;
  const stores: TestStore[] = [];
  beforeAll(async () => {
    w = await world({ seed: `collect-${_name}`, sizes });
  });
  afterAll(async () => {
    await w.close();
    for (const s of stores) await s.drop();
  });

  it.each(DIALECTS)('stores exactly the generated ground truth and finds exactly its risky agents (%s)', async (dialect) => {
    const store = await freshStore(dialect);
    stores.push(store);
    const { rt, integrationId } = await collected(w, store.dataDir, { ...env, ...store.env });
    const counts = await countLive(rt.db, integrationId, STREAM_RUN_ORDER);
    expect(counts).toMatchObject({
      users: w.truth.users,
      groups: w.truth.groups,
      memberships: w.truth.memberships,
      environments: w.truth.environments,
      dataverseUsers: w.truth.systemusers,
      agents: w.truth.agents,
    });
    const results = await listCheckResults(rt.db, integrationId);
    expect(failures(results, 'agent_no_authentication')).toBe(w.truth.risks.noAuthentication);
    expect(failures(results, 'agent_public_without_authentication')).toBe(w.truth.risks.noAuthenticationAndAccessAny);
    expect(failures(results, 'agent_owner_disabled_or_missing')).toBe(w.truth.risks.ownerDisabled + w.truth.risks.ownerGone);
    expect(failures(results, 'agent_dormant')).toBe(w.truth.risks.dormant);
    expect(failures(results, 'environment_agents_not_readable', 'fail', 'environment')).toBe(w.truth.unreadableEnvironments);
    expect(failures(results, 'agent_no_authentication', 'not_evaluated', 'environment')).toBe(w.truth.unreadableEnvironments);
    const membershipKinds = await rt.db.selectFrom('group_memberships').select('member_type').where('deleted_at', 'is', null).execute();
    expect(new Set(membershipKinds.map((m) => m.member_type))).toEqual(
      new Set(
        Object.entries(w.truth.membershipsByKind)
          .filter(([, n]) => n > 0)
          .map(([k]) => k),
      ),
    );
  });
});

describe('collection reliability', () => {
  let w: World;
  let reference: Record<string, unknown[]>;
  const sizes = { users: 900, guests: 60, groups: 40, environments: 4, agents: 60 };
  const env = { VIGIL_GRAPH_PAGE_SIZE: '25', VIGIL_DATAVERSE_PAGE_SIZE: '10' };

  beforeAll(async () => {
    w = await world({ seed: 'reliability', sizes });
    const { rt } = await collected(w, undefined, env);
    reference = await dumpDatabase(rt.db);
  });
  afterAll(async () => w.close());

  // 429s block the shared budget of their service for every slice (issue 18), inner $batch ones included: this run
  // takes ≈ 51 s on a 2-core machine (44 s when only the throttled slice waited), near the default 60 s timeout.
  it('a run with 10% injected faults (429 with and without Retry-After, fractional, 503, resets, truncated bodies) stores the same database', async () => {
    w.emulator.control.setFaults({
      rate: 0.1,
      kinds: ['429', '429-fractional', '429-no-retry-after', '503', 'reset', 'truncate'],
      seed: 7,
      services: ['graph', 'bap', 'dataverse'],
    });
    try {
      // Smaller Graph pages: more requests for the faults to land on; page size does not change what is stored.
      const { rt } = await collected(w, undefined, { ...env, VIGIL_GRAPH_PAGE_SIZE: '8' });
      const injected = w.emulator.control.faults().counters;
      expect(injected.total).toBeGreaterThan(25);
      expect(Object.values(injected.byKind).every((n) => n > 0)).toBe(true);
      expect(await dumpDatabase(rt.db)).toEqual(reference);
    } finally {
      w.emulator.control.clearFaults();
    }
  }, 120_000);

  it('a run killed mid-way (SIGKILL) and resumed stores the same database as an uninterrupted one', async () => {
    const rt = await w.runtime(undefined, env);
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    // Slow the upstream a little so the kill lands mid-run: every Graph response waits on a fractional Retry-After.
    w.emulator.control.setFaults({ rate: 0.3, kinds: ['429-fractional'], seed: 3, services: ['graph'], maxRetryAfterSeconds: 0.05 });
    const child = spawn(process.execPath, [...CLI, '--data-dir', rt.config.dataDir, 'collect', integration.id, '--no-checks', '--json'], {
      env: { ...process.env, ...TEST_ENV, ...env, VIGIL_ENDPOINTS_FILE: w.endpointsFile },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    // Kill once the run has stored some pages of the membership delta round but has not finished it.
    for (;;) {
      const run = await findRunningRun(rt.db, integration.id);
      const cps = run ? await listCheckpoints(rt.db, run.id) : [];
      if (cps.some((c) => c.stream === 'memberships' && c.status === 'in_progress')) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill('SIGKILL');
    await exited;
    w.emulator.control.clearFaults();
    const interrupted = await findRunningRun(rt.db, integration.id);
    expect(interrupted, 'the run must still be unfinished when killed').toBeDefined();
    // Streams of different services run at once, so other streams are part-way too; the resumed run finishes each.

    const resumed = await collectIntegration(rt, integration.id);
    expect(resumed.resumed).toBe(true);
    expect(resumed.runId).toBe(interrupted!.id);
    expect(resumed.streams.users.records).toBe(w.truth.users); // counted once across both processes
    await evaluateIntegration(rt.db, await getIntegration(rt.db, integration.id), { now: new Date(w.tenant.referenceTime!) });
    expect(await dumpDatabase(rt.db)).toEqual(reference);
  });

  it('a second run marks deleted objects, keeps history, and resolves findings whose agent was fixed', async () => {
    const { rt, integrationId } = await collected(w, undefined, env);
    const ctl = w.emulator.control;
    const user = w.tenant.users.find((u) => u.userType === 'Member')!;
    const env2 = w.tenant.environments.find(
      (e) => e.dataverse?.bots.some((b) => b.authenticationmode === 1) && e.dataverse.appUsers.some((a) => a.appId === w.app.appId),
    )!;
    const bot = env2.dataverse!.bots.find((b) => b.authenticationmode === 1)!;
    ctl.remove(w.tenant.id, 'users', user.id);
    ctl.update(w.tenant.id, 'bots', bot.botid, { authenticationmode: 2 });
    const run = await collectIntegration(rt, integrationId);
    expect(run.markedDeleted).toBeGreaterThanOrEqual(1);
    await evaluateIntegration(rt.db, await getIntegration(rt.db, integrationId), { now: new Date(w.tenant.referenceTime!) });
    const row = await rt.db.selectFrom('directory_users').select(['deleted_at']).where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
    const finding = await rt.db
      .selectFrom('findings')
      .selectAll()
      .where('check_id', '=', 'agent_no_authentication')
      .where('resource_id', '=', bot.botid)
      .executeTakeFirstOrThrow();
    expect(finding.status).toBe('resolved');
  });

  it('later collections read users and groups as delta rounds: only changes travel, removals arrive, a lost state reads everything again', async () => {
    const { rt, integrationId } = await collected(w, undefined, env);
    const ctl = w.emulator.control;
    const liveUsers = async () => (await countLive(rt.db, integrationId, STREAM_RUN_ORDER)).users;
    const deltaRequests = () => ctl.requests({ service: 'graph' }).filter((r) => /\/(users|groups)\/delta/.test(r.path)).length;
    const usersBefore = await liveUsers();

    // Unchanged: one page per stream, nothing stored, nothing marked deleted.
    let before = deltaRequests();
    const quiet = await collectIntegration(rt, integrationId);
    expect(quiet.streams.users).toMatchObject({ records: 0, incrementalSlices: 1 });
    expect(quiet.streams.groups).toMatchObject({ records: 0, incrementalSlices: 1 });
    expect(quiet.streams.memberships).toMatchObject({ records: 0, incrementalSlices: 1 });
    // users, groups, and groups again with members@delta for the memberships: one request each.
    expect(deltaRequests() - before).toBe(3);
    expect(await liveUsers()).toBe(usersBefore);

    // A hire, a rename and a leaver: exactly those travel; the leaver is marked deleted, history kept.
    const hire = ctl.add(w.tenant.id, 'users', { userPrincipalName: `delta.hire@${w.tenant.domains[0]}`, displayName: 'Delta Hire' }) as { id: string };
    const renamed = w.tenant.users.find((u) => u.userType === 'Member' && u.id !== hire.id)!;
    ctl.update(w.tenant.id, 'users', renamed.id, { displayName: 'Renamed Person' });
    const leaver = w.tenant.users.find((u) => u.userType === 'Member' && u.id !== hire.id && u.id !== renamed.id)!;
    ctl.remove(w.tenant.id, 'users', leaver.id);
    const changed = await collectIntegration(rt, integrationId);
    expect(changed.streams.users).toMatchObject({ records: 2, incrementalSlices: 1 });
    expect(await liveUsers()).toBe(usersBefore);
    const rows = await rt.db
      .selectFrom('directory_users')
      .select(['id', 'display_name', 'deleted_at'])
      .where('id', 'in', [hire.id, renamed.id, leaver.id])
      .execute();
    expect(Object.fromEntries(rows.map((r) => [r.id, [r.display_name, r.deleted_at !== null]]))).toEqual({
      [hire.id]: ['Delta Hire', false],
      [renamed.id]: ['Renamed Person', false],
      [leaver.id]: [expect.any(String), true],
    });

    // The upstream forgets the sync state (410 syncStateNotFound): the same run reads everything and still agrees.
    ctl.expireDeltaTokens(w.tenant.id);
    before = deltaRequests();
    const full = await collectIntegration(rt, integrationId);
    expect(full.status).not.toBe('failed');
    expect(full.streams.users.incrementalSlices ?? 0).toBe(0);
    expect(full.streams.users.records).toBe(usersBefore);
    expect(await liveUsers()).toBe(usersBefore);
    expect(deltaRequests() - before).toBeGreaterThan(3);
  });

  it('a retried job whose first attempt finished the collection does not collect again; a new job does', async () => {
    const rt = await w.runtime(undefined, env);
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const handler = collectionJobHandler({ ...rt, audit: { enabled: false } });
    const runCount = async () => (await rt.db.selectFrom('collection_runs').select('id').where('integration_id', '=', integration.id).execute()).length;
    const job = {
      id: 'job-1',
      integrationId: integration.id,
      enqueuedAt: new Date().toISOString(),
      signal: new AbortController().signal,
      progress: () => undefined,
    };
    await handler(job);
    await handler(job); // pg-boss hands the job out again after its expiry
    expect(await runCount()).toBe(1);
    await handler({ ...job, id: 'job-2', enqueuedAt: new Date().toISOString() });
    expect(await runCount()).toBe(2);
  });

  it('never stores or logs the client secret in plain text', async () => {
    const { rt, integrationId } = await collected(w, undefined, env);
    await verifyStoredIntegration(rt, integrationId);
    await rt.close();
    const dir = rt.config.dataDir;
    const files = [...readdirSync(dir).map((f) => join(dir, f)), ...readdirSync(join(dir, 'logs')).map((f) => join(dir, 'logs', f))].filter(
      (f) => !f.endsWith('logs'),
    );
    expect(files.some((f) => f.endsWith('vigil.db'))).toBe(true);
    expect(files.some((f) => f.endsWith('vigil.log'))).toBe(true);
    const logs = readFileSync(join(dir, 'logs', 'vigil.log'), 'utf8');
    expect(logs).toContain('collection run finished'); // the log is really written
    for (const f of files) expect(readFileSync(f).includes(Buffer.from(w.secret)), f).toBe(false);
  });
});
