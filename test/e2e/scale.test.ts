import { afterAll, describe, expect, it } from 'vitest';
import { generateTenant, groundTruth, startEmulator, type RunningEmulator } from '../../emulator/index.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { countLive } from '../../src/store/repositories/inventory.ts';
import { freshStore, type TestStore } from '../store/dialects.ts';
import { TEST_ENV } from './harness.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVigil, until } from '../support/process.ts';

describe('serve + two workers on PostgreSQL', () => {
  let emulator: RunningEmulator;
  let store: TestStore;
  let rt: Runtime;
  const procs: ReturnType<typeof startVigil>[] = [];
  afterAll(async () => {
    for (const p of procs) p.child.kill('SIGKILL');
    await rt?.close();
    await emulator?.close();
    await store?.drop();
  });

  it('collects five tenants exactly once each, and a worker killed mid-collection has its job finished by the other', async () => {
    // The job semantics are under test, not the estate: the tenants carry directory, environments and agents only.
    const lean = {
      apps: 0,
      flows: 0,
      connectors: 0,
      connections: 0,
      powerBiWorkspaces: 0,
      copilotUsersPercent: 0,
      teamsAppsPerUser: 0,
      externalConnections: 0,
      foundryAccounts: 0,
      azureSubscriptions: 0,
      agentComponentsPerAgent: 0,
    };
    const tenants = [1, 2, 3, 4, 5].map((i) =>
      generateTenant({ seed: `scale-${i}`, sizes: { users: 200 + 40 * i, guests: 10, groups: 12, environments: 3, agents: 20, ...lean } }),
    );
    emulator = await startEmulator({ tenants });
    const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')));
    store = await freshStore('postgres');
    const env = {
      ...TEST_ENV,
      ...store.env,
      VIGIL_ENDPOINTS_FILE: endpointsFile,
      VIGIL_GRAPH_PAGE_SIZE: '10',
      VIGIL_MASTER_KEY: 'ab'.repeat(32),
      VIGIL_PORT: '0',
      VIGIL_WORKER_CONCURRENCY: '2',
      VIGIL_JOB_EXPIRE_SECONDS: '30',
      VIGIL_JOB_MAINTENANCE_SECONDS: '1',
      VIGIL_JOB_RETRY_DELAY_SECONDS: '1',
      VIGIL_SCHEDULER_TICK_SECONDS: '1',
      // Jobs expire 30 s after their last progress here (the killed worker's job moves on ≈ 32.5 s after its last page;
      // 10 s was cut short under the full suite's load: a sixth run appeared in one fresh-clone CI run;
      // a live worker's collection, storing pages, is never cut however long it takes): collection only, no audit cycle.
      VIGIL_AUDIT_IN_JOBS: 'false',
    };
    rt = await createRuntime({ dataDir: store.dataDir, cloud: loadCustomProfile(endpointsFile), env });
    const ids = new Map<string, (typeof tenants)[number]>();
    for (const t of tenants) {
      const app = t.apps.find((a) => a.appId === t.connectorAppId)!;
      const { integration } = await addCustomerAppIntegration(rt, { tenantId: t.id, clientId: app.appId, clientSecret: app.secrets[0]!.value });
      ids.set(integration.id, t);
    }
    // Slow the Graph delta rounds down a little so that collections overlap and a kill lands mid-run.
    emulator.control.setFaults({ rate: 0.5, kinds: ['429-fractional'], services: ['graph'], match: '/delta', maxRetryAfterSeconds: 0.15, seed: 11 });

    const workerA = startVigil(['worker'], env);
    const workerB = startVigil(['worker'], env);
    procs.push(workerA, workerB);
    await until('workers ready', async () => workerA.output().includes('ready') && workerB.output().includes('ready'), 30_000).catch((e: Error) => {
      throw new Error(`${e.message}: ${workerA.output()} ${workerB.output()}`);
    });
    const serve = startVigil(['serve'], env);
    procs.push(serve);

    // Kill worker A once it owns a running collection with some pages stored.
    const victim = await until(
      'a run owned by worker A',
      async () =>
        rt.db.selectFrom('collection_runs').selectAll().where('status', '=', 'running').where('owner_pid', '=', workerA.child.pid!).executeTakeFirst(),
      90_000,
    );
    await until(
      'pages stored by worker A',
      async () => {
        const n = await rt.db
          .selectFrom('checkpoints')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('run_id', '=', victim.id)
          .executeTakeFirst();
        return Number(n?.n ?? 0) >= 2;
      },
      90_000,
    );
    workerA.child.kill('SIGKILL');
    await workerA.exited;

    // Everything completes: each integration has exactly one finished run, never two at once.
    await until(
      'all collections finished',
      async () => {
        const runs = await rt.db.selectFrom('collection_runs').select(['integration_id', 'status']).execute();
        return runs.length >= 5 && runs.every((r) => r.status !== 'running') && new Set(runs.map((r) => r.integration_id)).size === 5;
      },
      240_000,
    ).catch(async (e: Error) => {
      const runs = await rt.db.selectFrom('collection_runs').select(['integration_id', 'status', 'attempts', 'errors']).execute();
      throw new Error(
        `${e.message}: runs ${JSON.stringify(runs).slice(0, 3000)}\nworker B: ${workerB.output().slice(-3000)}\nserve: ${serve.output().slice(-1500)}`,
      );
    });
    emulator.control.clearFaults();
    const runs = await rt.db.selectFrom('collection_runs').selectAll().execute();
    expect(runs).toHaveLength(5);
    expect(runs.every((r) => r.status === 'partial')).toBe(true); // one environment per tenant without an application user
    const resumed = runs.find((r) => r.id === victim.id)!;
    expect(resumed.attempts).toBe(2);
    expect(resumed.owner_pid).toBe(workerB.child.pid);
    for (const [integrationId, tenant] of ids) {
      const truth = groundTruth(tenant);
      expect(
        await countLive(rt.db, integrationId, STREAM_RUN_ORDER),
        `${integrationId === victim.integration_id ? 'killed' : 'other'} ${JSON.stringify(
          await rt.db
            .selectFrom('checkpoints')
            .selectAll()
            .where('run_id', '=', runs.find((r) => r.integration_id === integrationId)!.id)
            .where('stream', 'in', ['groups', 'users'])
            .execute(),
        )}`,
      ).toMatchObject({
        users: truth.users,
        groups: truth.groups,
        memberships: truth.memberships,
        environments: truth.environments,
        dataverseUsers: truth.systemusers,
        agents: truth.agents,
      });
      const run = runs.find((r) => r.integration_id === integrationId)!;
      // Counted once across the killed and the resuming worker: nothing lost, nothing twice.
      expect(JSON.parse(run.counts!).users.records).toBe(truth.users);
    }
    // Checks are evaluated right after each collection finishes.
    await until(
      'checks evaluated for all five',
      async () => (await rt.db.selectFrom('check_results').select('integration_id').distinct().execute()).length === 5,
      30_000,
    );

    // Graceful shutdown on SIGTERM.
    serve.child.kill('SIGTERM');
    workerB.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(await workerB.exited).toBe(0);
    expect(workerB.output()).toMatch(/stopped/);
  }, 360_000);
});
