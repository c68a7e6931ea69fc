/**
 * Copilot Studio agent components (Dataverse `botcomponent` rows) for the emulated tenants: the model, a generator with
 * its own random stream, and the ground truth a complete collection must find.
 *
 * Rows follow the `botcomponent` entity (learn.microsoft.com `/power-apps/developer/data-platform/webapi/reference/
 * botcomponent`, componenttype 0–14) and the Copilot Studio YAML of microsoft/skills-for-copilot-studio (`REFERENCE.md`,
 * `knowledge-guide.md`, eval fixtures): topics `kind: AdaptiveDialog` (componenttype 9), connector and MCP tools
 * `kind: TaskDialog` (componenttype 9, `connectionProperties.mode: Maker | Invoker`), knowledge
 * `kind: KnowledgeSourceConfiguration` (componenttype 16, UNCONFIRMED), instructions `kind: GptComponentMetadata`
 * (componenttype 15, as in real exports), variables `kind: GlobalVariableComponent` (componenttype 12), child agents
 * `kind: AgentDialog` and connected agents `kind: TaskDialog` + `InvokeConnectedAgentTaskAction` (both componenttype 9,
 * schema names `{bot}.agent.Agent_{x}` / `{bot}.InvokeConnectedAgentTaskAction.{Name}`, as in the microsoft/
 * CopilotStudioSamples solution exports copied to test/fixtures/real/powerbi-agents/). The bot
 * `configuration` gets `channels[].channelId` and `aISettings.contentModeration` (both UNCONFIRMED field names).
 */
import { parse as parseYaml } from 'yaml';
import { SYSTEM_ADMINISTRATOR } from './constants.ts';
import { createRng, type Rng } from './prng.ts';
import type { Environment, Tenant } from './tenant.ts';

/** A Dataverse `botcomponent` row as served. Dates ISO 8601 UTC; `data` is the component's YAML. */
export interface BotComponent {
  botcomponentid: string;
  name: string;
  schemaname: string;
  /** 9 Topic (V2) for topics and tools, 12 Bot variable (V2), 15 instructions, 16 knowledge (15/16 UNCONFIRMED). */
  componenttype: number;
  category: string | null;
  description: string | null;
  data: string | null;
  content: string | null;
  _parentbotid_value: string | null;
  _parentbotcomponentid_value: string | null;
  /** 0 Private, 1 Public, 2 Internal. */
  reusepolicy: number;
  statecode: number;
  statuscode: number;
  createdon: string;
  modifiedon: string;
}

/** Kinds counted by the ground truth (the same classification Vigil documents). */
export const COMPONENT_KINDS = ['topic', 'action', 'knowledge', 'mcp', 'instructions', 'agent', 'variable', 'entity', 'trigger', 'other'] as const;
export type ComponentKind = (typeof COMPONENT_KINDS)[number];

/** The secret planted in one agent's instructions (tests assert it never reaches Vigil's database in plain text). */
export const PLANTED_SECRET_PREFIX = 'sk_live_';

const HEX = '0123456789abcdef';
const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
const PUBLIC_SITES = ['https://learn.microsoft.com/en-us/', 'https://www.contoso.com/support', 'https://docs.fabrikam.net/', 'https://en.wikipedia.org/wiki/'];
/** Origins topics call with `HttpRequestAction`: two are insecure (plain HTTP, a non-standard port), as Maester's HTTP check looks for. */
const HTTP_ORIGINS = [
  'https://api.openweathermap.org',
  'https://hooks.slack.com',
  'http://webhook.site',
  'https://api.fabrikam-erp.com:8443',
  'https://prod-12.westeurope.logic.azure.com',
];
const CONNECTORS = ['shared_office365', 'shared_sharepointonline', 'shared_sql', 'shared_servicenow', 'shared_commondataserviceforapps'];
const MCP_CONNECTORS = ['shared_microsoftlearndocsmcpserver', 'shared_githubmcpserver'];

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** YAML text of a topic; `http` origins become `HttpRequestAction` nodes. */
function topicYaml(trigger: string, http: string[], dynamicHttp: boolean): string {
  const actions = [
    '    - kind: SendActivity',
    '      id: sendActivity_1',
    '      activity: Hello, how can I help?',
    ...http.flatMap((h, i) => [`    - kind: HttpRequestAction`, `      id: http_${i}`, `      method: Post`, `      url: ${h}/v1/items`]),
    ...(dynamicHttp ? ['    - kind: HttpRequestAction', '      id: http_dyn', '      url: ="https://" & Global.ApiHost & "/lookup"'] : []),
  ];
  return [
    'kind: AdaptiveDialog',
    'beginDialog:',
    `  kind: ${trigger}`,
    '  id: main',
    ...(trigger === 'OnRecognizedIntent' ? ['  intent:', '    triggerQueries:', '      - order status'] : []),
    '  actions:',
    ...actions,
    '',
  ].join('\n');
}

