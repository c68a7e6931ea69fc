import type { Severity } from '../core/types.ts';
import type { Kysely } from 'kysely';
import { listFindings } from '../store/repositories/findings.ts';
import type { AgentComponentAttrs } from '../sources/dataverse/streams/agentComponents.ts';
import { listAgents, listEstateObjects } from '../store/repositories/inventory.ts';
import type { AgentsTable, Database, FindingsTable } from '../store/schema.ts';
import { ACCESS_CONTROL_POLICY, AUTHENTICATION_MODE } from './helpers.ts';

/**
 * A risk score per Copilot Studio agent, 0–100, combining what is wrong with it (its open, unsuppressed findings,
 * weighted by severity) with how far it reaches (who can use it). Each point is explained by a reason, so the score
 * can be argued with.
 *
 * - Findings: critical 40, high 25, medium 10, low 4, info 1 per open finding, at most 70.
 * - Reach (× 30): no authentication = anyone who finds a channel (1.0); authenticated and open to everyone in the
 *   organization (`accesscontrolpolicy` Any) 0.7; open to users of any Entra tenant (3, Any (multitenant)) 0.85; Copilot readers or a security group 0.4; unknown 0.5. Unpublished
 *   agents reach makers only (× 0.3), switched-off agents nobody (× 0.1).
 * - What it can touch scales the reach: tools on the maker's credentials, MCP servers or HTTP calls to named hosts
 *   (act beyond the user's own access or outside the tenant) 1.0; other tools or organisational knowledge 0.8;
 *   public-website knowledge only, or nothing, 0.6. When the agent's components were not collected the factor is
 *   1.0 (the worst case) and `touch` says "not evaluated".
 *
 * Sources: Dataverse `bot` columns (`authenticationmode`, `accesscontrolpolicy`, `publishedon`, `statecode`),
 * learn.microsoft.com/microsoft-copilot-studio/configuration-end-user-authentication and
 * configure-bot-authentication (who can chat with an agent).
 */

const WEIGHT: Record<Severity, number> = { critical: 40, high: 25, medium: 10, low: 4, info: 1 };

/** One agent's score and why. */
export interface AgentRisk {
  environmentId: string;
  agentId: string;
  name: string | null;
  /** 0–100. */
  score: number;
  /** `anyone`, `any tenant`, `organization`, `restricted`, `makers only`, `off`, or `unknown`. */
  reach: string;
  openFindings: number;
  reasons: string[];
  /** What the agent can touch (from its components), or why it is not known. */
  touch: AgentTouch;
}

/** What an agent can touch, from its Copilot Studio components. */
type AgentTouch =
  | { status: 'not_evaluated'; reason: string }
  | {
      status: 'evaluated';
      /** Connector, flow and MCP tools. */
      tools: number;
      /** Tools whose connection runs with the maker's credentials. */
      makerCredentialTools: number;
      /** MCP tools, and the hosts of their servers where known. */
      mcpTools: number;
      /** Hosts called by HTTP requests in tools and topics. */
      httpHosts: string[];
      /** Knowledge sources by type (`publicWebsite`, `sharePoint`, …). */
      knowledge: Record<string, number>;
    };

