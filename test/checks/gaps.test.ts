import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toEnvironment } from '../../src/sources/bap/streams/environments.ts';
import { UpstreamHttpError } from '../../src/platform/http/client.ts';
import type { DataverseUsersTable } from '../../src/store/schema.ts';
import { mappingOf } from '../../src/store/stream-tables.ts';
import { agentRow, checkContext, environmentRow, estateRow, resultFor, runCheck, sliceError, userRow } from '../support/checks.ts';

/**
 * Defect 7 of issue 15 ("silent passes"), on real answers: a Dataverse 403 `0x80040220` (PrivilegeDenied) on one
 * environment's users must not let `guest_owns_agent` pass that environment's agents, and an environment list without
 * the default environment (a recorded BAP answer) must not leave the two default-environment DLP checks silent.
 */

const REAL = join(import.meta.dirname, '../fixtures/real/gaps');
const real = (file: string) => JSON.parse(readFileSync(join(REAL, file), 'utf8')) as Record<string, unknown>;

/** The errored checkpoint the sync engine writes for a slice whose read threw `e` (its code and message). */
function checkpointOf(stream: string, sliceKey: string, e: UpstreamHttpError) {
  return { stream, slice_key: sliceKey, status: 'error', error_code: e.code, error_message: e.message };
}

/** The real PrivilegeDenied answer, as the HTTP client raises it for `GET {org}/api/data/v9.2/systemusers`. */
function privilegeDenied(): UpstreamHttpError {
  const body = real('dataverse-403-privilege-denied.json') as { error: { code: string; message: string } };
  return new UpstreamHttpError('dataverse', 'GET', 'https://org2.crm.dynamics.com/api/data/v9.2/systemusers', 403, body.error.code, body.error.message, body);
}

function systemUser(environmentId: string, id: string, aad: string): DataverseUsersTable {
  return {
    integration_id: 'int_1',
    environment_id: environmentId,
    id,
    full_name: id,
    aad_object_id: aad,
    application_id: null,
    is_disabled: 0,
    raw: '{}',
    first_seen_at: '',
    last_seen_at: '',
    last_seen_run: 'run',
    deleted_at: null,
  };
}

