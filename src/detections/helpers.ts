import type { AuditEvent } from '../core/audit.ts';
import { powerPlatformAdminActivity, type PowerPlatformAdminActivity } from '../sources/managementActivity/views.ts';
import type { AgentComponentAttrs } from '../sources/dataverse/streams/agentComponents.ts';
import { SEVERITIES } from '../core/types.ts';
import { openFindingsOnResources } from '../store/repositories/findings.ts';
import type { Executor } from '../store/db.ts';
import type { DetectionContext, OpenFinding } from './types.ts';

/** Helpers shared by detections. */

/** True when the user is a guest: UserType 10, or an Entra guest UPN (`…#EXT#@…`). */
export function isGuest(e: AuditEvent): boolean {
  return e.userType === 10 || /#EXT#/i.test(e.userId ?? '');
}

/**
 * The agent a Copilot Studio record (RecordType 256, resource type `Bot`) is about, as alerts name it: its id (the
 * record's `…bot.id`, else its `ObjectId`), display name, schema name and environment. Null for other records.
 */
export function agentOf(e: AuditEvent): { a: PowerPlatformAdminActivity; detail: AgentDetail; label: string } | null {
  const a = powerPlatformAdminActivity(e);
  if (!a || a.resourceType !== 'Bot') return null;
  const detail: AgentDetail = {
    user: e.userId,
    agentId: a.botId ?? e.objectId,
    agent: a.botName,
    agentSchemaName: a.botSchemaName,
    environmentId: a.environmentId,
    environment: a.environmentName,
    operation: e.operation,
  };
  return { a, detail, label: a.botName ?? a.botSchemaName ?? a.botId ?? e.objectId ?? 'an agent' };
}

/** The agent fields of an agent alert's detail. */
export interface AgentDetail {
  user: string | null;
  agentId: string | null;
  agent: string | null;
  agentSchemaName: string | null;
  environmentId: string | null;
  environment: string | null;
  operation: string | null;
  [k: string]: unknown;
}

/** The change of one property listed in a record's `bot.update_details.change`, matched case-insensitively. */
export function propertyChange(a: PowerPlatformAdminActivity, property: string): { oldValue: string | null; newValue: string | null } | null {
  return a.changes.find((c) => c.property.toLowerCase() === property.toLowerCase()) ?? null;
}

/** What an agent component record added or changed, for the component rules. */
type ComponentClass = 'knowledgePublicWebsite' | 'knowledge' | 'mcp' | 'tool' | 'instructions';

/** One `BotComponent*` record with what the component is and how Vigil knows it. */
export interface ComponentChange {
  e: AuditEvent;
  agent: NonNullable<ReturnType<typeof agentOf>>;
  componentId: string | null;
  cls: ComponentClass | null;
  /** `inventory` = the collected component describes this version; `record` = the record's component type only. */
  basis: 'inventory' | 'record';
  component: AgentComponentAttrs | null;
}

/** How far a component's `modifiedon` may trail the record and still describe the version it audits (clock skew). */
const SAME_VERSION_MS = 5 * 60_000;

/** Component types (Dataverse `componenttype`) the record alone classifies: 15 instructions, 16 knowledge source. */
const TYPE_CLASS: Record<number, ComponentClass> = { 15: 'instructions', 16: 'knowledge' };

function classOf(c: AgentComponentAttrs): ComponentClass | null {
  if (c.kind === 'knowledge') return c.knowledge?.sourceType === 'publicWebsite' ? 'knowledgePublicWebsite' : 'knowledge';
  if (c.kind === 'mcp') return 'mcp';
  if (c.kind === 'action') return 'tool';
  if (c.kind === 'instructions') return 'instructions';
  return null;
}

/**
 * The agent component records among `ctx.events` whose operation matches `operations`, each classified:
 * - the collected component (`agentComponents`, by the record's component id, else its `ObjectId`) when it was last
 *   modified no earlier than the record (less 5 minutes): its kind and knowledge source type;
 * - otherwise the record's component type (15 instructions, 16 knowledge source, its source unknown until the
 *   next collection); other types stay unclassified (a topic and a tool share type 9 and differ only in content).
 * Audit content reaches the feed well after the change (30 minutes or more), and the run that ingests it collects
 * the inventory first, so the component is usually collected by then.
 */
export async function componentChanges(ctx: DetectionContext, operations: RegExp): Promise<ComponentChange[]> {
  const found = ctx.events.flatMap((e) => {
    if (!operations.test(e.operation ?? '')) return [];
    const agent = agentOf(e);
    return agent ? [{ e, agent, componentId: agent.a.component?.id ?? e.objectId }] : [];
  });
  if (found.length === 0) return [];
  const inventory = await ctx.agentComponents(found.flatMap((f) => (f.componentId ? [f.componentId] : [])));
  return found.map(({ e, agent, componentId }) => {
    const c = componentId ? inventory.get(componentId) : undefined;
    const modified = c?.modifiedOn ? Date.parse(c.modifiedOn) : NaN;
    if (c && Number.isFinite(modified) && modified >= Date.parse(e.creationTime) - SAME_VERSION_MS)
      return { e, agent, componentId, cls: classOf(c), basis: 'inventory' as const, component: c };
    const type = agent.a.component?.type;
    return { e, agent, componentId, cls: type !== null && type !== undefined ? (TYPE_CLASS[type] ?? null) : null, basis: 'record' as const, component: null };
  });
}

