import type { Kysely } from 'kysely';

/**
 * Runtime protection (issue 19): Vigil as Copilot Studio's external threat-detection provider.
 * - `protection_endpoints`: one per integration; `id` is the random, URL-safe public id in the endpoint's base URL
 *   (`{apiUrl}/protection/{id}`); `app_id` the customer's Entra application whose tokens may call it (null until the
 *   administrator has created it: the base URL comes first, as the application's ID URI), `audiences` a JSON array of
 *   accepted `aud` values (empty: the defaults); the set-up doctor's facts (first validate, first/last analysis, authentication
 *   failures with the last reason and time — never a token).
 * - `protection_policies`: the organization's policies, optionally narrowed to an integration, an environment and an
 *   agent; `policy` is the JSON text of the editable fields (mode, detectors, allow, deadlineMs, onTimeout).
 * - `agent_steps`: every `analyze-tool-execution` call answered: who, which tool, what was decided and why, the
 *   detectors' redacted evidence, and the time spent. Never the request body, never the bearer token.
 * Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('protection_endpoints')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().unique().references('integrations.id').onDelete('cascade'))
    .addColumn('app_id', 'varchar(36)')
    .addColumn('audiences', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('validated_at', 'varchar(32)')
    .addColumn('first_analysis_at', 'varchar(32)')
    .addColumn('last_analysis_at', 'varchar(32)')
    .addColumn('auth_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_auth_failure_at', 'varchar(32)')
    .addColumn('last_auth_failure_reason', 'varchar(32)')
    .execute();
  await db.schema.createIndex('protection_endpoints_organization').on('protection_endpoints').column('organization_id').execute();
  await db.schema
    .createTable('protection_policies')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('integration_id', 'varchar(64)')
    .addColumn('environment_id', 'varchar(64)')
    .addColumn('agent_id', 'varchar(64)')
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'varchar(320)')
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protection_policies_organization').on('protection_policies').column('organization_id').execute();
  await db.schema
    .createTable('agent_steps')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('received_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('correlation_id', 'varchar(128)')
    .addColumn('environment_id', 'varchar(64)')
    .addColumn('agent_id', 'varchar(64)')
    .addColumn('agent_name', 'text')
    .addColumn('user_id', 'varchar(128)')
    .addColumn('conversation_id', 'varchar(256)')
    .addColumn('message_id', 'varchar(256)')
    .addColumn('plan_id', 'varchar(256)')
    .addColumn('plan_step_id', 'varchar(256)')
    .addColumn('channel_id', 'varchar(128)')
    .addColumn('tool_id', 'text')
    .addColumn('tool_name', 'text')
    .addColumn('tool_type', 'varchar(128)')
    .addColumn('block_action', 'integer', (c) => c.notNull())
    .addColumn('would_block', 'integer', (c) => c.notNull())
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('reason_code', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'varchar(64)')
    .addColumn('verdicts', 'text', (c) => c.notNull())
    .addColumn('policy_ids', 'text', (c) => c.notNull())
    .addColumn('latency_ms', 'double precision', (c) => c.notNull())
    .addColumn('engine_ms', 'double precision', (c) => c.notNull())
    .addColumn('timed_out', 'integer', (c) => c.notNull())
    .addColumn('client_ip', 'varchar(64)')
    .execute();
  await db.schema.createIndex('agent_steps_org_time').on('agent_steps').columns(['organization_id', 'received_at']).execute();
  await db.schema.createIndex('agent_steps_conversation').on('agent_steps').columns(['integration_id', 'conversation_id', 'received_at']).execute();
  await db.schema.createIndex('agent_steps_agent').on('agent_steps').columns(['integration_id', 'agent_id', 'received_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('agent_steps').execute();
  await db.schema.dropTable('protection_policies').execute();
  await db.schema.dropTable('protection_endpoints').execute();
}
