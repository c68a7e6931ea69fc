import type { Kysely } from 'kysely';

/**
 * Containment (issue 19, "Respond"): every quarantine or release of a Copilot Studio agent Vigil attempted through the
 * Power Platform API, with its author and outcome.
 * - `containment_actions`: `action` `contain` or `release`; the agent (`environment_id`, `agent_id` = the bot id); the
 *   alert or agent step it came from, when one; `requested_by` the person who asked (named to Vigil), `signed_in_as`
 *   the administrator whose delegated token made the call (user principal name from the token, null when the sign-in
 *   did not finish); `outcome` `succeeded`, `refused` (a permission, role or token the API or Vigil refused) or
 *   `failed`; `quarantined` the state the API answered after the call (0/1, null when unknown); the error's catalogue
 *   code and message when it did not succeed. Never a token.
 * Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('containment_actions')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('action', 'varchar(16)', (c) => c.notNull())
    .addColumn('environment_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('agent_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('alert_id', 'varchar(64)')
    .addColumn('step_id', 'varchar(64)')
    .addColumn('requested_by', 'varchar(320)', (c) => c.notNull())
    .addColumn('signed_in_as', 'varchar(320)')
    .addColumn('requested_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('quarantined', 'integer')
    .addColumn('error_code', 'varchar(64)')
    .addColumn('error_message', 'text')
    .execute();
  await db.schema.createIndex('containment_actions_agent').on('containment_actions').columns(['integration_id', 'agent_id', 'requested_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('containment_actions').execute();
}
