import type { Kysely } from 'kysely';

/**
 * Credential state of an integration (Mode A secret lifecycle): `ok`, or `expired` / `rejected` with the reason, set
 * when Entra ID refuses the stored credentials and cleared by a successful rotation. Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('integrations')
    .addColumn('credential_state', 'varchar(16)', (c) => c.notNull().defaultTo('ok'))
    .execute();
  await db.schema.alterTable('integrations').addColumn('credential_error', 'text').execute();
  await db.schema.alterTable('integrations').addColumn('secret_rotated_at', 'varchar(32)').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('integrations').dropColumn('secret_rotated_at').execute();
  await db.schema.alterTable('integrations').dropColumn('credential_error').execute();
  await db.schema.alterTable('integrations').dropColumn('credential_state').execute();
}
