import { evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Follows the agent's owner (`_ownerid_value`) to the environment's Dataverse user and from there
 * (`azureactivedirectoryobjectid`) to the directory user. Fails when the owner no longer exists in Dataverse or in
 * the directory, or is disabled in either. Agents owned by a team or by a non-person user pass.
 */
export const check: CheckFunction = (ctx) => {
  const usersGap = ctx.coverage.streamGap('users');
  return evaluateAgents(ctx, (agent) => {
    if (!agent.owner_id) return { status: 'not_evaluated', reason: 'The agent record has no owner.' };
    const raw = JSON.parse(agent.raw) as Record<string, unknown>;
    if (raw.owneridtype === 'team') return { status: 'pass', reason: 'Owned by a team.' };
    const dvGap = ctx.coverage.sliceGap('dataverseUsers', agent.environment_id);
    if (dvGap) return { status: 'not_evaluated', reason: `Dataverse users could not be read: ${dvGap.message}` };
    const owner = ctx.inventory.dataverseUsers.get(`${agent.environment_id}/${agent.owner_id}`);
    if (!owner) return { status: 'fail', reason: 'The owner no longer exists in the environment.' };
    if (owner.is_disabled === 1) return { status: 'fail', reason: `The owner ${owner.full_name ?? owner.id} is disabled in the environment.` };
    if (!owner.aad_object_id) return { status: 'pass', reason: 'Owned by a user without a directory identity (system or application user).' };
    if (usersGap) return { status: 'not_evaluated', reason: `Directory users could not be read: ${usersGap.message}` };
    const person = ctx.inventory.directoryUsers.get(owner.aad_object_id);
    if (!person) return { status: 'fail', reason: `The owner ${owner.full_name ?? owner.aad_object_id} no longer exists in Microsoft Entra ID.` };
    if (person.account_enabled === 0)
      return { status: 'fail', reason: `The owner ${person.user_principal_name ?? person.id} is disabled in Microsoft Entra ID.` };
    return { status: 'pass', reason: null };
  });
};
