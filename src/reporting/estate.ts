import { integrationOf, integrationsInScope } from '../access/scope.ts';
import type { Caller } from '../access/index.ts';
import { ACCESS_CONTROL_POLICY, AUTHENTICATION_MODE } from '../checks/helpers.ts';
import { appExposure, flowExposure, scoreAgents, scoreObject, type AgentRisk } from '../checks/risk.ts';
import type { AGENT_SORTS, AgentReach, EnvironmentEstate, EstateAgent, ReachNode } from '../contract/estate.ts';
import { VigilError } from '../core/errors.ts';
import type { AgentComponentAttrs } from '../sources/dataverse/streams/agentComponents.ts';
import type { AgentSettingsAttrs } from '../sources/dataverse/streams/agentSettings.ts';
import type { ConnectionAttrs } from '../sources/powerPlatform/streams/connections.ts';
import type { ConnectorAttrs } from '../sources/powerPlatform/streams/connectors.ts';
import type { FlowAttrs } from '../sources/powerPlatform/streams/flows.ts';
import type { PowerAppAttrs } from '../sources/powerPlatform/streams/powerApps.ts';
import type { Executor } from '../store/db.ts';
import { listFindings, type FindingWithSuppression } from '../store/repositories/findings.ts';
import { listAgents, listAllUsers, listDataverseUsers, listEnvironments, listEstateObjects } from '../store/repositories/inventory.ts';
import type { AgentsTable } from '../store/schema.ts';
import { decodeCursor, encodeCursor, type Page } from './index.ts';

/**
 * The estate as a picture (issue 21): every agent of the organization as a table with names (environment, owner),
 * how users sign in and who may chat, its tools and knowledge and its risk (the model of `checks/risk.ts`); one
 * agent's reach graph, built from the inventory already collected (agents, agentComponents, agentSettings,
 * connections, connectors); and one environment's agents, apps and flows ranked by risk. Organization-scoped like
 * every view (`access/scope.ts`): another organization's integration or agent answers not-found.
 */

/** Words for Dataverse `bot.authenticationmode` (learn.microsoft.com power-apps … reference/entities/bot). */
const AUTHENTICATION: Record<number, string> = {
  [AUTHENTICATION_MODE.Unspecified]: 'Unspecified',
  [AUTHENTICATION_MODE.None]: 'None',
  [AUTHENTICATION_MODE.Integrated]: 'Microsoft (integrated)',
  [AUTHENTICATION_MODE.CustomAzureAD]: 'Manual (Microsoft Entra ID)',
  [AUTHENTICATION_MODE.GenericOAuth2]: 'Manual (generic OAuth 2)',
};
/** Words for Dataverse `bot.accesscontrolpolicy` (see `checks/helpers.ts` ACCESS_CONTROL_POLICY for the sources). */
const SHARING: Record<number, string> = {
  [ACCESS_CONTROL_POLICY.Any]: 'Everyone in the organization',
  [ACCESS_CONTROL_POLICY.CopilotReaders]: 'Agent readers',
  [ACCESS_CONTROL_POLICY.GroupMembership]: 'Security groups',
  [ACCESS_CONTROL_POLICY.AnyMultitenant]: 'Any Microsoft Entra tenant',
};
const authenticationOf = (a: Pick<AgentsTable, 'authentication_mode'>) =>
  a.authentication_mode === null ? 'Unknown' : (AUTHENTICATION[a.authentication_mode] ?? `Unknown (${a.authentication_mode})`);
const sharingOf = (a: Pick<AgentsTable, 'access_control_policy' | 'authentication_mode'>) =>
  a.authentication_mode === AUTHENTICATION_MODE.None
    ? 'Anyone who reaches a channel'
    : a.access_control_policy === null
      ? 'Unknown'
      : (SHARING[a.access_control_policy] ?? `Unknown (${a.access_control_policy})`);

/** Words for agent channel families (`agentSettings` channels). */
const CHANNEL: Record<string, string> = {
  teams: 'Microsoft Teams and Microsoft 365 Copilot',
  demoWebsite: 'Demo website',
  customWebsite: 'Custom website (web chat)',
  directLine: 'Direct Line (any client with the secret)',
  facebook: 'Facebook',
};

