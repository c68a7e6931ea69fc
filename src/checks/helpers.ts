import type { AgentsTable } from '../store/schema.ts';
import type { EstateAttrs, EstateStreamName } from '../sources/index.ts';
import type { CheckContext, CheckResult, EstateRow, ResourceType } from './types.ts';

/**
 * The tenant-wide "not evaluated" result when one of `streams` did not run (a missing permission, a failed parent,
 * never collected), giving the first gap's reason; null when every stream ran.
 */
export function streamsNotEvaluated(ctx: CheckContext, streams: string[]): CheckResult[] | null {
  for (const stream of streams) {
    const gap = ctx.coverage.streamGap(stream);
    if (gap)
      return [
        {
          resourceType: 'tenant',
          resourceId: ctx.tenantId,
          resourceName: null,
          status: 'not_evaluated',
          reason: gap.message,
          detail: { code: gap.code, stream },
        },
      ];
  }
  return null;
}

/**
 * Evaluates a per-agent predicate (null = leave the agent out) over every collected agent, and reports `not_evaluated` — never a pass — where
 * agents could not be read: the whole tenant when the environments or agents stream did not run, an environment
 * when its Dataverse could not be read.
 */
export function evaluateAgents(
  ctx: CheckContext,
  evaluate: (agent: AgentsTable) => Omit<CheckResult, 'resourceType' | 'resourceId' | 'resourceName'> | null,
): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments', 'agents']);
  if (notEvaluated) return notEvaluated;
  const results: CheckResult[] = [];
  for (const env of ctx.inventory.environments) {
    if (!env.dataverse_url) continue;
    const gap = ctx.coverage.sliceGap('agents', env.id);
    if (gap)
      results.push({
        resourceType: 'environment',
        resourceId: env.id,
        resourceName: env.display_name,
        status: 'not_evaluated',
        reason: gap.message,
        detail: { code: gap.code },
      });
  }
  for (const agent of ctx.inventory.agents) {
    const v = evaluate(agent);
    if (v)
      results.push({
        resourceType: 'agent',
        resourceId: agent.id,
        resourceName: agent.name,
        ...v,
        detail: { ...(v.detail ?? {}), environmentId: agent.environment_id },
      });
  }
  return results;
}

/** Authentication modes of a Copilot Studio agent (Dataverse `bot.authenticationmode`). */
export const AUTHENTICATION_MODE = { Unspecified: 0, None: 1, Integrated: 2, CustomAzureAD: 3, GenericOAuth2: 4 } as const;

/**
 * Access control policies of a Copilot Studio agent (Dataverse `bot.accesscontrolpolicy`, "who can chat with it"):
 * 0 Any (any signed-in user of the organisation; anyone without authentication), 1 Copilot (agent) readers, 2 Group
 * membership, 3 Any (multitenant): users signed in to ANY Microsoft Entra tenant — broader than 0.
 * Sources: Dataverse bot table reference (power-apps/developer/data-platform/reference/entities/bot, values 0–2);
 * Microsoft Defender "Protect your AI agents" and the Azure Monitor `AIAgentsInfo` table (AccessControlPolicy: Any,
 * Copilot readers, Group membership, Any (multitenant)); Maester MT.1113 fails "Any" and "Any multitenant" alike.
 */
export const ACCESS_CONTROL_POLICY = { Any: 0, CopilotReaders: 1, GroupMembership: 2, AnyMultitenant: 3 } as const;

/** Whether an access control policy lets everyone of the organisation, or of every Entra tenant, chat (0 or 3). */
export function isBroadAccess(policy: number | null): boolean {
  return policy === ACCESS_CONTROL_POLICY.Any || policy === ACCESS_CONTROL_POLICY.AnyMultitenant;
}

/** Whether an access control policy value is one of the known choices (0–3). */
export function isKnownAccessPolicy(policy: number): boolean {
  return (Object.values(ACCESS_CONTROL_POLICY) as number[]).includes(policy);
}

