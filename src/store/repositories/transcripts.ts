import type { Executor } from '../db.ts';
import type { TranscriptTurnsTable } from '../schema.ts';

/**
 * Copilot Studio conversation transcripts' storage (migration 0017, `transcript_turns`): the reads of the transcript
 * post-processing (turns not evaluated yet), its write-back of markers, and the reads of the conversation views. The
 * rows themselves are written by the sync engine (`upsertRecords`, mapping in `stream-tables.ts`). SQL only; the use
 * case lives in src/protection/transcripts.ts.
 */

export type TranscriptTurnRow = TranscriptTurnsTable;

/** Turns of an integration not evaluated yet (`evaluated_at` null), in key order, at most `limit`. */
export async function pendingTurns(db: Executor, integrationId: string, limit: number): Promise<TranscriptTurnRow[]> {
  return db
    .selectFrom('transcript_turns')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('evaluated_at', 'is', null)
    .orderBy('environment_id')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The markers found in one turn, written back with the evaluation time. */
export interface TurnEvaluation {
  environmentId: string;
  id: string;
  /** Confidences 0–1. */
  injection: number;
  jailbreak: number;
  /** JSON text of the markers (pattern names and redacted evidence), or null when none. */
  markers: string | null;
}

/** Stores the markers of evaluated turns and stamps them evaluated at `at` (ISO 8601 UTC). */
export async function saveTurnEvaluations(db: Executor, integrationId: string, evaluations: readonly TurnEvaluation[], at: string): Promise<void> {
  for (const e of evaluations) {
    await db
      .updateTable('transcript_turns')
      .set({ injection: e.injection, jailbreak: e.jailbreak, markers: e.markers, evaluated_at: at })
      .where('integration_id', '=', integrationId)
      .where('environment_id', '=', e.environmentId)
      .where('id', '=', e.id)
      .execute();
  }
}

/** A conversation's transcript turns in the order they happened (oldest first), at most `limit` (default 1,000). */
export async function conversationTurns(db: Executor, integrationId: string, conversationId: string, limit = 1000): Promise<TranscriptTurnRow[]> {
  return db
    .selectFrom('transcript_turns')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('conversation_id', '=', conversationId)
    .where('deleted_at', 'is', null)
    .orderBy('turn_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** One conversation of the collected transcripts, summarised. */
export interface TranscriptConversationRow {
  conversation_id: string | null;
  environment_id: string;
  agent_id: string | null;
  agent_name: string | null;
  user_id: string | null;
  first_at: string | null;
  last_at: string | null;
  turns: number | string;
  secrets: number | string | null;
  personal: number | string | null;
  injection: number | string | null;
  jailbreak: number | string | null;
}

/** The conversations of an integration's transcripts, latest turn first, at most `limit`. */
export async function listTranscriptConversations(db: Executor, integrationId: string, limit: number): Promise<TranscriptConversationRow[]> {
  return db
    .selectFrom('transcript_turns')
    .select((eb) => [
      'conversation_id',
      'environment_id',
      eb.fn.max('agent_id').as('agent_id'),
      eb.fn.max('agent_name').as('agent_name'),
      eb.fn.max('user_id').as('user_id'),
      eb.fn.min('turn_at').as('first_at'),
      eb.fn.max('turn_at').as('last_at'),
      eb.fn.countAll<number | string>().as('turns'),
      eb.fn.sum<number | string | null>('secrets').as('secrets'),
      eb.fn.sum<number | string | null>('personal').as('personal'),
      eb.fn.max('injection').as('injection'),
      eb.fn.max('jailbreak').as('jailbreak'),
    ])
    .where('integration_id', '=', integrationId)
    .where('deleted_at', 'is', null)
    .groupBy(['conversation_id', 'environment_id'])
    .orderBy('last_at', 'desc')
    .limit(limit)
    .execute() as Promise<TranscriptConversationRow[]>;
}
