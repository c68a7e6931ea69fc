import { afterEach, describe, expect, it } from 'vitest';
import { ensureOrganization } from '../../src/access/index.ts';
import { environmentsOfAgent, insertContainmentAction, listContainmentActions, type ContainmentActionRow } from '../../src/store/repositories/containment.ts';
import { insertIntegration } from '../../src/store/repositories/integrations.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';

const AGENT = '33333333-3333-4333-8333-333333333333';

describe.each(DIALECTS)('containment actions (%s)', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  async function seed(): Promise<string> {
    store = await freshStore(dialect);
    const org = (await ensureOrganization(store.db, 'Contoso')).id;
    const at = '2026-01-01T00:00:00.000Z';
    await insertIntegration(store.db, {
      id: 'int_a',
      organization_id: org,
      name: 'contoso',
      mode: 'customer-app',
      tenant_id: '11111111-1111-4111-8111-111111111111',
      client_id: '22222222-2222-4222-8222-222222222222',
      sp_object_id: null,
      secret_envelope: null,
      secret_expires_at: null,
      verification: null,
      verified_at: null,
      created_at: at,
      updated_at: at,
    });
    return org;
  }

  const action = (org: string, id: string, at: string, over: Partial<ContainmentActionRow> = {}): ContainmentActionRow => ({
    id,
    organization_id: org,
    integration_id: 'int_a',
    action: 'contain',
    environment_id: 'env-1',
    agent_id: AGENT,
    alert_id: null,
    step_id: null,
    requested_by: 'alice',
    signed_in_as: 'admin@contoso.example',
    requested_at: at,
    outcome: 'succeeded',
    quarantined: 1,
    error_code: null,
    error_message: null,
    ...over,
  });

  it('keeps every action with its author and outcome, newest first, per agent', async () => {
    const org = await seed();
    await insertContainmentAction(store.db, action(org, 'ca_1', '2026-02-01T10:00:00.000Z', { alert_id: 'alr_1' }));
    await insertContainmentAction(store.db, action(org, 'ca_2', '2026-02-01T11:00:00.000Z', { action: 'release', quarantined: 0, requested_by: 'bob' }));
    await insertContainmentAction(
      store.db,
      action(org, 'ca_3', '2026-02-01T12:00:00.000Z', { agent_id: 'other', outcome: 'refused', quarantined: null, error_code: 'CONTAINMENT_NOT_AVAILABLE' }),
    );
    const rows = await listContainmentActions(store.db, { integrationId: 'int_a', agentId: AGENT });
    expect(rows.map((r) => [r.id, r.action, r.requested_by, r.outcome, r.quarantined, r.alert_id])).toEqual([
      ['ca_2', 'release', 'bob', 'succeeded', 0, null],
      ['ca_1', 'contain', 'alice', 'succeeded', 1, 'alr_1'],
    ]);
    expect((await listContainmentActions(store.db, { integrationId: 'int_a' })).map((r) => r.id)).toEqual(['ca_3', 'ca_2', 'ca_1']);
    expect(await listContainmentActions(store.db, { integrationId: 'int_a', limit: 1 })).toHaveLength(1);
  });

  it("finds an agent's environment in the live inventory only", async () => {
    await seed();
    const row = (id: string, env: string, deleted: string | null) => ({
      integration_id: 'int_a',
      raw: '{}',
      first_seen_at: 'x',
      last_seen_at: 'x',
      last_seen_run: 'r',
      deleted_at: deleted,
      environment_id: env,
      id,
      name: null,
      schema_name: null,
      authentication_mode: null,
      authentication_trigger: null,
      access_control_policy: null,
      owner_id: null,
      published_on: null,
      modified_on: null,
      created_on: null,
      state_code: null,
      status_code: null,
    });
    await store.db
      .insertInto('agents')
      .values([row(AGENT, 'env-1', null), row(AGENT, 'env-old', '2026-01-02'), row('other', 'env-2', null)])
      .execute();
    expect(await environmentsOfAgent(store.db, 'int_a', AGENT)).toEqual(['env-1']);
    expect(await environmentsOfAgent(store.db, 'int_a', 'nope')).toEqual([]);
  });
});
