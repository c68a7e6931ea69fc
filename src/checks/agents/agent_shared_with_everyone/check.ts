import { ACCESS_CONTROL_POLICY, evaluateAgents, isKnownAccessPolicy } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents whose `accesscontrolpolicy` is 0 (Any: every user of the organisation — or anyone, without
 * authentication — can chat with it) or 3 (Any (multitenant): users of ANY Microsoft Entra tenant can, which is
 * broader still). Passes 1 (Copilot readers) and 2 (Group membership); not evaluated when the value is missing or
 * not a known choice. Values: see {@link ACCESS_CONTROL_POLICY}.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) => {
    const policy = agent.access_control_policy;
    if (policy === null) return { status: 'not_evaluated', reason: 'The agent record carries no access control policy.' };
    if (policy === ACCESS_CONTROL_POLICY.AnyMultitenant) {
      return {
        status: 'fail',
        reason: "Access control policy is 'Any (multitenant)': users signed in to any Microsoft Entra tenant, not only this organisation's, can use the agent.",
        detail: { accessControlPolicy: policy, reach: 'any-tenant' },
      };
    }
    if (policy === ACCESS_CONTROL_POLICY.Any)
      return {
        status: 'fail',
        reason: "Access control policy is 'Any': every user who reaches a channel can use the agent.",
        detail: { accessControlPolicy: policy, reach: 'organization' },
      };
    if (!isKnownAccessPolicy(policy))
      return { status: 'not_evaluated', reason: `Unknown access control policy value ${policy}.`, detail: { accessControlPolicy: policy } };
    return { status: 'pass', reason: null };
  });
