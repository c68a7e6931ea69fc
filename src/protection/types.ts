/**
 * Runtime protection (issue 19): Vigil as Copilot Studio's external threat-detection provider. These are the shapes the
 * parts share — the tool execution Copilot Studio asks about (normalised from the `analyze-tool-execution` body), the
 * inventory snapshot detectors judge it against, a detector's verdict, the organization's policy, and the decision.
 *
 * Sources: https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers (the
 * request and response bodies), https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider
 * (behaviour: called before every tool a generative-orchestration agent intends to run, answer expected within
 * 1,000 ms, the environment's error behaviour on timeout or error); ../shared/reference/threat-detection-webhook.md.
 */

/** A chat message of `plannerContext.chatHistory`. */
export interface ChatMessage {
  id: string;
  /** `user` or `assistant` as sent (other values kept). */
  role: string;
  content: string;
  /** ISO 8601 as sent, or null. */
  timestamp: string | null;
}

/**
 * A previous tool's output (`plannerContext.previousToolsOutputs`, also accepted as `previousToolOutputs`). `outputs`
 * is documented as `[{name, value}]`; an object map (`{name: value}`) seen in implementers' samples is accepted and
 * turned into the same list. Values that are not strings are JSON-serialised.
 */
export interface ToolOutput {
  toolId: string;
  toolName: string;
  outputs: { name: string; value: string }[];
  timestamp: string | null;
}

/** A declared parameter of the tool (`toolDefinition.inputParameters[]` / `outputParameters[]`). */
export interface ToolParameter {
  name: string;
  description: string;
  /** `type.$kind` (e.g. `String`), or null when absent. */
  kind: string | null;
}

/** The tool the orchestrator intends to run (`toolDefinition`). */
export interface ToolDescriptor {
  /** e.g. `cra65_otpdemo.action.SendEmail-SendEmail`: the agent component's schema name for component tools. */
  id: string;
  /** e.g. `ToolDefinition`, `CustomConnectorToolDefinition`, `PrebuiltToolDefinition` (as sent; '' when absent). */
  type: string;
  name: string;
  description: string;
  inputParameters: ToolParameter[];
  outputParameters: ToolParameter[];
}

/** `conversationMetadata`, flattened. Every field is '' (strings) or null when Copilot Studio did not send it. */
export interface ConversationMeta {
  agentId: string;
  agentName: string;
  agentVersion: string;
  agentPublished: boolean | null;
  /** `agent.tenantId`: never trusted for routing (the token's `tid` is). */
  tenantId: string;
  environmentId: string;
  userId: string;
  userTenantId: string;
  triggerId: string;
  triggerSchemaName: string;
  conversationId: string;
  messageId: string;
  channelId: string;
  planId: string;
  planStepId: string;
  parentAgentComponentId: string;
  incomingClientIp: string;
}

/** One `analyze-tool-execution` call, normalised (protection/request.ts). */
export interface ToolExecution {
  userMessage: string;
  /** The orchestrator's reason for choosing the tool. */
  thought: string;
  chatHistory: ChatMessage[];
  previousOutputs: ToolOutput[];
  tool: ToolDescriptor;
  /** `inputValues`: parameter name → the value the model proposes, as sent. */
  inputs: Record<string, unknown>;
  meta: ConversationMeta;
  /** True when a text was cut to the size the detectors read (so their cost stays bounded). */
  truncated: boolean;
}

/** A tool of an agent as Vigil last collected it (from the `agentComponents` stream). */
export interface AgentToolSnapshot {
  /** The component's schema name, e.g. `cra65_otpdemo.action.SendEmail-SendEmail`. */
  schemaName: string;
  /** `action` (connector, flow, HTTP…), `mcp` or `agent` (child/connected agent). */
  kind: string;
  actionKind: string | null;
  /** e.g. `shared_office365`, `shared_sendmail`; null when not a connector tool. */
  connectorId: string | null;
  customConnector: boolean | null;
  operationId: string | null;
  /** MCP server host when known, lower case. */
  serverHost: string | null;
  /** Hosts the tool's own dialog calls over HTTP, lower case. */
  httpHosts: string[];
}

/** An agent as last collected. */
export interface AgentSnapshot {
  /** Dataverse `botid`, lower case. */
  id: string;
  environmentId: string;
  name: string | null;
  schemaName: string | null;
  tools: AgentToolSnapshot[];
  /** Hosts of the agent's knowledge sources (public websites, SharePoint), lower case. */
  knowledgeHosts: string[];
}

/**
 * What Vigil already knows of the integration's estate, for detectors. Built from the store off the hot path and cached
 * (protection/snapshot.ts); detectors never query the store.
 */
export interface ProtectionSnapshot {
  /** When the inventory behind it was last collected (ISO 8601 UTC), or null: never collected. */
  collectedAt: string | null;
  /** By `botid` lower case. An agent absent here was not in the last collection (or was never collected). */
  agents: ReadonlyMap<string, AgentSnapshot>;
  /** E-mail domains of the tenant (from its members' user principal names and mail), lower case. */
  tenantDomains: ReadonlySet<string>;
  /** Connector ids in a DLP policy's Business group per environment id ('*' = tenant-wide policies). */
  businessConnectors: ReadonlyMap<string, ReadonlySet<string>>;
}