/** What the well-known connectors give access to (the data behind a connection). */
const CONNECTOR_DATA: Record<string, string> = {
  shared_office365: 'Outlook mail, calendars and contacts',
  shared_office365users: 'Microsoft Entra user profiles',
  shared_sharepointonline: 'SharePoint sites, lists and files',
  shared_onedriveforbusiness: 'OneDrive files',
  shared_sql: 'SQL Server databases',
  shared_servicenow: 'ServiceNow records',
  shared_commondataserviceforapps: 'Dataverse tables',
  shared_teams: 'Teams chats and channels',
  shared_salesforce: 'Salesforce records',
};

/** A component's attributes and its display name. */
type Component = AgentComponentAttrs & { displayName: string | null };

/** The inventory of one integration an estate view reads, loaded once. */
interface Loaded {
  integrationId: string;
  integrationName: string;
  agents: Awaited<ReturnType<typeof listAgents>>;
  envNames: Map<string, string | null>;
  users: Map<string, string | null>;
  settings: Map<string, AgentSettingsAttrs> | null;
  /** Components per bot id, with their display name (`botcomponent.name`); null when none was collected. */
  components: Map<string, Component[]> | null;
  /** Directory users' names by Entra object id (flow creators). */
  people: Map<string, string | null>;
  findings: FindingWithSuppression[];
}

async function load(db: Executor, integration: { id: string; name: string }): Promise<Loaded> {
  const [agents, envs, users, people, settingsRows, componentRows, findings] = await Promise.all([
    listAgents(db, integration.id),
    listEnvironments(db, integration.id),
    listDataverseUsers(db, integration.id),
    listAllUsers(db, integration.id),
    listEstateObjects<AgentSettingsAttrs>(db, integration.id, 'agentSettings'),
    listEstateObjects<AgentComponentAttrs>(db, integration.id, 'agentComponents'),
    listFindings(db, { integrationId: integration.id, status: 'open' }),
  ]);
  // As in `rankAgents`: no component stored at all means the stream was not collected (touch not evaluated).
  let components: Map<string, Component[]> | null = null;
  if (componentRows.length > 0) {
    components = new Map();
    for (const r of componentRows)
      if (r.attrs.botId) components.set(r.attrs.botId, [...(components.get(r.attrs.botId) ?? []), { ...r.attrs, displayName: r.name }]);
  }
  return {
    integrationId: integration.id,
    integrationName: integration.name,
    agents,
    envNames: new Map(envs.map((e) => [e.id, e.display_name])),
    users: new Map(users.map((u) => [`${u.environment_id}/${u.id}`, u.full_name])),
    people: new Map(people.map((p) => [p.id, p.display_name])),
    settings: settingsRows.length > 0 ? new Map(settingsRows.map((r) => [r.attrs.botId, r.attrs])) : null,
    components,
    findings,
  };
}

/** The table rows of the loaded agents (all of them, unsorted). */
function rows(l: Loaded, agents = l.agents): EstateAgent[] {
  const risk = new Map(scoreAgents(agents, l.findings, l.components).map((r) => [r.agentId, r]));
  return agents.map((a) => {
    const r = risk.get(a.id) as AgentRisk;
    const s = l.settings?.get(a.id);
    const touch = r.touch.status === 'evaluated' ? r.touch : null;
    return {
      integrationId: l.integrationId,
      integrationName: l.integrationName,
      agentId: a.id,
      name: a.name,
      environmentId: a.environment_id,
      environmentName: l.envNames.get(a.environment_id) ?? null,
      owner: a.owner_id ? (l.users.get(`${a.environment_id}/${a.owner_id}`) ?? null) : null,
      authentication: authenticationOf(a),
      sharing: sharingOf(a),
      orchestration: !s || s.generativeActionsEnabled === null ? null : s.generativeActionsEnabled ? 'generative' : 'classic',
      tools: touch ? touch.tools : null,
      knowledge: touch ? Object.values(touch.knowledge).reduce((n, k) => n + k, 0) : null,
      openFindings: r.openFindings,
      score: r.score,
      reach: r.reach,
      reasons: r.reasons,
    };
  });
}

