import type { AgentsTable } from '../store/schema.ts';
import type { EstateAttrs, EstateStreamName } from '../core/inventory.ts';
import type { CheckContext, CheckResult, EstateRow, ResourceType } from './types.ts';

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

/** What a per-object predicate returns: the status and why. */
export type Verdict = Omit<CheckResult, 'resourceType' | 'resourceId' | 'resourceName'>;

/**
 * Evaluates a per-object predicate over the live objects of an estate stream, and reports `not_evaluated` — never a
 * pass — where the objects could not be read: the whole tenant when the stream (or one it depends on, `requires`)
 * did not run, one result per unreadable slice (an environment, a user batch) otherwise.
 *
 * @param resourceType the kind of resource each object is reported as.
 * @param evaluate the verdict for one object, or null to leave the object out (not in the check's scope).
 */
export function evaluateEstate<S extends EstateStreamName>(
  ctx: CheckContext,
  stream: S,
  resourceType: ResourceType,
  evaluate: (row: EstateRow<EstateAttrs[S]>) => Verdict | null,
  options: { requires?: string[] } = {},
): CheckResult[] {
  const gap = [...(options.requires ?? []), stream].map((s) => ctx.coverage.streamGap(s)).find((g) => g !== null);
  if (gap) return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'not_evaluated', reason: gap.message, detail: { code: gap.code, stream } }];
  const results: CheckResult[] = [];
  for (const g of ctx.coverage.sliceGaps(stream)) {
    results.push({ resourceType: 'tenant', resourceId: `${ctx.tenantId}/${stream}/${g.sliceKey}`, resourceName: g.sliceKey, status: 'not_evaluated', reason: g.message, detail: { code: g.code, stream, slice: g.sliceKey } });
  }
  for (const row of ctx.inventory.estate(stream)) {
    const v = evaluate(row);
    if (v) results.push({ resourceType, resourceId: row.id, resourceName: row.name, ...v, detail: { ...(v.detail ?? {}), parent: row.sliceKey } });
  }
  return results;
}

/** One tenant-wide verdict (tenant settings, coverage): `not_evaluated` with the gap when a stream it reads did not run. */
export function evaluateTenant(ctx: CheckContext, streams: string[], evaluate: () => Verdict): CheckResult[] {
  const gap = streams.map((s) => ctx.coverage.streamGap(s)).find((g) => g !== null);
  if (gap) return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'not_evaluated', reason: gap.message, detail: { code: gap.code } }];
  return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, ...evaluate() }];
}
