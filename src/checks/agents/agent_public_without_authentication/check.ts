import { AUTHENTICATION_MODE, evaluateAgents, isBroadAccess, isKnownAccessPolicy } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents with `authenticationmode` 1 (None) whose `accesscontrolpolicy` is 0 (Any) or 3 (Any (multitenant)):
 * nobody signs in and nothing restricts who chats. Not evaluated when either value is missing, or when authentication
 * is None and the access control policy is not a known choice.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) => {
    if (agent.authentication_mode === null || agent.access_control_policy === null) {
      return { status: 'not_evaluated', reason: 'The agent record carries no authentication mode or access control policy.' };
    }
    if (agent.authentication_mode !== AUTHENTICATION_MODE.None) return { status: 'pass', reason: null };
    if (isBroadAccess(agent.access_control_policy)) {
      return {
        status: 'fail',
        reason: `Access control policy is '${agent.access_control_policy === 3 ? 'Any (multitenant)' : 'Any'}' and authentication is None.`,
      };
    }
    if (!isKnownAccessPolicy(agent.access_control_policy))
      return { status: 'not_evaluated', reason: `Authentication is None and the access control policy value ${agent.access_control_policy} is unknown.` };
    return { status: 'pass', reason: null };
  });
