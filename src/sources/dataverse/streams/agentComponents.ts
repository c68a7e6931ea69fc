import { parse as parseYaml } from 'yaml';
import type { EstateObject } from '../../../core/inventory.ts';
import { inspectText } from '../../../inspection/index.ts';
import { dataverseEntityStream } from '../entity.ts';
import type { Stream } from '../../stream.ts';
import { str, num, bool, objOrNull, type Json } from '../../../core/json.ts';

/**
 * Copilot Studio agent components per environment with Dataverse (the agents' settings are `agentSettings.ts`).
 *
 * - `agentComponents`: `GET {org}/api/data/v9.2/botcomponents?$select=…` (all components of the environment, paged
 *   with `Prefer: odata.maxpagesize` and `@odata.nextLink`; full read each round, no delta). Each row's `data` (the
 *   component's YAML) is parsed with the `yaml` library and reduced to what checks need (knowledge source and URL,
 *   tool connector and credential mode, MCP tools, HTTP hosts called by topics, child and connected agents, instruction
 *   length and whether the instructions — the agent's and each child agent's — hold a credential). The stored `raw`
 *   drops `data` and `content` (they may hold instructions with secrets) and keeps their lengths.
 *
 * Reading needs the same Dataverse access as `agents` (an application user with System Administrator); Dataverse
 * answers 403 `0x80072560` / `0x80040220` otherwise and that environment's slice is recorded errored.
 *
 * Sources: reference §4.3; learn.microsoft.com `/power-apps/developer/data-platform/webapi/reference/botcomponent`
 * (componenttype 0–14, `data` = "content of the Bot Component in OBI format"); real solution exports of
 * microsoft/CopilotStudioSamples (MIT; child agents `kind: AgentDialog`, connected agents `InvokeConnectedAgentTaskAction`,
 * both componenttype 9; fixtures in test/fixtures/real/powerbi-agents/); Copilot Studio YAML as written by
 * microsoft/skills-for-copilot-studio (`REFERENCE.md`, `.claude/skills/add-knowledge/knowledge-guide.md`,
 * `evals/fixtures/agent-with-mcp-action/actions/*.mcs.yml`). UNCONFIRMED (not in Microsoft's documentation read):
 * componenttype 16 (knowledge source), 17 (external trigger), 18 (copilot settings), 19 (test case); the knowledge
 * kinds for Dataverse (`DataverseStructuredSearchSource`) and files (`FileSearchSource`); `gptCapabilities.webBrowsing`.
 */

/** What a component is, for checks. Derived from the `data` YAML `kind:` first, `componenttype` second. */
type AgentComponentKind = 'topic' | 'action' | 'knowledge' | 'mcp' | 'instructions' | 'agent' | 'variable' | 'entity' | 'trigger' | 'other';

/**
 * How an agent component of kind `agent` relates to its parent: `child` = an agent nested in the parent, with its own
 * instructions (`kind: AgentDialog`, trigger `OnToolSelected`, `settings.instructions`); `connected` = another agent of
 * the environment the parent calls (`kind: TaskDialog` with `action.kind: InvokeConnectedAgentTaskAction` and
 * `action.botSchemaName`). Both are stored with componenttype 9 (Topic V2) in real solution exports
 * (microsoft/CopilotStudioSamples: `authoring/solutions/account-contact-lookup/sourcecode/botcomponents/
 * copilots_header_cref7_LookupDataAgent.agent.Agent/`, `extensibility/mcp/order-management-enhanced-tc/agents/
 * sourcecode/OrderManagementMCPDemo/botcomponents/cr26e_OrdersAgent.InvokeConnectedAgentTaskAction.Warehouseagent/`).
 */
type AgentRelation = 'child' | 'connected';

/** Where a knowledge source reads from. */
type KnowledgeSourceType = 'publicWebsite' | 'sharePoint' | 'dataverse' | 'file' | 'graphConnector' | 'other';

/**
 * Credentials a connector tool runs with: `maker` = the connection of the agent's author, shared with every user
 * (`connectionProperties.mode: Maker`); `user` = each end user's own connection (`Invoker`); null when not stated.
 */
type ConnectionMode = 'maker' | 'user' | null;