/** Adds components to every bot of every Dataverse environment, and channels/moderation to the bot configuration. */
export function generateAgentComponents(options: {
  seed: number | string;
  environments: Environment[];
  domain: string;
  nowMs: number;
  perAgent: number;
}): void {
  const rng: Rng = createRng(`${String(options.seed)}:agentcomponents`);
  const tenantSlug = options.domain.split('.')[0] ?? 'contoso';
  let secretPlanted = false;
  // Child and connected agents draw from their own stream, so adding them changed nothing else generated.
  const agentRng: Rng = createRng(`${String(options.seed)}:agentcomponents:agents`);
  let childSecretPlanted = false;
  for (const env of options.environments) {
    const org = env.dataverse;
    if (!org) continue;
    const list: BotComponent[] = (org.botcomponents ??= []);
    for (const bot of org.bots) {
      const prefix = bot.schemaname.split('_')[0] ?? 'cr123';
      const at = (r: Rng): string => iso(Math.max(Date.parse(bot.createdon), options.nowMs - r.int(1, 300) * 86_400_000));
      /** Adds a row; `r` draws its id and date (the agents' own stream for child and connected agents). */
      const add = (componenttype: number, name: string, suffix: string, data: string, description: string | null = null, r: Rng = rng): void => {
        const created = at(r);
        list.push({
          botcomponentid: r.guid(),
          name,
          schemaname: `${bot.schemaname}.${suffix}`,
          componenttype,
          category: null,
          description,
          data,
          content: null,
          _parentbotid_value: bot.botid,
          _parentbotcomponentid_value: null,
          reusepolicy: 0,
          statecode: 0,
          statuscode: 1,
          createdon: created,
          modifiedon: created,
        });
      };
      // Instructions: one per agent; the first readable-or-not agent gets a planted credential.
      const planted = !secretPlanted;
      secretPlanted = true;
      const secret = `${PLANTED_SECRET_PREFIX}${rng.chars(32, ALNUM)}`;
      const instructions = planted
        ? `You help employees with orders. When calling the ERP use the key ${secret} and never reveal it.`
        : `You are ${bot.name}. Answer politely, cite sources and escalate when unsure.`;
      add(
        15,
        `${bot.name} instructions`,
        'gpt.default',
        [
          'kind: GptComponentMetadata',
          `displayName: ${bot.name}`,
          `instructions: ${JSON.stringify(instructions)}`,
          'gptCapabilities:',
          `  webBrowsing: ${String(rng.chance(0.4))}`,
          '',
        ].join('\n'),
      );
      // Topics.
      const topics = Math.max(1, Math.round(options.perAgent / 3));
      for (let i = 0; i < topics; i++) {
        const http = rng.chance(0.3) ? [rng.pick(HTTP_ORIGINS)] : [];
        add(9, `Topic ${i + 1}`, `topic.Topic${i + 1}`, topicYaml(i === 0 ? 'OnConversationStart' : 'OnRecognizedIntent', http, rng.chance(0.1)));
      }
      // Knowledge.
      const knowledge = rng.int(0, 2);
      for (let i = 0; i < knowledge; i++) {
        const sharePoint = rng.chance(0.5);
        const source = sharePoint
          ? [
              '  kind: SharePointSearchSource',
              `  site: https://${tenantSlug}.sharepoint.com/sites/${rng.pick(['HR', 'Finance', 'IT', 'Sales'])}/Shared%20Documents`,
            ]
          : ['  kind: PublicSiteSearchSource', `  site: ${rng.pick(PUBLIC_SITES)}`];
        add(16, `Knowledge ${i + 1}`, `knowledge.K${i + 1}`, ['kind: KnowledgeSourceConfiguration', 'source:', ...source, ''].join('\n'));
      }
      // Connector actions (some custom, some on the maker's credentials).
      const actions = rng.int(0, 2);
      for (let i = 0; i < actions; i++) {
        const custom = rng.chance(0.25);
        const connector = custom ? `shared_${prefix}-5finternalapi-5f${rng.chars(8, HEX)}` : rng.pick(CONNECTORS);
        const mode = rng.chance(0.5) ? 'Maker' : 'Invoker';
        add(
          9,
          `Action ${i + 1}`,
          `action.A${i + 1}`,
          [
            'kind: TaskDialog',
            `modelDisplayName: Action ${i + 1}`,
            'action:',
            '  kind: InvokeConnectorTaskAction',
            `  connectionReference: ${prefix}_${bot.schemaname.split('_')[1] ?? 'agent'}.${connector}.${rng.chars(6, HEX)}`,
            '  connectionProperties:',
            `    mode: ${mode}`,
            `  operationId: ${rng.pick(['GetItems', 'SendEmailV2', 'ExecuteQuery', 'CreateRecord'])}`,
            '',
          ].join('\n'),
        );
      }
      // MCP tools.
      if (rng.chance(0.3)) {
        add(
          9,
          'MCP server',
          'action.Mcp',
          [
            'kind: TaskDialog',
            'modelDisplayName: MCP server',
            'action:',
            '  kind: InvokeExternalAgentTaskAction',
            `  connectionReference: ${prefix}_x.${rng.pick(MCP_CONNECTORS)}.${rng.chars(6, HEX)}`,
            '  connectionProperties:',
            `    mode: ${rng.chance(0.5) ? 'Maker' : 'Invoker'}`,
            '  operationDetails:',
            '    kind: ModelContextProtocolMetadata',
            '    operationId: InvokeMCP',
            '',
          ].join('\n'),
        );
      }
      // Child agents (the first one of the tenant gets a credential in its instructions) and connected agents.
      if (!childSecretPlanted || agentRng.chance(0.3)) {
        const planted = !childSecretPlanted;
        childSecretPlanted = true;
        const text = planted
          ? `This agent looks up invoices. Call the billing API with the key ${PLANTED_SECRET_PREFIX}${agentRng.chars(32, ALNUM)} in the x-api-key header.`
          : 'This agent answers questions about invoices from the finance knowledge sources only.';
        const name = agentRng.pick(['Invoice Agent', 'Account Agent', 'Job Finder Agent']);
        add(
          9,
          name,
          `agent.Agent_${agentRng.chars(3, ALNUM)}`,
          [
            'kind: AgentDialog',
            'beginDialog:',
            '  kind: OnToolSelected',
            '  id: main',
            `  description: ${name} handles these requests`,
            '',
            'settings:',
            '  instructions: |-',
            `    ${text}`,
            '',
            'inputType: {}',
            'outputType: {}',
          ].join('\n'),
          null,
          agentRng,
        );
      }
      const others = org.bots.filter((o) => o.botid !== bot.botid);
      if (others.length > 0 && agentRng.chance(0.25)) {
        const target = agentRng.pick(others);
        const name = target.name.replace(/[^A-Za-z0-9]/g, '');
        add(
          9,
          target.name,
          `InvokeConnectedAgentTaskAction.${name}`,
          [
            'kind: TaskDialog',
            `modelDisplayName: ${target.name}`,
            `modelDescription: ${target.name} used for these requests`,
            'action:',
            '  kind: InvokeConnectedAgentTaskAction',
            `  botSchemaName: ${target.schemaname}`,
            '  historyType:',
            '    kind: ConversationHistory',
          ].join('\n'),
          target.name,
          agentRng,
        );
      }
      // Global variables.
      if (rng.chance(0.5))
        add(
          12,
          'ApiHost',
          'GlobalVariableComponent.ApiHost',
          ['kind: GlobalVariableComponent', 'variable:', '  scope: Conversation', '  name: ApiHost', ''].join('\n'),
        );
      // Channels and content moderation on the bot configuration (UNCONFIRMED field names).
      if (bot.configuration) {
        const conf = JSON.parse(bot.configuration) as Record<string, unknown>;
        const channels = [
          'msteams',
          ...(rng.chance(0.5) ? ['webchat'] : []),
          ...(rng.chance(0.3) ? ['directline'] : []),
          ...(rng.chance(0.1) ? ['facebook'] : []),
        ];
        conf.channels = channels.map((channelId) => ({ channelId }));
        const ai = (conf.aISettings ?? {}) as Record<string, unknown>;
        ai.contentModeration = rng.pick(['Low', 'Medium', 'High']);
        conf.aISettings = ai;
        bot.configuration = JSON.stringify(conf);
      }
    }
  }
}

