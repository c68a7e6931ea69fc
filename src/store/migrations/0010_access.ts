import type { Kysely } from 'kysely';

/**
 * Access to the service (issue 7): organizations own integrations; portal users sign in with a password (scrypt hash,
 * never the password) and hold sessions (stored by the SHA-256 of their token, never the token); API keys are stored
 * by the SHA-256 of the key. Integrations made before this migration join one organization, `org_default`.
 * Integrity in code where SQLite cannot alter a column (integrations.organization_id is set on every insert). Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('portal_users')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'varchar(320)', (c) => c.notNull().unique())
    .addColumn('display_name', 'varchar(200)')
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('failed_logins', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'varchar(32)')
    .addColumn('last_login_at', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('disabled_at', 'varchar(32)')
    .execute();
  await db.schema
    .createTable('portal_sessions')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull().references('portal_users.id').onDelete('cascade'))
    .addColumn('csrf_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('portal_sessions_user').on('portal_sessions').column('user_id').execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_by', 'varchar(320)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)')
    .addColumn('last_used_at', 'varchar(32)')
    .addColumn('revoked_at', 'varchar(32)')
    .execute();
  await db.schema
    .alterTable('integrations')
    .addColumn('organization_id', 'varchar(64)', (c) => c.references('organizations.id'))
    .execute();
  const existing = await db.selectFrom('integrations').select('id').limit(1).execute();
  if (existing.length > 0) {
    await db.insertInto('organizations').values({ id: 'org_default', name: 'Default', created_at: new Date().toISOString() }).execute();
    await db.updateTable('integrations').set({ organization_id: 'org_default' }).execute();
  }
  await db.schema.createIndex('integrations_organization').on('integrations').column('organization_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('integrations_organization').execute();
  await db.schema.alterTable('integrations').dropColumn('organization_id').execute();
  for (const t of ['api_keys', 'portal_sessions', 'portal_users', 'organizations']) await db.schema.dropTable(t).execute();
}
