import { ACCESS_CONTROL_POLICY, evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails agents whose `accesscontrolpolicy` is 0 (Any): everyone in the organisation (or anyone, without authentication) can chat with it. */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) =>
    agent.access_control_policy === null
      ? { status: 'not_evaluated', reason: 'The agent record carries no access control policy.' }
      : agent.access_control_policy === ACCESS_CONTROL_POLICY.Any
        ? { status: 'fail', reason: "Access control policy is 'Any': every user who reaches a channel can use the agent." }
        : { status: 'pass', reason: null },
  );
