import type { Executor } from '../db.ts';
import type { ContainmentActionsTable } from '../schema.ts';

/**
 * Containment's storage (migration 0015): the quarantine and release actions attempted on Copilot Studio agents, with
 * their authors and outcomes. SQL only; the use case lives in src/protection/containment.ts.
 */

export type ContainmentActionRow = ContainmentActionsTable;

/** Records one action. */
export async function insertContainmentAction(db: Executor, row: ContainmentActionRow): Promise<void> {
  await db.insertInto('containment_actions').values(row).execute();
}

/**
 * The actions of an integration, newest first, optionally for one agent (bot id), at most `limit` (default 100).
 */
export async function listContainmentActions(
  db: Executor,
  query: { integrationId: string; agentId?: string; limit?: number },
): Promise<ContainmentActionRow[]> {
  let q = db.selectFrom('containment_actions').selectAll().where('integration_id', '=', query.integrationId);
  if (query.agentId !== undefined) q = q.where('agent_id', '=', query.agentId);
  return q
    .orderBy('requested_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit ?? 100)
    .execute();
}

/** The agent and environment of a recorded agent step of the integration, or undefined. */
export async function agentOfStep(
  db: Executor,
  integrationId: string,
  stepId: string,
): Promise<{ agent_id: string | null; environment_id: string | null } | undefined> {
  return db
    .selectFrom('agent_steps')
    .select(['agent_id', 'environment_id'])
    .where('integration_id', '=', integrationId)
    .where('id', '=', stepId)
    .executeTakeFirst();
}

/** The environments where the integration's inventory holds a live agent (bot) with this id (normally one). */
export async function environmentsOfAgent(db: Executor, integrationId: string, agentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('agents')
    .select('environment_id')
    .distinct()
    .where('integration_id', '=', integrationId)
    .where('id', '=', agentId)
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((r) => r.environment_id);
}
