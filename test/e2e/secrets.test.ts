import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCustomerAppIntegration, rotateSecret, toView, verifyStoredIntegration } from '../../src/onboarding/integrations.ts';
import { getIntegration } from '../../src/integration/index.ts';
import { listCheckpoints } from '../../src/store/repositories/runs.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { world, type World } from './harness.ts';

describe('client secret lifecycle (Mode A)', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({ seed: 'secrets', sizes: { users: 30, guests: 2, groups: 5, environments: 3, agents: 8 } });
  });
  afterAll(async () => w.close());

  it('an expired secret stops collection cleanly, keeps its checkpoints, and a verified rotation resumes it', async () => {
    const rt = await w.runtime(undefined, { VIGIL_GRAPH_PAGE_SIZE: '10' });
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const secret = w.app.secrets[0]!;
    const validUntil = secret.endDateTime;
    let pages = 0;
    // The secret expires while the run is under way: Graph's cached token still works, the next resource's does not.
    const first = await collectIntegration(rt, integration.id, {
      afterPage: () => {
        if (++pages === 2) secret.endDateTime = new Date(Date.now() - 1000).toISOString();
      },
    }).catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'AADSTS7000222' });
    const row = await getIntegration(rt.db, integration.id);
    expect(row.credential_state).toBe('expired');
    expect(row.credential_error).toMatch(/expired/);
    const interrupted = await rt.db.selectFrom('collection_runs').selectAll().where('integration_id', '=', integration.id).executeTakeFirstOrThrow();
    expect(interrupted.status).toBe('running');
    const kept = await listCheckpoints(rt.db, interrupted.id);
    expect(kept.filter((c) => c.status === 'done').map((c) => c.stream)).toContain('users');

    // While expired, collection refuses with the fix instead of failing again and again.
    await expect(collectIntegration(rt, integration.id)).rejects.toMatchObject({
      code: 'CREDENTIALS_EXPIRED',
      remediation: expect.stringMatching(/"Rotate secret" on its portal page/),
    });

    // A bad new secret is refused by the tenant and changes nothing.
    await expect(rotateSecret(rt, integration.id, { clientSecret: 'Bad8Q~not-the-new-secret-value-000000000000' })).rejects.toMatchObject({
      code: 'AADSTS7000215',
    });
    expect((await getIntegration(rt.db, integration.id)).secret_envelope).toBe(row.secret_envelope);

    // The customer creates a new secret; Vigil checks it, swaps it in, and the run resumes where it stopped.
    const fresh = { ...secret, keyId: 'new-key', value: 'New8Q~a-brand-new-client-secret-value-0000', endDateTime: validUntil };
    w.app.secrets.push(fresh);
    const view = await rotateSecret(rt, integration.id, { clientSecret: fresh.value, secretExpires: validUntil.slice(0, 10) });
    expect(view.credentialState).toBe('ok');
    const resumed = await collectIntegration(rt, integration.id);
    expect(resumed).toMatchObject({ resumed: true, runId: interrupted.id, status: 'partial' });
    expect(resumed.streams.users.records).toBe(w.truth.users);
  });

  it('a rotation with a bad new secret keeps the old secret working', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.app.secrets.at(-1)!.value });
    await expect(rotateSecret(rt, integration.id, { clientSecret: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' })).rejects.toMatchObject({
      field: 'clientSecret',
      message: expect.stringMatching(/Secret ID/),
    });
    await expect(rotateSecret(rt, integration.id, { clientSecret: 'Bad8Q~still-not-the-secret-value-00000000000' })).rejects.toMatchObject({
      code: 'AADSTS7000215',
    });
    const { report } = await verifyStoredIntegration(rt, integration.id);
    expect(report.verified).toBe(true);
    expect(toView(await getIntegration(rt.db, integration.id)).credentialState).toBe('ok');
  });
});
