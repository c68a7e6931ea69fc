import { ACCESS_CONTROL_POLICY, evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents whose `accesscontrolpolicy` is 3, "Any (multitenant)": users signed in to ANY Microsoft Entra tenant
 * can chat with the agent, not only the organisation's. Passes every other known value (0 "Any" is reported by
 * agent_shared_with_everyone); not evaluated when the value is missing. Values: {@link ACCESS_CONTROL_POLICY}.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) => {
    const policy = agent.access_control_policy;
    if (policy === null) return { status: 'not_evaluated', reason: 'The agent record carries no access control policy.' };
    if (policy === ACCESS_CONTROL_POLICY.AnyMultitenant)
      return {
        status: 'fail',
        reason:
          "Access control policy is 'Any (multitenant)': users signed in to any Microsoft Entra tenant — outside the organisation too — can use the agent.",
        detail: { accessControlPolicy: policy },
      };
    return { status: 'pass', reason: null, detail: { accessControlPolicy: policy } };
  });
