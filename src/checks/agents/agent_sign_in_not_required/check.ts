import { AUTHENTICATION_MODE, evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents that have authentication configured (`authenticationmode` other than 1 None) but do not require
 * sign-in: `authenticationtrigger` 0 "As Needed" (1 = "Always"). Agents without authentication are left out
 * (agent_no_authentication reports them); not evaluated when the trigger or mode is missing. Values as Maester's
 * `Get-MtAIAgentInfo` maps them (authenticationTrigger 0 As Needed, 1 Always) and the Dataverse bot table.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) => {
    if (agent.authentication_mode === AUTHENTICATION_MODE.None) return null;
    if (agent.authentication_mode === null) return { status: 'not_evaluated', reason: 'The agent record carries no authentication mode.' };
    if (agent.authentication_trigger === null) return { status: 'not_evaluated', reason: 'The agent record carries no authentication trigger.' };
    if (agent.authentication_trigger === 0)
      return {
        status: 'fail',
        reason:
          "Authentication is configured but 'Require users to sign in' is off (trigger 'As Needed'): users chat without signing in until a topic asks them to.",
        detail: { authenticationMode: agent.authentication_mode, authenticationTrigger: 0 },
      };
    return { status: 'pass', reason: null, detail: { authenticationMode: agent.authentication_mode, authenticationTrigger: agent.authentication_trigger } };
  });
