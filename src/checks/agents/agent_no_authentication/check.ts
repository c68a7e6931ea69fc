import { AUTHENTICATION_MODE, evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails agents whose `authenticationmode` is 1 (None). */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) =>
    agent.authentication_mode === AUTHENTICATION_MODE.None
      ? { status: 'fail', reason: 'Authentication is set to None: anyone who reaches the agent can use it.' }
      : agent.authentication_mode === null
        ? { status: 'not_evaluated', reason: 'The agent record carries no authentication mode.' }
        : { status: 'pass', reason: null },
  );