/** One user's events inside one window: what a bulk rule alerts on. */
export interface UserBurst {
  /** The user, lower case. */
  user: string;
  /** The id of the first event of the user's cluster the burst is in: the same burst has the same key. */
  key: string;
  /** Event ids, oldest first. */
  ids: string[];
  /** CreationTime of the first and last event (ISO 8601 UTC). */
  from: string;
  to: string;
}

/** How much further back `userBursts` reads when a user's activity runs up to the start of what it read. */
const LOOKBACK_MS = 24 * 3_600_000;

/**
 * Bursts of `operations` per user. The user's events are cut into clusters wherever two consecutive ones are more
 * than `windowMs` apart; a cluster holding one of the new events `fresh` and, within some `windowMs`, at least
 * `threshold(user, t)` events (t: the window's first event, epoch ms) is one burst: the first such window's events, keyed by the cluster's first event (so every
 * page and run that meets the same cluster names the same burst, whichever part of it they read). Stored events
 * around the new ones are read through `find` (±`windowMs`, and 24 hours further back for a cluster that reaches the
 * start of what was read; a cluster chaining further back than that is cut there).
 */
export async function userBursts(
  ctx: Pick<DetectionContext, 'find'>,
  fresh: AuditEvent[],
  operations: string[],
  windowMs: number,
  threshold: (user: string, at: number) => number,
): Promise<UserBurst[]> {
  const mine = fresh.filter((e) => e.userId && operations.includes(e.operation ?? ''));
  if (mine.length === 0) return [];
  const freshIds = new Set(mine.map((e) => e.id));
  const times = mine.map((e) => Date.parse(e.creationTime));
  let from = Math.min(...times) - windowMs;
  const to = new Date(Math.max(...times) + windowMs).toISOString();
  const users = new Set(mine.map((e) => e.userId!.toLowerCase()));
  const read = async (a: number, b: string) =>
    (await ctx.find({ operations, from: new Date(a).toISOString(), to: b })).filter((e) => users.has(e.userId?.toLowerCase() ?? ''));
  let stored = await read(from, to);
  if (stored.some((e) => Date.parse(e.creationTime) < from + windowMs)) {
    const earlier = await read(from - LOOKBACK_MS, new Date(from).toISOString());
    const ids = new Set(stored.map((e) => e.id));
    stored = [...earlier.filter((e) => !ids.has(e.id)), ...stored];
    from -= LOOKBACK_MS;
  }
  const byUser = new Map<string, { t: number; id: string; time: string }[]>();
  for (const e of stored) {
    const user = e.userId!.toLowerCase();
    const list = byUser.get(user) ?? [];
    byUser.set(user, list);
    list.push({ t: Date.parse(e.creationTime), id: e.id, time: e.creationTime });
  }
  const out: UserBurst[] = [];
  for (const [user, list] of byUser) {
    list.sort((a, b) => a.t - b.t || a.id.localeCompare(b.id));
    for (let start = 0; start < list.length;) {
      let end = start + 1;
      while (end < list.length && list[end]!.t - list[end - 1]!.t <= windowMs) end++;
      const cluster = list.slice(start, end);
      start = end;
      if (!cluster.some((r) => freshIds.has(r.id))) continue;
      for (let i = 0, j = 0; j < cluster.length; j++) {
        while (cluster[j]!.t - cluster[i]!.t > windowMs) i++;
        if (j - i + 1 < threshold(user, cluster[i]!.t)) continue;
        let k = j;
        while (k + 1 < cluster.length && cluster[k + 1]!.t - cluster[i]!.t <= windowMs) k++;
        const run = cluster.slice(i, k + 1);
        out.push({ user, key: cluster[0]!.id, ids: run.map((r) => r.id), from: run[0]!.time, to: run.at(-1)!.time });
        break;
      }
    }
  }
  return out;
}

/**
 * The open posture findings (not suppressed at `at`, ISO 8601 UTC) on these resources, as detections see them
 * (`DetectionContext.openFindings`): what both the audit-side runner and runtime protection's issue join read.
 */
export async function readOpenFindings(db: Executor, integrationId: string, resourceIds: string[], at: string): Promise<OpenFinding[]> {
  return (await openFindingsOnResources(db, integrationId, resourceIds, at)).map((f) => ({
    findingId: f.id,
    checkId: f.check_id,
    // Stored severities come from validated check metadata; an unknown one reads as the lowest.
    severity: (SEVERITIES as readonly string[]).includes(f.severity) ? (f.severity as OpenFinding['severity']) : 'info',
    resourceType: f.resource_type,
    resourceId: f.resource_id,
    resourceName: f.resource_name,
    firstSeenAt: f.first_seen_at,
  }));
}