/** The organization's allow-lists (policy data, lower case). */
export interface AllowLists {
  /** MCP server hosts allowed. */
  mcpServers: string[];
  /** Connector ids allowed (e.g. `shared_office365`). Empty = no connector allow-list is enforced. */
  connectors: string[];
  /** Hosts an agent may send data to over HTTP. */
  hosts: string[];
  /** E-mail domains counted as internal besides the tenant's own. */
  internalDomains: string[];
}

/** Identifiers of the detectors (protection/detectors/<id>.ts). */
export type DetectorId = 'prompt_injection' | 'jailbreak' | 'sensitive_data_egress' | 'external_recipient' | 'unapproved_tool' | 'changed_agent';

/** A detector's evidence: where it looked and what it saw, redacted (never a secret or a personal-data value). */
export interface Evidence {
  /** Where in the request: `plannerContext.previousToolsOutputs[0].outputs[1].value`, `inputValues.to`, `toolDefinition.id`. */
  field: string;
  /** What matched, e.g. the pattern's name (`ignore-previous-instructions`) or the inspection type (`aws_access_key`). */
  match: string;
  /** A redacted excerpt (≤ 160 characters), secrets and personal data masked. */
  excerpt: string;
}

/** What one detector concluded. */
export interface Verdict {
  detector: DetectorId;
  /** True when the detector saw what it looks for. */
  detected: boolean;
  /** 0–1: how sure the detector is (policies block only at or above their threshold). */
  confidence: number;
  /** A one-line summary for people, no secret values. */
  summary: string;
  evidence: Evidence[];
}

/** Context every detector receives besides the request. */
export interface DetectorContext {
  snapshot: ProtectionSnapshot;
  allow: AllowLists;
}

/**
 * A protection detector: a pure, synchronous function (no I/O, no clock) over a tool execution and the snapshot.
 * Its cost is bounded by the request's size caps (protection/request.ts); the engine measures each one.
 */
export interface ProtectionDetector {
  id: DetectorId;
  title: string;
  /** What it looks for and why, for docs/protection.md. */
  description: string;
  /** OWASP LLM Top 10 2025 items (e.g. `LLM01:2025`) and MITRE ATLAS techniques (e.g. `AML.T0051`). */
  mappings: string[];
  run(exec: ToolExecution, ctx: DetectorContext): Verdict;
}

/** `monitor`: decide and record, never block. `block`: answer `blockAction: true` when a blocking detector fires. */
export type ProtectionMode = 'monitor' | 'block';

/** What a detector's detection does under a policy. */
export type DetectorAction = 'block' | 'alert' | 'record' | 'off';

/** A detector's setting in a policy. */
export interface DetectorSetting {
  action: DetectorAction;
  /** Minimum confidence for `block` (and `alert`) to apply; below it the detection is recorded only. 0–1. */
  threshold: number;
}

/**
 * A policy: data, stored per organization, optionally narrowed to an integration, an environment and an agent. The most
 * specific policy that matches a call decides (agent > environment > integration > organization); fields it leaves
 * unset come from the next less specific one, then from {@link DEFAULT_POLICY}-like defaults of protection/policy.ts.
 */
export interface ProtectionPolicy {
  id: string;
  organizationId: string;
  integrationId: string | null;
  environmentId: string | null;
  agentId: string | null;
  mode?: ProtectionMode;
  detectors?: Partial<Record<DetectorId, Partial<DetectorSetting>>>;
  allow?: Partial<AllowLists>;
  /** Internal decision budget, milliseconds (Copilot Studio waits at most 1,000 ms). */
  deadlineMs?: number;
  /** The answer when the budget runs out or a detector throws: `allow` (Copilot Studio's own default) or `block`. */
  onTimeout?: 'allow' | 'block';
}

/** A policy with every field resolved for one call, and the ids of the policies it came from (most specific first). */
export interface EffectivePolicy {
  mode: ProtectionMode;
  detectors: Record<DetectorId, DetectorSetting>;
  allow: AllowLists;
  deadlineMs: number;
  onTimeout: 'allow' | 'block';
  policyIds: string[];
}

/** The outcome of one call, as answered and as recorded. */
export interface Decision {
  /** What Copilot Studio is told. */
  blockAction: boolean;
  /** True when block mode would have blocked but the mode is `monitor` (recorded, not answered). */
  wouldBlock: boolean;
  /** 0 = allowed; 1xx = a detector's block (see protection/engine.ts REASON_CODES); 900 = timeout default; 901 = error default. */
  reasonCode: number;
  /** Shown in Copilot Studio's logs: names the detector and the policy, never a secret. */
  reason: string;
  /** The detector that decided a block, or null. */
  decidedBy: DetectorId | null;
  /** Every detector's verdict (those that ran before the deadline). */
  verdicts: Verdict[];
  /** The policy that applied (most specific id first), and its mode. */
  policyIds: string[];
  mode: ProtectionMode;
  /** True when the internal budget ran out and `onTimeout` answered. */
  timedOut: boolean;
  /** Detectors not run because the budget ran out. */
  skipped: DetectorId[];
  /** Milliseconds spent deciding (engine only, not HTTP). */
  elapsedMs: number;
}