describe('slice gaps are the engine’s rule (issue 15, defect 7)', () => {
  const env1 = environmentRow({ id: 'env1', display_name: 'Prod' });
  const env2 = environmentRow({ id: 'env2', display_name: 'Sales', dataverse_url: 'https://org2.crm.dynamics.com/' });
  const guest = userRow({ id: 'g1', user_type: 'Guest', user_principal_name: 'eve_fabrikam.com#EXT#@contoso.onmicrosoft.com' });
  const member = userRow({ id: 'u1' });

  it('guest_owns_agent does not pass the agents of an environment whose Dataverse users answered 403 0x80040220', async () => {
    // env2's users could not be read: its agent's owner is unknown (it is in fact the guest's, but Vigil cannot see it).
    const ctx = checkContext({
      environments: [env1, env2],
      agents: [
        agentRow({ id: 'a1', environment_id: 'env1', owner_id: 'su1' }),
        agentRow({ id: 'a2', environment_id: 'env1', owner_id: 'su2' }),
        agentRow({ id: 'b1', environment_id: 'env2', owner_id: 'su9' }),
      ],
      dataverseUsers: [systemUser('env1', 'su1', 'u1'), systemUser('env1', 'su2', 'g1')],
      users: [member, guest],
      checkpoints: [checkpointOf('dataverseUsers', 'env2', privilegeDenied())],
    });
    const r = await runCheck('guest_owns_agent', ctx);
    expect(resultFor(r, 'a1')?.status).toBe('pass');
    expect(resultFor(r, 'a2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('#EXT#') });
    const b1 = resultFor(r, 'b1');
    expect(b1).toMatchObject({
      status: 'not_evaluated',
      detail: expect.objectContaining({ stream: 'dataverseUsers', slice: 'env2', code: '0x80040220', checkStatus: 'pass' }),
    });
    // The reason names the slice, the code, and carries Dataverse's own words (the missing privilege).
    expect(b1?.reason).toContain("'dataverseUsers' of environment Sales (env2)");
    expect(b1?.reason).toContain('0x80040220');
    expect(b1?.reason).toContain('is missing prvReadOfficeDocument privilege');
    expect(r.filter((x) => x.status === 'pass').map((x) => x.resourceId)).toEqual(['a1']);
  });

  it('agent_owner_disabled_or_missing does not call an owner "gone" when the environment’s users were not read', async () => {
    const ctx = checkContext({
      environments: [env1, env2],
      agents: [agentRow({ id: 'b1', environment_id: 'env2', owner_id: 'su9' })],
      users: [member],
      checkpoints: [checkpointOf('dataverseUsers', 'env2', privilegeDenied())],
    });
    expect(resultFor(await runCheck('agent_owner_disabled_or_missing', ctx), 'b1')?.status).toBe('not_evaluated');
  });

  it('a gap in a slice no resource is under is still shown (the check names it), and other resources keep their verdicts', async () => {
    const ctx = checkContext({
      environments: [env1, env2],
      agents: [agentRow({ id: 'a1', environment_id: 'env1', owner_id: 'su1' })],
      dataverseUsers: [systemUser('env1', 'su1', 'u1')],
      users: [member],
      checkpoints: [checkpointOf('dataverseUsers', 'env2', privilegeDenied())],
    });
    const r = await runCheck('guest_owns_agent', ctx);
    expect(resultFor(r, 'a1')?.status).toBe('pass');
    expect(r).toContainEqual(
      expect.objectContaining({ resourceId: 'tenant-1/dataverseUsers/env2', status: 'not_evaluated', reason: expect.stringContaining('0x80040220') }),
    );
  });

  it('a per-user stream with thousands of errored slices shows each slice once, and what depends on them is not evaluated', async () => {
    // A throttled or refused Teams read of a large tenant errors one slice per user batch; the engine matches results
    // to gaps by slice key, so each gap is shown by the check's own result for it and never added a second time.
    const slices = Array.from({ length: 3000 }, (_, i) => `users:${String(i).padStart(5, '0')}`);
    const rows = Array.from({ length: 25 }, (_, i) =>
      estateRow(
        'teamsApps',
        `u${i}/a`,
        {
          userId: `u${i}`,
          installationId: `a-${i}`,
          teamsAppId: 'a',
          externalId: 'ext-a',
          displayName: 'App a',
          version: '1.0',
          distributionMethod: 'sideloaded',
          azureADAppId: null,
          publishingState: 'published',
        },
        { sliceKey: 'users:ok' },
      ),
    );
    const r = await runCheck(
      'teams_custom_app_widely_installed',
      checkContext({ estate: { teamsApps: rows }, checkpoints: slices.map((k) => sliceError('teamsApps', k, 'BATCH_THROTTLED')) }),
    );
    const shown = r.filter((x) => x.resourceId.startsWith('tenant-1/teamsApps/')).map((x) => x.resourceId);
    expect(shown).toHaveLength(3000);
    expect(new Set(shown)).toEqual(new Set(slices.map((k) => `tenant-1/teamsApps/${k}`)));
    expect(resultFor(r, 'a')).toMatchObject({ status: 'not_evaluated', detail: expect.objectContaining({ checkStatus: 'fail', slice: slices[0] }) });
    expect(r).toHaveLength(3001);
  });

  it('a check with nothing in scope returns one tenant-wide result instead of none', async () => {
    const r = await runCheck('agent_no_authentication', checkContext({ environments: [env1], agents: [] }));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'pass', reason: expect.stringContaining('Nothing in scope') })]);
  });
});