/** Sort key of a row for each column; strings compare case-insensitively, nulls last. */
const SORT_VALUE: Record<(typeof AGENT_SORTS)[number], (a: EstateAgent) => string | number | null> = {
  risk: (a) => a.score,
  name: (a) => a.name?.toLowerCase() ?? null,
  environment: (a) => a.environmentName?.toLowerCase() ?? null,
  owner: (a) => a.owner?.toLowerCase() ?? null,
  findings: (a) => a.openFindings,
  tools: (a) => a.tools,
  knowledge: (a) => a.knowledge,
};

/** Filters, order and page of {@link agentsPage}. */
export interface EstateAgentsFilter {
  integrationId?: string | undefined;
  environmentId?: string | undefined;
  q?: string | undefined;
  sort: (typeof AGENT_SORTS)[number];
  order: 'asc' | 'desc';
  limit: number;
  cursor?: string | undefined;
}

/**
 * The agents table: every live agent of the caller's integrations (or one of them), filtered by environment and by a
 * case-insensitive part of its name, environment or owner, ordered by `sort` (ties by name, then id), one page of
 * `limit` from the cursor's offset, with the total matching. Risk is scored over every agent first (it needs the
 * findings and components of each), so sorting by risk is exact across pages.
 * @throws VigilError `not-found` for another organization's integration; `INVALID_CURSOR` for a cursor not issued here.
 */
export async function agentsPage(db: Executor, caller: Caller, filter: EstateAgentsFilter): Promise<Page<EstateAgent> & { total: number }> {
  const integrations = filter.integrationId ? [await integrationOf(db, caller, filter.integrationId)] : await integrationsInScope(db, caller);
  const offset = decodeCursor<{ offset: number }>(filter.cursor, { offset: 'number' })?.offset ?? 0;
  let all: EstateAgent[] = [];
  for (const i of integrations) {
    const l = await load(db, i);
    all.push(...rows(l, filter.environmentId ? l.agents.filter((a) => a.environment_id === filter.environmentId) : l.agents));
  }
  const q = filter.q?.trim().toLowerCase();
  if (q) all = all.filter((a) => [a.name, a.environmentName, a.owner].some((v) => v?.toLowerCase().includes(q)));
  const value = SORT_VALUE[filter.sort];
  const dir = filter.order === 'asc' ? 1 : -1;
  all.sort((x, y) => {
    const a = value(x);
    const b = value(y);
    if (a !== b) {
      if (a === null) return 1;
      if (b === null) return -1;
      return (a < b ? -1 : 1) * dir;
    }
    return (x.name ?? '').localeCompare(y.name ?? '') || x.agentId.localeCompare(y.agentId);
  });
  const items = all.slice(offset, offset + filter.limit);
  const more = offset + filter.limit < all.length;
  return { items, total: all.length, nextCursor: more ? encodeCursor({ offset: offset + filter.limit }) : null };
}

/** Host and origin flags of an HTTP origin: plain HTTP or a non-standard port (what agent_insecure_http fails). */
function httpFlags(origin: string): string[] {
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || (u.port !== '' && u.port !== '443') ? ['insecure-http'] : [];
  } catch {
    return [];
  }
}

/**
 * An agent's reach graph. Inbound (who can reach it): the audience its access control policy allows, how they sign
 * in, and the channels it is published to. Outbound (what it reaches): its active tools (connector, flow and MCP
 * tools) with the connector each goes through, whose credentials it runs on (the tool's `connectionMode`: the
 * maker's, shared with every user, or each user's own), the environment's connections of that connector (the
 * accounts behind them) and the data the connector opens; its knowledge sources (public websites flagged); HTTP
 * endpoints its tools and topics call; child and connected agents. What was not collected is listed in
 * `notEvaluated` rather than drawn as nothing.
 * @throws VigilError `not-found` for an absent agent or another organization's integration.
 */