/** A Copilot Studio agent component (Dataverse `botcomponent`). `id` = `botcomponentid`; slice = environment name. */
export interface AgentComponentAttrs {
  /** `_parentbotid_value`: the agent (bot) the component belongs to; null for shared components (component collections). */
  botId: string | null;
  /** `_parentbotcomponentid_value`: the parent component (a topic's trigger, an action's dialog), or null. */
  parentComponentId: string | null;
  schemaName: string | null;
  /** `componenttype` as stored (0 Topic … 14 Bot File Attachment documented; 15 = instructions in real exports; 16+ UNCONFIRMED). */
  componentType: number | null;
  /** The YAML `kind:` of `data` (`AdaptiveDialog`, `TaskDialog`, `KnowledgeSourceConfiguration`, …), or null. */
  yamlKind: string | null;
  kind: AgentComponentKind;
  /** `statecode`: 0 Active, 1 Inactive. */
  stateCode: number | null;
  /** ISO 8601 UTC. */
  modifiedOn: string | null;
  /** True when `data` was present but not parseable YAML (the component is then classified by componenttype only). */
  dataUnparsed: boolean;
  /** Knowledge sources (`kind: 'knowledge'`). */
  knowledge?: {
    sourceType: KnowledgeSourceType;
    /** The YAML `source.kind`, e.g. `SharePointSearchSource`. */
    sourceKind: string | null;
    /** Site or URL searched (`site` / `siteUrl`), or null (Dataverse, files, Graph connectors). */
    url: string | null;
    /** Host of `url`, lower case, or null. */
    host: string | null;
    /** Graph connector `connectionName`, when a Graph connector. */
    connectionName: string | null;
  };
  /** Connector tools (`kind: 'action'`) and MCP tools (`kind: 'mcp'`). */
  tool?: {
    /** `action.kind`: `InvokeConnectorTaskAction`, `InvokeExternalAgentTaskAction`, `InvokeFlowTaskAction`, … */
    actionKind: string | null;
    /** Connection reference logical name (`action.connectionReference`). */
    connectionReference: string | null;
    /** Connector id taken from the connection reference (`{prefix}.{connectorId}.{suffix}`, e.g. `shared_office365`). */
    connectorId: string | null;
    /**
     * Custom connector (UNCONFIRMED heuristic): a connector id carrying the `-5f` escape that custom connector names
     * get (`shared_cr123-5fmyapi-5f…`), or one not starting with `shared_`.
     */
    customConnector: boolean | null;
    connectionMode: ConnectionMode;
    /** `operationId` (or `operationDetails.operationId`). */
    operationId: string | null;
    /**
     * MCP tools: server URL host when the component carries it (`operationDetails.serverUrl`, UNCONFIRMED); the
     * server URL usually lives in the connector definition, to be joined on `connectorId`.
     */
    serverHost: string | null;
    /** HTTP hosts called by the tool's own dialog (`HttpRequestAction` nodes), lower case, sorted. */
    httpHosts: string[];
    /** Origins (`scheme://host[:port]`, default ports omitted) of those calls, sorted; no paths or queries. */
    httpOrigins: string[];
  };
  /** Child and connected agents (`kind: 'agent'`). */
  agent?: {
    relation: AgentRelation;
    /** `beginDialog.kind` of a child agent (`OnToolSelected`), null for a connected agent. */
    triggerKind: string | null;
    /** Connected agents: the called agent's bot schema name (`action.botSchemaName`); null for child agents. */
    botSchemaName: string | null;
  };
  /**
   * Instructions: of the agent (`kind: 'instructions'`, `GptComponentMetadata.instructions`) or of a child agent
   * (`kind: 'agent'`, `AgentDialog.settings.instructions`). Never the text itself.
   */
  instructions?: {
    /** Length of `instructions` in characters (UTF-16 code units); 0 when absent. */
    length: number;
    /**
     * Whether the text holds a credential, per `inspectText` (`src/inspection/`, findings of kind `secret`). Neither the
     * text nor the finding is stored. Typed nullable for consumers that build attrs by hand; this stream always sets it.
     */
    containsSecret: boolean | null;
    /** `gptCapabilities.webBrowsing` (web search), null when absent (UNCONFIRMED field). */
    webBrowsing: boolean | null;
  };
  /** Topics and triggers (`kind: 'topic' | 'trigger'`). */
  topic?: {
    /** `beginDialog.kind`: `OnRecognizedIntent`, `OnConversationStart`, `OnUnknownIntent`, … */
    triggerKind: string | null;
    /** The dialog contains at least one `HttpRequestAction` node. */
    callsHttp: boolean;
    /** Hosts of the `HttpRequestAction` URLs that are literal (not Power Fx `=` expressions), lower case, sorted. */
    httpHosts: string[];
    /** Origins (`scheme://host[:port]`, default ports omitted) of the literal URLs, sorted; no paths or queries. */
    httpOrigins: string[];
    /** Number of `HttpRequestAction` nodes whose URL is a Power Fx expression (host unknown). */
    dynamicHttpUrls: number;
  };
}

