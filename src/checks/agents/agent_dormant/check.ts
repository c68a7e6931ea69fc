import { evaluateAgents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Dormancy threshold, in days. */
export const DORMANT_DAYS = 180;

/** Fails agents whose latest of `modifiedon` and `publishedon` is more than 180 days before the evaluation time. */
export const check: CheckFunction = (ctx) =>
  evaluateAgents(ctx, (agent) => {
    const times = [agent.modified_on, agent.published_on]
      .filter((t): t is string => !!t)
      .map((t) => Date.parse(t))
      .filter((t) => !Number.isNaN(t));
    if (times.length === 0) return { status: 'not_evaluated', reason: 'The agent record has no modification or publication date.' };
    const last = Math.max(...times);
    const days = Math.floor((ctx.now.getTime() - last) / 86_400_000);
    return days > DORMANT_DAYS
      ? { status: 'fail', reason: `Last changed or published ${days} days ago (${new Date(last).toISOString().slice(0, 10)}).` }
      : { status: 'pass', reason: null };
  });