export async function agentReach(db: Executor, caller: Caller, integrationId: string, agentId: string): Promise<AgentReach> {
  const integration = await integrationOf(db, caller, integrationId);
  const l = await load(db, integration);
  const a = l.agents.find((x) => x.id === agentId);
  if (!a)
    throw new VigilError('AGENT_NOT_FOUND', `No agent '${agentId}'.`, {
      remediation: 'List the agents with GET /api/v1/estate/agents.',
    });
  const risk = scoreAgents([a], l.findings, l.components)[0]!;
  const nodes = new Map<string, ReachNode>();
  const edges: AgentReach['edges'] = [];
  const notEvaluated: string[] = [];
  const node = (n: ReachNode) => {
    const had = nodes.get(n.id);
    if (had) had.flags = [...new Set([...had.flags, ...n.flags])];
    else nodes.set(n.id, n);
    return n.id;
  };
  const edge = (from: string, to: string, label: string) => {
    const id = `${from}->${to}`;
    if (!edges.some((e) => e.id === id)) edges.push({ id, from, to, label });
  };
  const agentNode = node({
    id: 'agent',
    kind: 'agent',
    side: 'agent',
    label: a.name ?? a.id,
    detail: `Risk ${risk.score} · ${risk.reach}`,
    flags: [],
  });

  // Who can reach it.
  const noAuth = a.authentication_mode === AUTHENTICATION_MODE.None;
  const broad = a.access_control_policy === ACCESS_CONTROL_POLICY.Any || a.access_control_policy === ACCESS_CONTROL_POLICY.AnyMultitenant;
  const audience = node({
    id: 'audience',
    kind: 'audience',
    side: 'inbound',
    label: sharingOf(a),
    detail: 'Who may chat with the agent (access control policy)',
    flags: [
      ...(noAuth ? ['no-authentication'] : []),
      ...(broad && !noAuth ? ['broad-sharing'] : []),
      ...(a.access_control_policy === ACCESS_CONTROL_POLICY.AnyMultitenant ? ['multitenant'] : []),
    ],
  });
  const auth = node({
    id: 'authentication',
    kind: 'authentication',
    side: 'inbound',
    label: `Sign-in: ${authenticationOf(a)}`,
    detail: a.authentication_trigger === 1 ? 'Sign-in required' : a.authentication_trigger === 0 ? 'Sign-in as needed' : null,
    flags: noAuth ? ['no-authentication'] : [],
  });
  edge(audience, auth, noAuth ? 'without signing in' : 'signs in');
  const settings = l.settings?.get(a.id);
  const channels = settings?.channels ?? null;
  if (!l.settings) notEvaluated.push("Channels: the agent's settings (agentSettings) were not collected.");
  else if (channels === null) notEvaluated.push("Channels: the agent's configuration records no channels.");
  if (channels && channels.length > 0) {
    for (const c of channels) {
      const id = node({
        id: `channel:${c.channelId}`,
        kind: 'channel',
        side: 'inbound',
        label: CHANNEL[c.family] ?? c.channelId,
        detail: c.channelId,
        flags: noAuth && c.family !== 'teams' ? ['no-authentication'] : [],
      });
      edge(auth, id, 'through');
      edge(id, agentNode, 'chats with');
    }
  } else edge(auth, agentNode, 'chats with');

  // What it reaches.
  const comps = l.components ? (l.components.get(a.id) ?? []).filter((c) => c.stateCode !== 1) : null;
  if (!comps) notEvaluated.push("Tools, knowledge and MCP servers: the agent's components (agentComponents) were not collected.");
  const [connectors, connections] = await Promise.all([
    listEstateObjects<ConnectorAttrs>(db, integration.id, 'connectors'),
    listEstateObjects<ConnectionAttrs>(db, integration.id, 'connections'),
  ]);
  const connectorOf = new Map(connectors.filter((c) => c.attrs.environmentId === a.environment_id).map((c) => [c.attrs.connectorId, c.attrs]));
  const envConnections = connections.filter((c) => c.attrs.environmentId === a.environment_id);
  const schemaNames = new Map(l.agents.filter((x) => x.environment_id === a.environment_id).map((x) => [x.schema_name, x]));
  const httpNode = (origin: string, from: string) => {
    const host = (() => {
      try {
        return new URL(origin).host;
      } catch {
        return origin;
      }
    })();
    edge(from, node({ id: `http:${origin}`, kind: 'httpEndpoint', side: 'outbound', label: host, detail: origin, flags: httpFlags(origin) }), 'HTTP request');
  };
  for (const c of comps ?? []) {
    const name = c.schemaName ?? c.kind;
    if ((c.kind === 'action' || c.kind === 'mcp') && c.tool) {
      const t = c.tool;
      const def = t.connectorId ? connectorOf.get(t.connectorId) : undefined;
      const maker = t.connectionMode === 'maker';
      const toolId = node({
        id: `tool:${name}`,
        kind: 'tool',
        side: 'outbound',
        label: toolLabel(c),
        detail: t.operationId ? `operation ${t.operationId}` : (t.actionKind ?? null),
        flags: [...(maker ? ['maker-credentials'] : []), ...(c.kind === 'mcp' ? ['mcp'] : [])],
      });
      edge(agentNode, toolId, 'calls');
      for (const o of t.httpOrigins) httpNode(o, toolId);
      if (!t.connectorId) continue;
      const creds = maker ? "maker's credentials" : t.connectionMode === 'user' ? "each user's credentials" : 'credentials not stated';
      const target = node({
        id: `${c.kind === 'mcp' ? 'mcp' : 'connector'}:${t.connectorId}`,
        kind: c.kind === 'mcp' ? 'mcpServer' : 'connector',
        side: 'outbound',
        label: def?.displayName ?? t.connectorId,
        detail:
          c.kind === 'mcp' ? (t.serverHost ?? def?.backendHost ?? t.connectorId) : def?.backendHost ? `${t.connectorId} → ${def.backendHost}` : t.connectorId,
        flags: [...(c.kind === 'mcp' ? ['mcp'] : []), ...(t.customConnector || def?.isCustom ? ['custom-connector'] : [])],
      });
      edge(toolId, target, `on the ${creds}`);
      for (const conn of envConnections.filter((x) => x.attrs.connectorId === t.connectorId)) {
        const who = conn.attrs.accountName ?? conn.attrs.createdBy.userPrincipalName ?? conn.attrs.createdBy.displayName;
        edge(
          target,
          node({
            id: `connection:${conn.id}`,
            kind: 'connection',
            side: 'outbound',
            label: conn.attrs.displayName ?? conn.name ?? 'Connection',
            detail: who ? `signed in as ${who}` : null,
            flags: [...(maker ? ['maker-credentials'] : []), ...(conn.attrs.sharedWithTenant ? ['shared-with-tenant'] : [])],
          }),
          'connection',
        );
      }
      const data = CONNECTOR_DATA[t.connectorId];
      if (data)
        edge(
          target,
          node({ id: `data:${t.connectorId}`, kind: 'data', side: 'outbound', label: data, detail: null, flags: [] }),
          maker ? 'as the maker' : 'as the user',
        );
    } else if (c.kind === 'knowledge' && c.knowledge) {
      const k = c.knowledge;
      const pub = k.sourceType === 'publicWebsite';
      edge(
        agentNode,
        node({
          id: `knowledge:${k.url ?? name}`,
          kind: 'knowledge',
          side: 'outbound',
          label: k.host ?? k.connectionName ?? k.sourceType,
          detail: `${KNOWLEDGE[k.sourceType] ?? k.sourceType}${k.url ? ` · ${k.url}` : ''}`,
          flags: pub ? ['public-website'] : [],
        }),
        'searches',
      );
    } else if (c.kind === 'agent' && c.agent) {
      const target = c.agent.botSchemaName ? schemaNames.get(c.agent.botSchemaName) : undefined;
      edge(
        agentNode,
        node({
          id: `agent:${target?.id ?? name}`,
          kind: c.agent.relation === 'child' ? 'childAgent' : 'connectedAgent',
          side: 'outbound',
          label: target?.name ?? c.displayName ?? c.agent.botSchemaName ?? name,
          detail: c.agent.relation === 'child' ? 'Child agent' : 'Connected agent',
          flags: [],
        }),
        c.agent.relation === 'child' ? 'delegates to' : 'calls agent',
      );
    } else if (c.kind === 'topic' && c.topic) for (const o of c.topic.httpOrigins) httpNode(o, agentNode);
  }
  return {
    integrationId: integration.id,
    agentId: a.id,
    name: a.name,
    environment: { id: a.environment_id, name: l.envNames.get(a.environment_id) ?? null },
    score: risk.score,
    reasons: risk.reasons,
    nodes: [...nodes.values()],
    edges,
    notEvaluated,
  };
}