describe('DLP checks on the default environment when the environment list has none (issue 15, defect 7)', () => {
  // A recorded BAP answer (terraform-provider-power-platform): two environments, neither isDefault.
  const environments = (real('bap-environments-no-default.json').value as Record<string, unknown>[])
    .map(toEnvironment)
    .map((e) => environmentRow(mappingOf('environments').toRow(e)));
  const allEnvironments = estateRow('dlpPolicies', 'p-all', {
    displayName: 'All',
    environmentType: 'AllEnvironments',
    environments: [],
    defaultConnectorsClassification: 'Blocked',
    business: [],
    nonBusiness: [],
    blocked: ['http', 'httpwebhook', 'shared_webcontents'],
    createdTime: null,
    lastModifiedTime: null,
  });

  it.each(['pp_dlp_default_environment', 'pp_dlp_http_connector_not_blocked'])(
    '%s is not evaluated, saying the list has no default environment',
    async (id) => {
      expect(environments.map((e) => e.is_default)).toEqual([0, 0]);
      const r = await runCheck(id, checkContext({ environments, estate: { dlpPolicies: [allEnvironments] } }));
      expect(r).toEqual([
        expect.objectContaining({
          resourceType: 'tenant',
          status: 'not_evaluated',
          reason: expect.stringContaining('has no default environment'),
          detail: expect.objectContaining({ code: 'NO_DEFAULT_ENVIRONMENT' }),
        }),
      ]);
    },
  );

  it('the non-default check still judges both recorded environments', async () => {
    const r = await runCheck('pp_environment_without_dlp', checkContext({ environments, estate: { dlpPolicies: [allEnvironments] } }));
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['00000000-0000-0000-0000-000000000001', 'pass'],
      ['00000000-0000-0000-0000-000000000002', 'pass'],
    ]);
  });
});

/**
 * The property (issue 15, "'Not evaluated' is the engine's rule"): on a tenant the emulator generated and Vigil
 * collected, inject an error into every slice of every stream in turn — each checkpoint of the run, one at a time,
 * errored with Dataverse's real PrivilegeDenied answer, then left unfinished, while its rows stay stored (the worst
 * case: stale rows that look valid) — and run every check as evaluation does. No check may pass (or fail) a resource that depends on the errored
 * slice; every check that reads the stream shows the gap; every check returns at least one result, and every resource a
 * check judged before is still reported, or the gap that hides it is.
 */
