import { afterEach, describe, expect, it } from 'vitest';
import { ensureOrganization } from '../../src/access/index.ts';
import { bindTenant, listTenantBindings, recordProof, requireTenantBinding, unbindTenant } from '../../src/onboarding/tenants.ts';
import { migrate, migrateTo } from '../../src/store/db.ts';
import { advanceConsentFlow, insertConsentFlow } from '../../src/store/repositories/bindings.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';

const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';

describe.each(DIALECTS)('tenant bindings on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('upgrading to 0012 keeps every integrated tenant with the organization of its oldest integration', async () => {
    store = await freshStore(dialect, { migrate: false });
    await migrateTo(store.db, '0010_access');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const db = store.db as any;
    await db
      .insertInto('organizations')
      .values([
        { id: 'org_a', name: 'A', created_at: '2026-01-01T00:00:00Z' },
        { id: 'org_b', name: 'B', created_at: '2026-01-01T00:00:00Z' },
      ])
      .execute();
    const row = (id: string, org: string, tenant: string, created: string) => ({
      id,
      organization_id: org,
      name: id,
      mode: 'customer-app',
      tenant_id: tenant,
      client_id: id,
      sp_object_id: null,
      secret_envelope: null,
      secret_expires_at: null,
      verification: null,
      verified_at: null,
      created_at: created,
      updated_at: created,
      credential_state: 'ok',
      credential_error: null,
      secret_rotated_at: null,
    });
    await db
      .insertInto('integrations')
      .values([
        row('int_1', 'org_b', T1, '2026-02-01T00:00:00Z'),
        row('int_2', 'org_a', T1.toUpperCase(), '2026-03-01T00:00:00Z'),
        row('int_3', 'org_a', T2, '2026-01-15T00:00:00Z'),
      ])
      .execute();
    await migrate(store.db);
    const bindings = await listTenantBindings(store.db);
    expect(bindings.map((b) => [b.tenantId, b.organizationId, b.method])).toEqual([
      [T2, 'org_a', 'operator'],
      [T1, 'org_b', 'operator'],
    ]);
  });

  it("a proof binds once; a second organization's proof does not move the tenant; the operator does", async () => {
    store = await freshStore(dialect);
    const a = await ensureOrganization(store.db, 'A');
    const b = await ensureOrganization(store.db, 'B');
    expect(
      await recordProof(store.db, { tenantId: T1, organizationId: a.id, method: 'oidc-admin', provenBy: 'admin@t1.example', provenByOid: T2 }),
    ).toMatchObject({ bound: true });
    expect(await recordProof(store.db, { tenantId: T1, organizationId: b.id, method: 'oidc-admin', provenBy: 'x@t1.example' })).toEqual({ bound: false });
    await expect(requireTenantBinding(store.db, T1, b.id)).rejects.toMatchObject({ code: 'TENANT_NOT_PROVEN' });
    await expect(requireTenantBinding(store.db, T2, b.id)).rejects.toMatchObject({ code: 'TENANT_NOT_PROVEN' });
    await expect(requireTenantBinding(store.db, T1, a.id)).resolves.toBeUndefined();
    expect(await bindTenant(store.db, { tenantId: T1, organization: 'B' })).toMatchObject({ tenantId: T1, organization: 'B', method: 'operator' });
    await expect(requireTenantBinding(store.db, T1, a.id)).rejects.toMatchObject({ code: 'TENANT_NOT_PROVEN' });
    await expect(bindTenant(store.db, { tenantId: T1, organization: 'Nobody' })).rejects.toMatchObject({ code: 'ORGANIZATION_NOT_FOUND' });
    await unbindTenant(store.db, T1);
    await expect(unbindTenant(store.db, T1)).rejects.toMatchObject({ code: 'TENANT_NOT_BOUND' });
  });

  it('a consent flow stage is consumed once, even by two concurrent callbacks, and never after it expires', async () => {
    store = await freshStore(dialect);
    const a = await ensureOrganization(store.db, 'A');
    const flow = (id: string, expires: string) => ({
      id,
      organization_id: a.id,
      initiated_by: 'operator',
      tenant_id: T1,
      stage: 'consent' as const,
      nonce: null,
      verifier_envelope: null,
      created_at: '2026-01-01T00:00:00Z',
      expires_at: expires,
      used_at: null,
    });
    await insertConsentFlow(store.db, flow('cf_1', '2999-01-01T00:00:00Z'));
    await insertConsentFlow(store.db, flow('cf_old', '2000-01-01T00:00:00Z'));
    const now = new Date().toISOString();
    const wins = await Promise.all(Array.from({ length: 8 }, () => advanceConsentFlow(store.db, 'cf_1', 'consent', 'signin', now)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(await advanceConsentFlow(store.db, 'cf_1', 'consent', 'signin', now)).toBe(false);
    expect(await advanceConsentFlow(store.db, 'cf_old', 'consent', 'signin', now)).toBe(false);
  });
});