/** What a per-object predicate returns: the status and why. */
export type Verdict = Omit<CheckResult, 'resourceType' | 'resourceId' | 'resourceName'>;

/**
 * The "not evaluated" verdict of one resource whose slice `sliceKey` of `stream` errored (e.g. 403 on an environment's
 * Dataverse or an account's diagnostic settings): reason `<what> could not be read: <the slice's error message>`,
 * detail `{ code }`. Null when the slice was read.
 */
export function sliceGapVerdict(ctx: CheckContext, stream: string, sliceKey: string, what: string): Verdict | null {
  const gap = ctx.coverage.sliceGap(stream, sliceKey);
  return gap ? { status: 'not_evaluated', reason: `${what} could not be read: ${gap.message}`, detail: { code: gap.code } } : null;
}

/**
 * One "not evaluated" result per errored slice of `stream` (resource `<tenant>/<stream>/<slice>`, reason the slice's
 * error message, detail `{ code, stream, slice }`): the resources of that slice were never read.
 */
function sliceGapResults(ctx: CheckContext, stream: EstateStreamName): CheckResult[] {
  return ctx.coverage.sliceGaps(stream).map((g) => ({
    resourceType: 'tenant' as const,
    resourceId: `${ctx.tenantId}/${stream}/${g.sliceKey}`,
    resourceName: g.sliceKey,
    status: 'not_evaluated' as const,
    reason: g.message,
    detail: { code: g.code, stream, slice: g.sliceKey },
  }));
}

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
  const notEvaluated = streamsNotEvaluated(ctx, [...(options.requires ?? []), stream]);
  if (notEvaluated) return notEvaluated;
  const results: CheckResult[] = sliceGapResults(ctx, stream);
  for (const row of ctx.inventory.estate(stream)) {
    const v = evaluate(row);
    if (v) results.push({ resourceType, resourceId: row.id, resourceName: row.name, ...v, detail: { ...(v.detail ?? {}), parent: row.sliceKey } });
  }
  return results;
}

/** One tenant-wide verdict (tenant settings, coverage): `not_evaluated` with the gap when a stream it reads did not run. */
export function evaluateTenant(ctx: CheckContext, streams: string[], evaluate: () => Verdict): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, streams);
  if (notEvaluated) return notEvaluated;
  return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, ...evaluate() }];
}

/**
 * Evaluates each collected agent together with its components (stream `agentComponents`, matched on `botId`) and its
 * settings (stream `agentSettings`, id = botid). Not evaluated — never a pass — for the tenant when components were
 * not collected, and for an environment whose components could not be read (its agents are then left out).
 */
export function evaluateAgentComponents(
  ctx: CheckContext,
  evaluate: (agent: AgentsTable, components: EstateRow<EstateAttrs['agentComponents']>[], settings: EstateAttrs['agentSettings'] | null) => Verdict,
): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, ['agentComponents']);
  if (notEvaluated) return notEvaluated;
  const byBot = new Map<string, EstateRow<EstateAttrs['agentComponents']>[]>();
  for (const c of ctx.inventory.estate('agentComponents')) {
    if (!c.attrs.botId) continue;
    const list = byBot.get(c.attrs.botId);
    if (list) list.push(c);
    else byBot.set(c.attrs.botId, [c]);
  }
  const settings = new Map(ctx.inventory.estate('agentSettings').map((s) => [s.id, s.attrs]));
  const unreadable = new Set<string>();
  const results: CheckResult[] = [];
  for (const env of ctx.inventory.environments) {
    const g = env.dataverse_url ? ctx.coverage.sliceGap('agentComponents', env.id) : null;
    if (g && !ctx.coverage.sliceGap('agents', env.id)) {
      unreadable.add(env.id);
      results.push({
        resourceType: 'environment',
        resourceId: env.id,
        resourceName: env.display_name,
        status: 'not_evaluated',
        reason: `Agent components could not be read: ${g.message}`,
        detail: { code: g.code },
      });
    }
  }
  results.push(
    ...evaluateAgents(ctx, (agent) =>
      unreadable.has(agent.environment_id) ? null : evaluate(agent, byBot.get(agent.id) ?? [], settings.get(agent.id) ?? null),
    ),
  );
  return results;
}

