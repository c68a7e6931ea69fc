import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autoGrantAccess } from '../../src/onboarding/environments.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import type { CollectResult } from '../../src/sync/engine.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { collectionJobHandler } from '../../src/sync/worker.ts';
import { world, type World } from './harness.ts';

/**
 * VIGIL_AUTO_GRANT_ACCESS: after a collection, an environment whose agents could not be read because the application
 * has no application user there (Dataverse `0x80072560`) is granted System Administrator, so the next collection
 * reads it. The grant is onboarding's (`autoGrantAccess`), handed to the collection by its entry point (`vigil
 * collect`, the job handler of `vigil serve` and `vigil worker`): collection itself does not import onboarding.
 */
describe('automatic environment access after a collection', () => {
  let w: World;
  beforeAll(async () => {
    // The generated tenant has one Dataverse environment without the application's application user, by construction.
    w = await world({ seed: 'auto-grant', sizes: { users: 40, guests: 6, groups: 10, environments: 4, agents: 30 } });
  });
  afterAll(async () => w.close());

  /** Environments whose agents the run could not read for want of an application user. */
  const unreadable = (run: CollectResult) => run.errors.filter((e) => e.stream === 'agents' && e.code === '0x80072560').map((e) => e.slice);

  it('off: the environment stays errored and nothing is granted; on: it is granted, and the next collection reads it', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const off = await collectAndEvaluate(rt, integration.id, { evaluate: false, grantAccess: autoGrantAccess(rt, false) });
    const missing = unreadable(off.run);
    expect(missing).toHaveLength(1);
    expect(off.grants).toEqual([]);
    // Stopped as the grant starts (a worker stopping, a job's expiry): the run's stop reaches the grant's BAP and
    // Dataverse requests, so nothing is granted, no environment is reported failed, and the outcome is the run's stop.
    const controller = new AbortController();
    const grant = autoGrantAccess(rt, true)!;
    const stopped = collectAndEvaluate(rt, integration.id, {
      evaluate: false,
      signal: controller.signal,
      grantAccess: (id, errors, signal) => {
        controller.abort(new Error('worker stopping'));
        return grant(id, errors, signal);
      },
    });
    await expect(stopped).rejects.toMatchObject({ code: 'COLLECTION_ABORTED' });
    expect(unreadable((await collectAndEvaluate(rt, integration.id, { evaluate: false, full: true })).run)).toEqual(missing);
    const on = await collectAndEvaluate(rt, integration.id, { evaluate: false, full: true, grantAccess: autoGrantAccess(rt, true) });
    expect(unreadable(on.run)).toEqual(missing);
    expect(on.grants).toEqual([expect.objectContaining({ environmentId: missing[0], result: 'granted' })]);
    const next = await collectAndEvaluate(rt, integration.id, { evaluate: false, full: true });
    expect(unreadable(next.run)).toEqual([]);

    // The job handler (vigil serve, vigil worker) grants the same way, with the grant main/service.ts hands it.
    w.emulator.control.remove(w.tenant.id, 'appUsers', `${missing[0]}/${w.app.appId}`);
    expect(unreadable((await collectAndEvaluate(rt, integration.id, { evaluate: false, full: true })).run)).toEqual(missing);
    const handler = collectionJobHandler({ ...rt, grantAccess: autoGrantAccess(rt, true), audit: { enabled: false } });
    await handler({
      id: 'job-1',
      integrationId: integration.id,
      enqueuedAt: new Date().toISOString(),
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    expect(unreadable((await collectAndEvaluate(rt, integration.id, { evaluate: false, full: true })).run)).toEqual([]);
    await rt.close();
  }, 120_000);
});