/** Words for knowledge source types. */
const KNOWLEDGE: Record<string, string> = {
  publicWebsite: 'Public website',
  sharePoint: 'SharePoint',
  dataverse: 'Dataverse',
  file: 'Uploaded files',
  graphConnector: 'Microsoft Graph connector',
};

/** A tool's label: its display name, else its schema name's last part (`cr123_agent.action.SendMail` → `SendMail`) or its kind. */
function toolLabel(c: Component): string {
  if (c.displayName) return c.displayName;
  const last = c.schemaName?.split('.').at(-1);
  return last && last !== c.schemaName ? last : (c.schemaName ?? (c.kind === 'mcp' ? 'MCP tool' : 'Tool'));
}

/**
 * One environment's estate: its agents (rows of the agents table), Power Apps and cloud flows, each riskiest first;
 * apps and flows scored by `scoreObject` over their open findings and exposure (`appExposure`, `flowExposure`).
 * @throws VigilError `not-found` (`ENVIRONMENT_NOT_FOUND`) for an environment the integration does not hold, or
 *   `INTEGRATION_NOT_FOUND` for another organization's integration.
 */
export async function environmentEstate(db: Executor, caller: Caller, integrationId: string, environmentId: string): Promise<EnvironmentEstate> {
  const integration = await integrationOf(db, caller, integrationId);
  const env = (await listEnvironments(db, integration.id)).find((e) => e.id === environmentId);
  if (!env)
    throw new VigilError('ENVIRONMENT_NOT_FOUND', `No environment '${environmentId}'.`, {
      remediation: 'List the environments with GET /api/v1/inventory/environments.',
    });
  const l = await load(db, integration);
  const [apps, flows] = await Promise.all([
    listEstateObjects<PowerAppAttrs>(db, integration.id, 'powerApps'),
    listEstateObjects<FlowAttrs>(db, integration.id, 'flows'),
  ]);
  const byResource = new Map<string, FindingWithSuppression[]>();
  for (const f of l.findings) byResource.set(`${f.resource_type}/${f.resource_id}`, [...(byResource.get(`${f.resource_type}/${f.resource_id}`) ?? []), f]);
  const ranked = <T extends { score: number; name: string | null }>(xs: T[]) =>
    xs.sort((x, y) => y.score - x.score || (x.name ?? '').localeCompare(y.name ?? ''));
  return {
    integrationId: integration.id,
    integrationName: integration.name,
    environment: { id: env.id, name: env.display_name, sku: env.sku, region: env.region, isDefault: env.is_default === 1 },
    agents: ranked(
      rows(
        l,
        l.agents.filter((a) => a.environment_id === env.id),
      ),
    ),
    apps: ranked(
      apps
        .filter((x) => x.attrs.environmentId === env.id)
        .map((x) => {
          const e = appExposure(x.attrs);
          return {
            id: x.id,
            name: x.attrs.displayName ?? x.name,
            owner: x.attrs.owner.displayName ?? x.attrs.owner.userPrincipalName,
            exposure: e.label,
            ...scoreObject(e, byResource.get(`app/${x.id}`) ?? []),
          };
        }),
    ),
    flows: ranked(
      flows
        .filter((x) => x.attrs.environmentId === env.id)
        .map((x) => {
          const e = flowExposure(x.attrs);
          return {
            id: x.id,
            name: x.attrs.displayName ?? x.name,
            owner: (x.attrs.creator.objectId ? l.people.get(x.attrs.creator.objectId) : null) ?? null,
            exposure: e.label,
            ...scoreObject(e, byResource.get(`flow/${x.id}`) ?? []),
          };
        }),
    ),
  };
}