/**
 * Folds the live objects of a large estate stream, read page by page, into groups by a key (a user id, a Teams app
 * id) and reports one verdict per group that `evaluate` flags; when none is flagged, one tenant-wide pass. Memory
 * holds the groups' folded state, never the stream (Copilot interaction history, Teams installations). Not evaluated
 * for the tenant when the stream (or one it `requires`) did not run, and per unreadable slice. The check declares the
 * stream in its metadata's `paged`.
 *
 * @param fold the group's state after one more row (`state` undefined for the group's first row).
 * @param evaluate the verdict for a group, or null when the group raises nothing.
 */
export async function evaluateGrouped<S extends EstateStreamName, G>(
  ctx: CheckContext,
  stream: S,
  resourceType: ResourceType,
  key: (row: EstateRow<EstateAttrs[S]>) => string | null,
  fold: (state: G | undefined, row: EstateRow<EstateAttrs[S]>) => G,
  evaluate: (key: string, state: G) => (Verdict & { name?: string | null }) | null,
  options: { requires?: string[]; passReason?: string } = {},
): Promise<CheckResult[]> {
  const notEvaluated = streamsNotEvaluated(ctx, [...(options.requires ?? []), stream]);
  if (notEvaluated) return notEvaluated;
  const groups = new Map<string, G>();
  for await (const page of ctx.inventory.estatePages(stream)) {
    for (const row of page) {
      const k = key(row);
      if (k !== null) groups.set(k, fold(groups.get(k), row));
    }
  }
  const results: CheckResult[] = sliceGapResults(ctx, stream);
  let flagged = 0;
  for (const [k, state] of groups) {
    const v = evaluate(k, state);
    if (!v) continue;
    flagged++;
    const { name, ...verdict } = v;
    results.push({ resourceType, resourceId: k, resourceName: name ?? null, ...verdict });
  }
  if (flagged === 0) results.push({ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'pass', reason: options.passReason ?? null });
  return results;
}

/** The directory-user verdict on an owner: missing (gone), disabled, or active. */
export function ownerVerdict(ctx: CheckContext, objectId: string | null, label: string): Verdict {
  if (!objectId) return { status: 'not_evaluated', reason: `The ${label} carries no Microsoft Entra object id.` };
  const user = ctx.inventory.directoryUsers.get(objectId);
  if (!user) return { status: 'fail', reason: `The ${label} (${objectId}) no longer exists in Microsoft Entra ID.`, detail: { ownerObjectId: objectId } };
  if (user.account_enabled === 0)
    return {
      status: 'fail',
      reason: `The ${label} ${user.user_principal_name ?? user.id} is disabled in Microsoft Entra ID.`,
      detail: { ownerObjectId: objectId },
    };
  return { status: 'pass', reason: null, detail: { ownerObjectId: objectId } };
}

/** The guest verdict on an owner: fails when the directory user is a guest (`userType` Guest or an `#EXT#` name). */
export function guestVerdict(ctx: CheckContext, objectId: string | null, label: string): Verdict {
  const user = objectId ? ctx.inventory.directoryUsers.get(objectId) : undefined;
  if (!objectId) return { status: 'not_evaluated', reason: `The ${label} carries no Microsoft Entra object id.` };
  if (user && (user.user_type === 'Guest' || (user.user_principal_name ?? '').toLowerCase().includes('#ext#'))) {
    return { status: 'fail', reason: `The ${label} is guest ${user.user_principal_name ?? user.id}.`, detail: { ownerObjectId: objectId } };
  }
  return { status: 'pass', reason: null, detail: { ownerObjectId: objectId } };
}
