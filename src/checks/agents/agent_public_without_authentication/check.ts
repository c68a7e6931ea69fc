import { ACCESS_CONTROL_POLICY, AUTHENTICATION_MODE, evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails agents with `accesscontrolpolicy` 0 (Any) and `authenticationmode` 1 (None). */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) => {
    if (agent.authentication_mode === null || agent.access_control_policy === null) {
      return { status: 'not_evaluated', reason: 'The agent record carries no authentication mode or access control policy.' };
    }
    return agent.authentication_mode === AUTHENTICATION_MODE.None && agent.access_control_policy === ACCESS_CONTROL_POLICY.Any
      ? { status: 'fail', reason: "Access control policy is 'Any' and authentication is None." }
      : { status: 'pass', reason: null };
  });