/** Kind of one component from its YAML `kind:` and componenttype (independent re-derivation for ground truth). */
export function componentKind(c: BotComponent): ComponentKind {
  let root: Record<string, unknown> | null = null;
  try {
    const t = c.data ? (parseYaml(c.data) as unknown) : null;
    root = t && typeof t === 'object' && !Array.isArray(t) ? (t as Record<string, unknown>) : null;
  } catch {
    root = null;
  }
  const kind = root?.kind;
  if (kind === 'AdaptiveDialog') return 'topic';
  if (kind === 'AgentDialog') return 'agent';
  if (kind === 'TaskDialog') {
    const action = (root?.action ?? {}) as Record<string, unknown>;
    if (action.kind === 'InvokeConnectedAgentTaskAction') return 'agent';
    const details = (action.operationDetails ?? {}) as Record<string, unknown>;
    return details.kind === 'ModelContextProtocolMetadata' ? 'mcp' : 'action';
  }
  if (kind === 'KnowledgeSourceConfiguration') return 'knowledge';
  if (kind === 'GptComponentMetadata') return 'instructions';
  if (kind === 'GlobalVariableComponent') return 'variable';
  return (
    (
      {
        0: 'topic',
        9: 'topic',
        2: 'variable',
        12: 'variable',
        3: 'entity',
        11: 'entity',
        5: 'trigger',
        17: 'trigger',
        15: 'instructions',
        16: 'knowledge',
      } as Record<number, ComponentKind>
    )[c.componenttype] ?? 'other'
  );
}