/** Fields of `botcomponent` read by Vigil. */
const BOT_COMPONENT_FIELDS =
  'botcomponentid,name,schemaname,componenttype,category,description,data,content,_parentbotid_value,_parentbotcomponentid_value,reusepolicy,statecode,modifiedon';

/** Every object node of a parsed YAML tree, depth first. */
function* nodes(v: unknown): Generator<Json> {
  if (Array.isArray(v)) for (const x of v) yield* nodes(x);
  else if (v !== null && typeof v === 'object') {
    yield v as Json;
    for (const x of Object.values(v as Json)) yield* nodes(x);
  }
}

/**
 * Origin (`scheme://host[:port]`, lower case, default ports omitted) of an absolute http(s) URL; null otherwise.
 * Keeps what an HTTP-safety check needs (plain HTTP, non-standard ports) without the path or query, which may carry
 * keys.
 */
function urlOrigin(url: string | null): string | null {
  if (!url || url.startsWith('=')) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** Host of an absolute http(s) URL, lower case; null for anything else (Power Fx expressions, relative paths). */
function urlHost(url: string | null): string | null {
  const origin = urlOrigin(url);
  return origin === null ? null : new URL(origin).hostname;
}

/** The `HttpRequestAction` nodes of a dialog: literal hosts and origins (sorted, unique) and the count of expression URLs. */
function httpCalls(tree: unknown): { count: number; hosts: string[]; origins: string[]; dynamic: number } {
  const hosts = new Set<string>();
  const origins = new Set<string>();
  let count = 0;
  let dynamic = 0;
  for (const node of nodes(tree)) {
    if (node.kind !== 'HttpRequestAction') continue;
    count++;
    const url = str(node.url);
    const host = urlHost(url);
    const origin = urlOrigin(url);
    if (host) hosts.add(host);
    else dynamic++;
    if (origin) origins.add(origin);
  }
  return { count, hosts: [...hosts].sort(), origins: [...origins].sort(), dynamic };
}

/** Kind by `componenttype` alone (documented 0–14; 15 instructions seen in real exports; 16–17 UNCONFIRMED). */
function kindFromType(t: number | null): AgentComponentKind {
  switch (t) {
    case 0:
    case 9:
      return 'topic';
    case 2:
    case 12:
      return 'variable';
    case 3:
    case 11:
      return 'entity';
    case 5:
    case 17:
      return 'trigger';
    case 15:
      return 'instructions';
    case 16:
      return 'knowledge';
    default:
      return 'other';
  }
}

const KNOWLEDGE_TYPES: Record<string, KnowledgeSourceType> = {
  PublicSiteSearchSource: 'publicWebsite',
  WebsiteKnowledgeSource: 'publicWebsite',
  SharePointSearchSource: 'sharePoint',
  GraphConnectorSearchSource: 'graphConnector',
  // UNCONFIRMED source kinds (the reference names them only as UI-configured types).
  DataverseStructuredSearchSource: 'dataverse',
  DataverseSearchSource: 'dataverse',
  FileSearchSource: 'file',
};

/** Connector id inside a connection reference logical name `{prefix}.{connectorId}.{suffix}`. */
function connectorOf(reference: string | null): string | null {
  if (!reference) return null;
  const parts = reference.split('.');
  return parts.length >= 3 ? (parts[1] ?? null) : (parts.find((p) => p.startsWith('shared_')) ?? null);
}

function connectionMode(v: unknown): ConnectionMode {
  if (v === 'Maker') return 'maker';
  if (v === 'Invoker') return 'user';
  return null;
}

/**
 * Normalises one `botcomponent` row: YAML `kind:` of `data` first (parsed with `yaml`, never pattern-matched), then
 * `componenttype`. Instruction text is reduced to its length.
 */
export function normaliseComponent(j: Json): AgentComponentAttrs {
  const componentType = num(j.componenttype);
  const data = str(j.data);
  let tree: unknown = null;
  let dataUnparsed = false;
  if (data && data.trim() !== '') {
    try {
      tree = parseYaml(data, { strict: false, uniqueKeys: false, maxAliasCount: 100 });
    } catch {
      dataUnparsed = true;
    }
  }
  const root = objOrNull(tree);
  const yamlKind = str(root?.kind);
  const attrs: AgentComponentAttrs = {
    botId: str(j._parentbotid_value),
    parentComponentId: str(j._parentbotcomponentid_value),
    schemaName: str(j.schemaname),
    componentType,
    yamlKind,
    kind: kindFromType(componentType),
    stateCode: num(j.statecode),
    modifiedOn: str(j.modifiedon),
    dataUnparsed,
  };
  if (!root) return attrs;
  switch (yamlKind) {
    case 'AdaptiveDialog': {
      const begin = objOrNull(root.beginDialog);
      const http = httpCalls(root);
      attrs.kind = componentType === 17 ? 'trigger' : 'topic';
      attrs.topic = {
        triggerKind: str(begin?.kind),
        callsHttp: http.count > 0,
        httpHosts: http.hosts,
        httpOrigins: http.origins,
        dynamicHttpUrls: http.dynamic,
      };
      break;
    }
    case 'AgentDialog': {
      // A child agent: its own instructions go through the same inspection as the agent's (text never kept).
      const text = str(objOrNull(root.settings)?.instructions) ?? '';
      attrs.kind = 'agent';
      attrs.agent = { relation: 'child', triggerKind: str(objOrNull(root.beginDialog)?.kind), botSchemaName: null };
      attrs.instructions = { length: text.length, containsSecret: inspectText(text).matches.some((m) => m.kind === 'secret'), webBrowsing: null };
      break;
    }
    case 'TaskDialog': {
      const action = objOrNull(root.action);
      if (action?.kind === 'InvokeConnectedAgentTaskAction') {
        // A connected agent: another agent of the environment; its instructions are its own bot's components.
        attrs.kind = 'agent';
        attrs.agent = { relation: 'connected', triggerKind: null, botSchemaName: str(action.botSchemaName) };
        break;
      }
      const details = objOrNull(action?.operationDetails);
      const isMcp = details?.kind === 'ModelContextProtocolMetadata';
      const reference = str(action?.connectionReference);
      const connectorId = connectorOf(reference);
      attrs.kind = isMcp ? 'mcp' : 'action';
      attrs.tool = {
        actionKind: str(action?.kind),
        connectionReference: reference,
        connectorId,
        customConnector: connectorId === null ? null : connectorId.includes('-5f') || !connectorId.startsWith('shared_'),
        connectionMode: connectionMode(objOrNull(action?.connectionProperties)?.mode),
        operationId: str(action?.operationId) ?? str(details?.operationId),
        serverHost: urlHost(str(details?.serverUrl)),
        httpHosts: httpCalls(root).hosts,
        httpOrigins: httpCalls(root).origins,
      };
      break;
    }
    case 'KnowledgeSourceConfiguration': {
      const source = objOrNull(root.source);
      const sourceKind = str(source?.kind);
      const url = str(source?.site) ?? str(source?.siteUrl) ?? str(source?.url);
      attrs.kind = 'knowledge';
      attrs.knowledge = {
        sourceType: (sourceKind && KNOWLEDGE_TYPES[sourceKind]) || 'other',
        sourceKind,
        url: url && !url.startsWith('=') ? url : null,
        host: urlHost(url),
        connectionName: str(source?.connectionName),
      };
      break;
    }
    case 'GptComponentMetadata': {
      const text = str(root.instructions) ?? '';
      attrs.kind = 'instructions';
      // Only the length and a boolean leave this function: the text and the inspection excerpts are dropped.
      attrs.instructions = {
        length: text.length,
        containsSecret: inspectText(text).matches.some((m) => m.kind === 'secret'),
        webBrowsing: bool(objOrNull(root.gptCapabilities)?.webBrowsing),
      };
      break;
    }
    case 'GlobalVariableComponent':
      attrs.kind = 'variable';
      break;
    case 'ClosedListEntity':
    case 'RegexEntity':
      attrs.kind = 'entity';
      break;
    case 'ExternalTriggerConfiguration':
      attrs.kind = 'trigger';
      break;
    default:
      break;
  }
  return attrs;
}

/** The row as stored: `data` and `content` replaced by their lengths (they may hold instructions and secrets). */
function storedRaw(j: Json): Json {
  const { data, content, ...rest } = j;
  return { ...rest, dataLength: typeof data === 'string' ? data.length : null, contentLength: typeof content === 'string' ? content.length : null };
}

/** Copilot Studio agent components of every environment with Dataverse. */
export const agentComponentsStream: Stream<'agentComponents', EstateObject<AgentComponentAttrs>> = dataverseEntityStream({
  name: 'agentComponents',
  primaryKey: ['sliceKey', 'id'],
  entitySet: 'botcomponents',
  select: BOT_COMPONENT_FIELDS,
  map: (j, slice): EstateObject<AgentComponentAttrs> => ({
    sliceKey: slice.key,
    id: String(j.botcomponentid),
    name: str(j.name),
    attrs: normaliseComponent(j),
    raw: storedRaw(j),
  }),
});
