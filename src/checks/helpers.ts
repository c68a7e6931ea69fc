import type { AgentsTable } from '../store/schema.ts';
import type { CheckContext, CheckResult } from './types.ts';

/**
 * Evaluates a per-agent predicate over every collected agent, and reports `not_evaluated` — never a pass — where
 * agents could not be read: the whole tenant when the environments or agents stream did not run, an environment
 * when its Dataverse could not be read.
 */
export function evaluateAgents(ctx: CheckContext, evaluate: (agent: AgentsTable) => Omit<CheckResult, 'resourceType' | 'resourceId' | 'resourceName'>): CheckResult[] {
  const results: CheckResult[] = [];
  const streamGap = ctx.coverage.streamGap('environments') ?? ctx.coverage.streamGap('agents');
  if (streamGap) {
    results.push({ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'not_evaluated', reason: streamGap.message, detail: { code: streamGap.code } });
    return results;
  }
  for (const env of ctx.inventory.environments) {
    if (!env.dataverse_url) continue;
    const gap = ctx.coverage.sliceGap('agents', env.id);
    if (gap) results.push({ resourceType: 'environment', resourceId: env.id, resourceName: env.display_name, status: 'not_evaluated', reason: gap.message, detail: { code: gap.code } });
  }
  for (const agent of ctx.inventory.agents) {
    results.push({ resourceType: 'agent', resourceId: agent.id, resourceName: agent.name, ...evaluate(agent), detail: { environmentId: agent.environment_id } });
  }
  return results;
}

/** Authentication modes of a Copilot Studio agent (Dataverse `bot.authenticationmode`). */
export const AUTHENTICATION_MODE = { Unspecified: 0, None: 1, Integrated: 2, CustomAzureAD: 3, GenericOAuth2: 4 } as const;

/** Access control policies of a Copilot Studio agent (Dataverse `bot.accesscontrolpolicy`). */
export const ACCESS_CONTROL_POLICY = { Any: 0, CopilotReaders: 1, GroupMembership: 2 } as const;
