import { evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents owned by a guest: the owner's Dataverse systemuser maps (`azureactivedirectoryobjectid`) to a directory
 * user whose `userType` is `Guest`. Not evaluated when the directory users were not collected; an owner that is a team
 * or an unmapped systemuser passes (the owner check reports missing owners).
 */
export const check: CheckFunction = (ctx) => {
  const gap = ctx.coverage.streamGap('users') ?? ctx.coverage.streamGap('dataverseUsers');
  if (gap) return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'not_evaluated', reason: gap.message, detail: { code: gap.code } }];
  return evaluateAgents(ctx, (agent) => {
    const owner = agent.owner_id ? ctx.inventory.dataverseUsers.get(`${agent.environment_id}/${agent.owner_id}`) : undefined;
    const user = owner?.aad_object_id ? ctx.inventory.directoryUsers.get(owner.aad_object_id) : undefined;
    return user?.user_type === 'Guest'
      ? { status: 'fail', reason: `Owned by guest ${user.user_principal_name ?? user.id}.`, detail: { ownerObjectId: user.id } }
      : { status: 'pass', reason: null };
  });
};