describe('property: an errored slice of any stream never yields a verdict on what depends on it', () => {
  it('holds for every checkpoint of a collected emulator tenant and every check', async () => {
    const { world } = await import('../e2e/harness.ts');
    const { freshStore } = await import('../store/dialects.ts');
    const { addCustomerAppIntegration } = await import('../../src/onboarding/integrations.ts');
    const { getIntegration } = await import('../../src/integration/index.ts');
    const { collectIntegration } = await import('../../src/sync/run.ts');
    const { listCheckpoints } = await import('../../src/store/repositories/runs.ts');
    const { coverageFromCheckpoints, integrationContext, runCheck: runOne } = await import('../../src/checks/evaluate.ts');
    const { loadChecks } = await import('../../src/checks/loader.ts');
    const { InventoryCache } = await import('../../src/checks/inventory.ts');
    const { STREAMS } = await import('../../src/sources/index.ts');

    const w = await world({ seed: 'gaps-property', sizes: { users: 30, guests: 5, groups: 6, environments: 4, agents: 24 } });
    const store = await freshStore('sqlite');
    try {
      const rt = await w.runtime(store.dataDir, store.env);
      const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
      const run = await collectIntegration(rt, integration.id);
      const row = await getIntegration(rt.db, integration.id);
      const checkpoints = await listCheckpoints(rt.db, run.runId);
      const checks = await loadChecks();
      const cache = new InventoryCache(
        rt.db,
        integration.id,
        checks.map((c) => c.metadata),
      );
      await cache.load([...new Set(checks.flatMap((c) => c.metadata.reads))]);
      const now = new Date(w.tenant.referenceTime!);

      // Where each stored resource lives (the test's own map, from the store): id → the slice keys it is under.
      const parents = new Map<string, Set<string>>();
      const under = (id: string, key: string) => parents.set(id, new Set([...(parents.get(id) ?? []), key]));
      for (const e of await rt.db.selectFrom('environments').select('id').where('integration_id', '=', integration.id).execute()) under(e.id, e.id);
      for (const a of await rt.db.selectFrom('agents').select(['id', 'environment_id']).where('integration_id', '=', integration.id).execute())
        under(a.id, a.environment_id);
      for (const o of await rt.db.selectFrom('estate_objects').select(['id', 'slice_key']).where('integration_id', '=', integration.id).execute())
        under(o.id, o.slice_key);
      for (const u of await rt.db.selectFrom('directory_users').select('id').where('integration_id', '=', integration.id).execute()) under(u.id, u.id);
      const dependsOn = (r: { resourceType: string; resourceId: string }, sliceKey: string) =>
        sliceKey === '*' || r.resourceType === 'tenant' || r.resourceId === sliceKey || !parents.has(r.resourceId) || parents.get(r.resourceId)!.has(sliceKey);
      const streamsOf = (c: (typeof checks)[number]) =>
        new Set<string>([...c.metadata.reads, ...c.metadata.paged].map((n) => (n === 'directoryUsers' ? 'users' : n)));

      const evaluate = async (cps: typeof checkpoints) => {
        const base = integrationContext(row, now, coverageFromCheckpoints(run.runId, cps));
        const out = new Map<string, Awaited<ReturnType<typeof runOne>>>();
        for (const c of checks) out.set(c.metadata.id, await runOne(c, base, cache.source));
        return out;
      };
      const baseline = await evaluate(checkpoints);
      const done = checkpoints.filter((c) => c.status === 'done');
      const injected = new Set(done.map((c) => c.stream));
      // Every stream Vigil collects ran in this tenant, so each is injected (a new stream joins the property by itself).
      expect([...injected].sort()).toEqual(Object.keys(STREAMS).sort());
      const denied = privilegeDenied();
      let judged = 0;
      // Each slice errored (the real 403), and each left unfinished (a run that stopped in it).
      const injections = done.flatMap((cp) => [
        { cp, as: { status: 'error', error_code: denied.code, error_message: denied.message } },
        { cp, as: { status: 'in_progress', error_code: null, error_message: null } },
      ]);
      for (const { cp, as } of injections) {
        const cps = checkpoints.map((c) => (c === cp ? { ...c, ...as } : c));
        const results = await evaluate(cps);
        for (const c of checks) {
          const out = results.get(c.metadata.id)!;
          const where = `${c.metadata.id} with ${cp.stream}/${cp.slice_key} ${as.status}`;
          expect(out.length, where).toBeGreaterThan(0);
          if (!streamsOf(c).has(cp.stream)) continue;
          judged++;
          const verdicts = out.filter((r) => r.status !== 'not_evaluated' && dependsOn(r, cp.slice_key));
          expect(
            verdicts.map((r) => `${r.resourceType}/${r.resourceId}: ${r.status}`),
            where,
          ).toEqual([]);
          const shown = out.some(
            (r) =>
              r.status === 'not_evaluated' &&
              (cp.slice_key === '*' || r.resourceId === cp.slice_key || r.resourceId.endsWith(`/${cp.stream}/${cp.slice_key}`) || dependsOn(r, cp.slice_key)),
          );
          expect(shown, `${where}: the gap is shown`).toBe(true);
          const reported = new Set(out.map((r) => `${r.resourceType}/${r.resourceId}`));
          const vanished = baseline.get(c.metadata.id)!.filter((r) => !reported.has(`${r.resourceType}/${r.resourceId}`) && !dependsOn(r, cp.slice_key));
          expect(
            vanished.map((r) => `${r.resourceType}/${r.resourceId}`),
            `${where}: resources outside the gap still reported`,
          ).toEqual([]);
        }
      }
      expect(judged).toBeGreaterThan(injections.length); // each injected slice was read by more than one check on average
    } finally {
      await w.close();
      await store.drop();
    }
  }, 300_000);
});