/** Summarises an agent's components into what it can touch, and the reach factor (0.6–1.0) that follows. */
function agentTouch(components: AgentComponentAttrs[] | null): { touch: AgentTouch; factor: number; reason: string | null } {
  if (!components) return { touch: { status: 'not_evaluated', reason: "The agent's tools and knowledge were not collected." }, factor: 1, reason: null };
  const active = components.filter((c) => c.stateCode !== 1);
  const tools = active.filter((c) => c.kind === 'action' || c.kind === 'mcp');
  const maker = tools.filter((c) => c.tool?.connectionMode === 'maker').length;
  const mcp = tools.filter((c) => c.kind === 'mcp').length;
  const httpHosts = [...new Set(active.flatMap((c) => [...(c.tool?.httpHosts ?? []), ...(c.topic?.httpHosts ?? [])]))].sort();
  const knowledge: Record<string, number> = {};
  for (const c of active) if (c.kind === 'knowledge' && c.knowledge) knowledge[c.knowledge.sourceType] = (knowledge[c.knowledge.sourceType] ?? 0) + 1;
  const orgKnowledge = Object.entries(knowledge).some(([k, n]) => k !== 'publicWebsite' && n > 0);
  const touch: AgentTouch = { status: 'evaluated', tools: tools.length, makerCredentialTools: maker, mcpTools: mcp, httpHosts, knowledge };
  if (maker > 0 || mcp > 0 || httpHosts.length > 0) {
    const what = [
      maker ? `${maker} tool(s) on the maker's credentials` : '',
      mcp ? `${mcp} MCP tool(s)` : '',
      httpHosts.length ? `HTTP to ${httpHosts.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    return { touch, factor: 1, reason: `touches: ${what}` };
  }
  if (tools.length > 0 || orgKnowledge)
    return {
      touch,
      factor: 0.8,
      reason: `touches: ${tools.length} tool(s), ${
        Object.entries(knowledge)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ') || 'no'
      } knowledge`,
    };
  return { touch, factor: 0.6, reason: 'touches: no tools, no organisational knowledge' };
}

/**
 * Scores agents from their rows and the open findings on them (`resource_type` agent, `resource_id` = the bot id).
 * Suppressed findings must be left out by the caller (they are accepted risk).
 * @returns the agents, highest score first.
 */
export function scoreAgents(
  agents: Pick<AgentsTable, 'environment_id' | 'id' | 'name' | 'authentication_mode' | 'access_control_policy' | 'published_on' | 'state_code'>[],
  openFindings: Pick<FindingsTable, 'resource_type' | 'resource_id' | 'severity' | 'check_id'>[],
  /** Components per bot id; null when components were not collected (touch not evaluated). */
  components: Map<string, AgentComponentAttrs[]> | null = null,
): AgentRisk[] {
  const byAgent = new Map<string, Pick<FindingsTable, 'severity' | 'check_id'>[]>();
  for (const f of openFindings) {
    if (f.resource_type !== 'agent') continue;
    byAgent.set(f.resource_id, [...(byAgent.get(f.resource_id) ?? []), f]);
  }
  return agents
    .map((a) => {
      const found = byAgent.get(a.id) ?? [];
      const reasons: string[] = [];
      let findingPoints = 0;
      for (const f of found) findingPoints += WEIGHT[f.severity as Severity] ?? 0;
      findingPoints = Math.min(70, findingPoints);
      if (found.length) reasons.push(`${found.length} open finding(s): ${[...new Set(found.map((f) => f.check_id))].join(', ')} (+${findingPoints})`);
      let reach: string;
      let factor: number;
      if (a.authentication_mode === AUTHENTICATION_MODE.None) [reach, factor] = ['anyone', 1];
      else if (a.access_control_policy === ACCESS_CONTROL_POLICY.AnyMultitenant) [reach, factor] = ['any tenant', 0.85];
      else if (a.access_control_policy === ACCESS_CONTROL_POLICY.Any) [reach, factor] = ['organization', 0.7];
      else if (a.access_control_policy === ACCESS_CONTROL_POLICY.CopilotReaders || a.access_control_policy === ACCESS_CONTROL_POLICY.GroupMembership)
        [reach, factor] = ['restricted', 0.4];
      else [reach, factor] = ['unknown', 0.5];
      if (a.state_code !== null && a.state_code !== 0) {
        reach = 'off';
        factor *= 0.1;
      } else if (!a.published_on) {
        reach = 'makers only';
        factor *= 0.3;
      }
      const touched = agentTouch(components ? (components.get(a.id) ?? []) : null);
      const reachPoints = Math.round(30 * factor * touched.factor);
      reasons.push(`reach: ${reach}${touched.reason ? `, ${touched.reason}` : ''} (+${reachPoints})`);
      return {
        environmentId: a.environment_id,
        agentId: a.id,
        name: a.name,
        score: Math.min(100, findingPoints + reachPoints),
        reach,
        openFindings: found.length,
        reasons,
        touch: touched.touch,
      };
    })
    .sort((x, y) => y.score - x.score || (x.name ?? '').localeCompare(y.name ?? ''));
}

/**
 * The agents of these integrations ranked by risk, highest first, from the store: live agents and their open,
 * unsuppressed findings (suppressed findings are accepted risk and do not count).
 */
export async function rankAgents(db: Kysely<Database>, integrationIds: string[]): Promise<(AgentRisk & { integrationId: string })[]> {
  const ranked: (AgentRisk & { integrationId: string })[] = [];
  for (const integrationId of integrationIds) {
    const open = await listFindings(db, { integrationId, status: 'open' });
    const rows = await listEstateObjects<AgentComponentAttrs>(db, integrationId, 'agentComponents');
    let components: Map<string, AgentComponentAttrs[]> | null = null;
    if (rows.length > 0) {
      components = new Map();
      for (const r of rows) if (r.attrs.botId) components.set(r.attrs.botId, [...(components.get(r.attrs.botId) ?? []), r.attrs]);
    }
    for (const r of scoreAgents(await listAgents(db, integrationId), open, components)) ranked.push({ integrationId, ...r });
  }
  return ranked.sort((a, b) => b.score - a.score);
}

/** How far a Power App or flow reaches: a factor (0–1) and the words for it. */
interface Exposure {
  factor: number;
  label: string;
}

/**
 * Exposure of a Power App from its sharing (admin API role assignments): shared with everyone in the tenant 1.0;
 * shared with users or groups 0.5; permissions not returned 0.5 ("unknown"); its owner only 0.2.
 * Source: Microsoft Learn "Share a canvas app" (power-apps/maker/canvas-apps/share-app).
 */
export function appExposure(a: { sharedWithTenant: boolean | null; sharedUsersCount: number | null; sharedGroupsCount: number | null }): Exposure {
  if (a.sharedWithTenant === true) return { factor: 1, label: 'shared with everyone' };
  if (a.sharedWithTenant === null) return { factor: 0.5, label: 'sharing unknown' };
  const users = a.sharedUsersCount ?? 0;
  const groups = a.sharedGroupsCount ?? 0;
  if (users + groups > 0) return { factor: 0.5, label: `shared with ${users} user(s), ${groups} group(s)` };
  return { factor: 0.2, label: 'owner only' };
}

/**
 * Exposure of a cloud flow: an HTTP request trigger (anyone holding the signed URL can start it) 1.0; HTTP actions to
 * named hosts (data leaves through them) 0.8; otherwise 0.3; a flow not started (`Stopped`, `Suspended`) × 0.1.
 * Sources: the checks pp_flow_http_trigger and pp_flow_external_http, and the Microsoft Learn pages they cite.
 */
export function flowExposure(f: { state: string | null; hasHttpTrigger: boolean; httpTargets: { host: string | null }[] }): Exposure {
  const hosts = [...new Set(f.httpTargets.map((t) => t.host).filter((h): h is string => !!h))];
  let e: Exposure = f.hasHttpTrigger
    ? { factor: 1, label: 'HTTP trigger: anyone with its URL starts it' }
    : hosts.length
      ? { factor: 0.8, label: `HTTP to ${hosts.join(', ')}` }
      : { factor: 0.3, label: 'started by its trigger' };
  if (f.state && /^(stopped|suspended)$/i.test(f.state)) e = { factor: e.factor * 0.1, label: `${e.label} (${f.state.toLowerCase()})` };
  return e;
}

/**
 * A Power App's or flow's score, 0–100: its open findings as for agents (critical 40 … info 1, at most 70) plus
 * 30 × its exposure factor, with the reasons.
 */
export function scoreObject(
  exposure: Exposure,
  openFindings: Pick<FindingsTable, 'severity' | 'check_id'>[],
): { score: number; openFindings: number; reasons: string[] } {
  const points = Math.min(
    70,
    openFindings.reduce((n, f) => n + (WEIGHT[f.severity as Severity] ?? 0), 0),
  );
  const reach = Math.round(30 * exposure.factor);
  const reasons = [
    ...(openFindings.length ? [`${openFindings.length} open finding(s): ${[...new Set(openFindings.map((f) => f.check_id))].join(', ')} (+${points})`] : []),
    `exposure: ${exposure.label} (+${reach})`,
  ];
  return { score: Math.min(100, points + reach), openFindings: openFindings.length, reasons };
}