/** Whether a parsed YAML tree holds an `HttpRequestAction` node. */
function hasHttpRequest(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasHttpRequest);
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return o.kind === 'HttpRequestAction' || Object.values(o).some(hasHttpRequest);
}

/** What a complete collection of agent components must find. */
export interface AgentComponentsGroundTruth {
  /** Components in readable environments. */
  components: number;
  byKind: Record<ComponentKind, number>;
  /** Components in Dataverse environments the connector cannot read. */
  componentsUnreadable: number;
  /** Bots in readable environments (one `agentSettings` object each). */
  agentSettings: number;
  /** Readable environments (one slice each). */
  readableEnvironments: number;
  unreadableEnvironments: number;
  /** Readable connector/MCP tools whose YAML says `mode: Maker`. */
  makerCredentialTools: number;
  /** Readable knowledge sources by YAML `source.kind`. */
  knowledgeBySourceKind: Record<string, number>;
  /** Readable topics with at least one `HttpRequestAction`. */
  topicsCallingHttp: number;
  /** Every planted instruction secret (readable or not). */
  plantedSecrets: string[];
  /** Planted secrets in readable environments. */
  plantedSecretsReadable: number;
}

/**
 * Recomputes the expected `agentComponents` / `agentSettings` results from the tenant: readable = the connector app
 * (`appId`, default `tenant.connectorAppId`) is an application user with System Administrator.
 */
