import type { Kysely } from 'kysely';

/**
 * A tenant belongs to the organization whose administrator proved it (issue 14): `tenant_bindings` holds one row per
 * Microsoft Entra tenant (its owner, how and by whom it was proven), and `consent_flows` holds the consent links in
 * flight (single use: each stage is consumed by a conditional update, so a replayed state finds nothing to consume;
 * the PKCE verifier is kept only as an AES-256-GCM envelope). Tenants already integrated keep their organization:
 * each tenant is bound, method `operator`, to the organization of its oldest integration. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tenant_bindings')
    .addColumn('tenant_id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('method', 'varchar(16)', (c) => c.notNull())
    .addColumn('proven_by', 'varchar(320)')
    .addColumn('proven_by_oid', 'varchar(36)')
    .addColumn('proven_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tenant_bindings_organization').on('tenant_bindings').column('organization_id').execute();
  await db.schema
    .createTable('consent_flows')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('initiated_by', 'varchar(320)')
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('stage', 'varchar(16)', (c) => c.notNull())
    .addColumn('nonce', 'varchar(64)')
    .addColumn('verifier_envelope', 'text')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(32)')
    .execute();
  await db.schema.createIndex('consent_flows_expires').on('consent_flows').column('expires_at').execute();
  const rows = (await db
    .selectFrom('integrations')
    .select(['tenant_id', 'organization_id', 'created_at'])
    .where('organization_id', 'is not', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute()) as { tenant_id: string; organization_id: string; created_at: string }[];
  const seen = new Set<string>();
  const at = new Date().toISOString();
  for (const r of rows) {
    const tenant = r.tenant_id.toLowerCase();
    if (seen.has(tenant)) continue;
    seen.add(tenant);
    await db
      .insertInto('tenant_bindings')
      .values({
        tenant_id: tenant,
        organization_id: r.organization_id,
        method: 'operator',
        proven_by: 'migration 0012 (integrated before tenant binding)',
        proven_by_oid: null,
        proven_at: at,
      })
      .execute();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('consent_flows').execute();
  await db.schema.dropTable('tenant_bindings').execute();
}
