import type { Kysely } from 'kysely';

/**
 * Initial schema. Frozen: later changes come as new migrations. Dialect-neutral (`Kysely<any>`, text timestamps in
 * ISO 8601 UTC, booleans as integers 0/1, JSON as text) so SQLite and PostgreSQL share it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('mode', 'varchar(32)', (c) => c.notNull())
    .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('sp_object_id', 'varchar(36)')
    .addColumn('secret_envelope', 'text')
    .addColumn('secret_expires_at', 'varchar(32)')
    .addColumn('verification', 'text')
    .addColumn('verified_at', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addUniqueConstraint('integrations_tenant_client_uq', ['tenant_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('collection_runs')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('started_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('finished_at', 'varchar(32)')
    .addColumn('duration_ms', 'integer')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('owner_host', 'varchar(255)')
    .addColumn('owner_pid', 'integer')
    .addColumn('heartbeat_at', 'varchar(32)')
    .addColumn('counts', 'text')
    .addColumn('errors', 'text')
    .addColumn('http_stats', 'text')
    .execute();
  await db.schema.createIndex('collection_runs_integration_idx').on('collection_runs').columns(['integration_id', 'started_at']).execute();

  await db.schema
    .createTable('checkpoints')
    .addColumn('run_id', 'varchar(64)', (c) => c.notNull().references('collection_runs.id').onDelete('cascade'))
    .addColumn('stream', 'varchar(64)', (c) => c.notNull())
    .addColumn('slice_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('cursor', 'text')
    .addColumn('records', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error_code', 'varchar(128)')
    .addColumn('error_message', 'text')
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('checkpoints_pk', ['run_id', 'stream', 'slice_key'])
    .execute();

  // Inventory tables: integration_id + upstream key, normalised columns, raw JSON, and the seen/deleted stamps.
  const inventory = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
      .addColumn('raw', 'text', (c) => c.notNull())
      .addColumn('first_seen_at', 'varchar(32)', (c) => c.notNull())
      .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
      .addColumn('last_seen_run', 'varchar(64)', (c) => c.notNull())
      .addColumn('deleted_at', 'varchar(32)');

  await inventory('directory_users')
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('user_principal_name', 'text')
    .addColumn('mail', 'text')
    .addColumn('account_enabled', 'integer')
    .addColumn('user_type', 'varchar(32)')
    .addColumn('created_date_time', 'varchar(32)')
    .addPrimaryKeyConstraint('directory_users_pk', ['integration_id', 'id'])
    .execute();

  await inventory('directory_groups')
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('mail', 'text')
    .addColumn('security_enabled', 'integer')
    .addColumn('mail_enabled', 'integer')
    .addColumn('group_types', 'text')
    .addPrimaryKeyConstraint('directory_groups_pk', ['integration_id', 'id'])
    .execute();

  await inventory('group_memberships')
    .addColumn('group_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('member_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('member_type', 'varchar(64)', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_memberships_pk', ['integration_id', 'group_id', 'member_id'])
    .execute();

  await inventory('environments')
    .addColumn('id', 'varchar(128)', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('sku', 'varchar(32)')
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('region', 'varchar(64)')
    .addColumn('dataverse_url', 'text')
    .addColumn('state', 'varchar(32)')
    .addPrimaryKeyConstraint('environments_pk', ['integration_id', 'id'])
    .execute();

  await inventory('dataverse_users')
    .addColumn('environment_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('full_name', 'text')
    .addColumn('aad_object_id', 'varchar(64)')
    .addColumn('application_id', 'varchar(64)')
    .addColumn('is_disabled', 'integer')
    .addPrimaryKeyConstraint('dataverse_users_pk', ['integration_id', 'environment_id', 'id'])
    .execute();

  await inventory('agents')
    .addColumn('environment_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('schema_name', 'text')
    .addColumn('authentication_mode', 'integer')
    .addColumn('authentication_trigger', 'integer')
    .addColumn('access_control_policy', 'integer')
    .addColumn('owner_id', 'varchar(64)')
    .addColumn('published_on', 'varchar(32)')
    .addColumn('modified_on', 'varchar(32)')
    .addColumn('created_on', 'varchar(32)')
    .addColumn('state_code', 'integer')
    .addColumn('status_code', 'integer')
    .addPrimaryKeyConstraint('agents_pk', ['integration_id', 'environment_id', 'id'])
    .execute();

  await db.schema
    .createTable('check_results')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('check_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('resource_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('resource_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('resource_name', 'text')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('run_id', 'varchar(64)')
    .addColumn('evaluated_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('check_results_pk', ['integration_id', 'check_id', 'resource_id'])
    .execute();

  await db.schema
    .createTable('findings')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('check_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('resource_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('resource_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('resource_name', 'text')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('first_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('resolved_at', 'varchar(32)')
    .addUniqueConstraint('findings_resource_uq', ['integration_id', 'check_id', 'resource_id'])
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'findings',
    'check_results',
    'agents',
    'dataverse_users',
    'environments',
    'group_memberships',
    'directory_groups',
    'directory_users',
    'checkpoints',
    'collection_runs',
    'integrations',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