export function agentComponentsGroundTruth(tenant: Tenant, options: { appId?: string } = {}): AgentComponentsGroundTruth {
  const appId = options.appId ?? tenant.connectorAppId ?? null;
  const byKind = Object.fromEntries(COMPONENT_KINDS.map((k) => [k, 0])) as Record<ComponentKind, number>;
  const out: AgentComponentsGroundTruth = {
    components: 0,
    byKind,
    componentsUnreadable: 0,
    agentSettings: 0,
    readableEnvironments: 0,
    unreadableEnvironments: 0,
    makerCredentialTools: 0,
    knowledgeBySourceKind: {},
    topicsCallingHttp: 0,
    plantedSecrets: [],
    plantedSecretsReadable: 0,
  };
  for (const env of tenant.environments) {
    const org = env.dataverse;
    if (!org) continue;
    const readable = appId !== null && org.appUsers.some((a) => a.appId === appId && a.roles.includes(SYSTEM_ADMINISTRATOR));
    const comps = org.botcomponents ?? [];
    // The planted secret has a fixed prefix; the match below finds it in the generated text (not a YAML parse).
    for (const c of comps) {
      const m = c.data ? /(sk_live_[A-Za-z0-9]+)/.exec(c.data) : null;
      if (m) {
        out.plantedSecrets.push(m[1]!);
        if (readable) out.plantedSecretsReadable++;
      }
    }
    if (!readable) {
      out.unreadableEnvironments++;
      out.componentsUnreadable += comps.length;
      continue;
    }
    out.readableEnvironments++;
    out.agentSettings += org.bots.length;
    out.components += comps.length;
    for (const c of comps) {
      const kind = componentKind(c);
      byKind[kind]++;
      const tree = (c.data ? parseYaml(c.data) : null) as Record<string, unknown> | null;
      if (
        (kind === 'action' || kind === 'mcp') &&
        ((tree?.action as Record<string, unknown>)?.connectionProperties as Record<string, unknown>)?.mode === 'Maker'
      )
        out.makerCredentialTools++;
      if (kind === 'knowledge') {
        const sk = String((tree?.source as Record<string, unknown>)?.kind);
        out.knowledgeBySourceKind[sk] = (out.knowledgeBySourceKind[sk] ?? 0) + 1;
      }
      if (kind === 'topic' && hasHttpRequest(tree)) out.topicsCallingHttp++;
    }
  }
  return out;
}

/**
 * Risky facts one agent's components carry, from the generator's own shapes (an independent re-derivation for ground
 * truth): `mcpTool` (an active MCP tool), `makerCredentialTool` (a connector or MCP tool with `mode: Maker`),
 * `plantedSecret` (a planted credential in instructions or a child agent's instructions), `insecureHttp` (a topic's
 * `HttpRequestAction` to plain HTTP or a non-standard port; URLs built at run time are not judged), `sendsEmail` (a
 * connector tool whose operation sends mail), `noInstructions` (no instructions component with text).
 */
export function agentComponentFacts(components: readonly BotComponent[]): string[] {
  const facts = new Set<string>();
  let instructions = false;
  for (const c of components) {
    const kind = componentKind(c);
    const tree = (c.data ? parseYaml(c.data) : null) as Record<string, unknown> | null;
    const action = (tree?.action ?? {}) as Record<string, unknown>;
    if (c.data && new RegExp(`${PLANTED_SECRET_PREFIX}[A-Za-z0-9]+`).test(c.data)) facts.add('plantedSecret');
    if (kind === 'instructions' && typeof tree?.instructions === 'string' && tree.instructions.length > 0) instructions = true;
    if (kind === 'mcp' && c.statecode !== 1) facts.add('mcpTool');
    if ((kind === 'action' || kind === 'mcp') && (action.connectionProperties as Record<string, unknown> | undefined)?.mode === 'Maker')
      facts.add('makerCredentialTool');
    if (kind === 'action' && /send_?(an_?)?e?mail/i.test(String(action.operationId ?? ''))) facts.add('sendsEmail');
    if (kind === 'topic' && c.data) {
      for (const m of c.data.matchAll(/^\s*url: (\S+)$/gm)) {
        const url = m[1]!;
        if (url.startsWith('=')) continue;
        const origin = /^(https?:\/\/[^/]+)/.exec(url)?.[1] ?? '';
        if (origin.startsWith('http://') || /:\d+$/.test(origin)) facts.add('insecureHttp');
      }
    }
  }
  if (!instructions) facts.add('noInstructions');
  return [...facts].sort();
}
