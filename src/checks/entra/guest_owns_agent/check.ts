import { evaluateAgents, guestVerdict, streamsNotEvaluated } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents owned by a guest: the owner's Dataverse systemuser maps (`azureactivedirectoryobjectid`) to a directory
 * user whose `userType` is `Guest`. Not evaluated when the directory users were not collected; an owner that is a team
 * or an unmapped systemuser passes (the owner check reports missing owners).
 */
export const check: CheckFunction = (ctx) => {
  const notEvaluated = streamsNotEvaluated(ctx, ['users', 'dataverseUsers']);
  if (notEvaluated) return notEvaluated;
  return evaluateAgents(ctx, (agent) => {
    const owner = agent.owner_id ? ctx.inventory.dataverseUsers.get(`${agent.environment_id}/${agent.owner_id}`) : undefined;
    return owner?.aad_object_id ? guestVerdict(ctx, owner.aad_object_id, 'owner') : { status: 'pass', reason: null };
  });
};
