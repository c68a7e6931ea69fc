/**
 * Normalised attributes of the Copilot Studio agent-component streams (`agentComponents`, `agentSettings`), read from
 * Dataverse `botcomponents` and the bot `configuration` Memo column.
 *
 * Sources: reference §4.3 (D-bot: `bot.md`, `botcomponent.md`); learn.microsoft.com
 * `/power-apps/developer/data-platform/webapi/reference/botcomponent` (componenttype 0–14); the Copilot Studio YAML
 * written by microsoft/skills-for-copilot-studio (`REFERENCE.md`, `knowledge-guide.md`, eval fixtures under
 * `evals/fixtures/`): `kind: AdaptiveDialog` topics, `TaskDialog` actions with `connectionProperties.mode`
 * `Maker`/`Invoker`, `KnowledgeSourceConfiguration` with `PublicSiteSearchSource`/`SharePointSearchSource`/
 * `GraphConnectorSearchSource`, `GlobalVariableComponent`, `GptComponentMetadata` (instructions).
 * Child agents (`AgentDialog`) and connected agents (`TaskDialog` + `InvokeConnectedAgentTaskAction`) as exported in
 * microsoft/CopilotStudioSamples solutions (MIT), where componenttype 15 holds `GptComponentMetadata` and 9 holds topics,
 * tools, child and connected agents alike.
 * UNCONFIRMED (not in Microsoft's documentation read): componenttype 16 (knowledge
 * source), 17 (external trigger), 18 (copilot settings), 19 (test case); the knowledge kinds for Dataverse
 * (`DataverseStructuredSearchSource`) and files (`FileSearchSource`); `gptCapabilities.webBrowsing`;
 * `aISettings.contentModeration`; channels in the bot `configuration` (`channels[].channelId`).
 */

/** What a component is, for checks. Derived from the `data` YAML `kind:` first, `componenttype` second. */
export type AgentComponentKind = 'topic' | 'action' | 'knowledge' | 'mcp' | 'instructions' | 'agent' | 'variable' | 'entity' | 'trigger' | 'other';

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
export type KnowledgeSourceType = 'publicWebsite' | 'sharePoint' | 'dataverse' | 'file' | 'graphConnector' | 'other';

/**
 * Credentials a connector tool runs with: `maker` = the connection of the agent's author, shared with every user
 * (`connectionProperties.mode: Maker`); `user` = each end user's own connection (`Invoker`); null when not stated.
 */
export type ConnectionMode = 'maker' | 'user' | null;

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

/** A published channel of an agent. `channelId` as stored (`msteams`, `webchat`, `directline`, `facebook`, …). */
export interface AgentChannel {
  channelId: string;
  /** Normalised family: `teams` (Teams and Microsoft 365 Copilot), `demoWebsite`, `customWebsite`, `directLine`, `facebook`, `other`. */
  family: 'teams' | 'demoWebsite' | 'customWebsite' | 'directLine' | 'facebook' | 'other';
}

/**
 * Generative-AI settings and channels of one agent, parsed from the bot `configuration` Memo (stream
 * `agentSettings`; `id` = botid; slice = environment name). Every field is null when the configuration lacks it.
 */
export interface AgentSettingsAttrs {
  botId: string;
  /** `configuration` was present and parsed as JSON. */
  configurationParsed: boolean;
  /** `settings.GenerativeActionsEnabled`: generative orchestration. */
  generativeActionsEnabled: boolean | null;
  /** `aISettings.useModelKnowledge`: "Use general knowledge" (answers from the model beyond the knowledge sources). */
  useModelKnowledge: boolean | null;
  /** `aISettings.isFileAnalysisEnabled`. */
  fileAnalysisEnabled: boolean | null;
  /** `aISettings.contentModeration` (`Low` | `Medium` | `High`; UNCONFIRMED field name). */
  contentModeration: string | null;
  /** `isAgentConnectable`: other agents may call this one. */
  agentConnectable: boolean | null;
  /** `recognizer.$kind`. */
  recognizer: string | null;
  /** Published channels (`configuration.channels[]`, UNCONFIRMED source); null when not recorded. */
  channels: AgentChannel[] | null;
}
