import type { Kysely } from 'kysely';

/**
 * Copilot Studio conversation transcripts (issue 20): the Dataverse `conversationtranscript` rows of every environment,
 * one row per turn (a user message, a bot reply, a tool call of the orchestrator's plan), beside the runtime-protection
 * steps of `agent_steps` (migration 0014) and correlated with them by conversation.
 * - `transcript_turns`: an inventory table of the `conversationTranscripts` stream (the usual `raw` and run stamps);
 *   key (integration, environment, `id` = `{conversationtranscriptid}:{activity index}`). `text` is the turn's text with
 *   every secret and personal-data finding masked (content inspection), never the text as sent; `raw` the activity's
 *   shape without any text. `secrets` / `personal` count the inspection's findings, `finding_types` lists their types
 *   (JSON array). The markers of prompt injection and jailbreak (`injection`, `jailbreak`: confidence 0–1; `markers`:
 *   JSON of the patterns seen with redacted excerpts) are set once, by the post-processing that also raises the
 *   transcript alerts, which stamps `evaluated_at` (null: not evaluated yet).
 * Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('transcript_turns')
    .addColumn('integration_id', 'varchar(64)', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('environment_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('id', 'varchar(128)', (c) => c.notNull())
    .addColumn('transcript_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('conversation_id', 'varchar(256)')
    .addColumn('agent_id', 'varchar(64)')
    .addColumn('agent_name', 'text')
    .addColumn('user_id', 'varchar(128)')
    .addColumn('channel_id', 'varchar(64)')
    .addColumn('turn_at', 'varchar(32)')
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('tool_name', 'text')
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('text_length', 'integer', (c) => c.notNull())
    .addColumn('secrets', 'integer', (c) => c.notNull())
    .addColumn('personal', 'integer', (c) => c.notNull())
    .addColumn('finding_types', 'text', (c) => c.notNull())
    .addColumn('transcript_modified_on', 'varchar(32)')
    .addColumn('injection', 'double precision')
    .addColumn('jailbreak', 'double precision')
    .addColumn('markers', 'text')
    .addColumn('evaluated_at', 'varchar(32)')
    .addColumn('raw', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('last_seen_run', 'varchar(64)', (c) => c.notNull())
    .addColumn('deleted_at', 'varchar(32)')
    .addPrimaryKeyConstraint('transcript_turns_pk', ['integration_id', 'environment_id', 'id'])
    .execute();
  await db.schema.createIndex('transcript_turns_conversation').on('transcript_turns').columns(['integration_id', 'conversation_id', 'turn_at']).execute();
  await db.schema.createIndex('transcript_turns_evaluated').on('transcript_turns').columns(['integration_id', 'evaluated_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('transcript_turns').execute();
}
