import { parseToolExecution } from '../../../src/protection/request.ts';
import type { AgentSnapshot, AgentToolSnapshot, AllowLists, DetectorContext, ProtectionSnapshot, ToolExecution } from '../../../src/protection/types.ts';

/**
 * An `analyze-tool-execution` body in the shape Microsoft Learn documents
 * (https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers): an agent
 * about to send an e-mail with the Office 365 Outlook connector.
 */
export function body(
  over: { planner?: Record<string, unknown>; tool?: Record<string, unknown>; inputs?: Record<string, unknown>; meta?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    plannerContext: {
      userMessage: 'Send the quarterly summary to megan@contoso.com',
      thought: 'The user wants to send an email; I will call SendEmail.',
      chatHistory: [
        { id: 'm1', role: 'user', content: 'Hi', timestamp: '2026-11-20T08:00:00Z' },
        { id: 'm2', role: 'assistant', content: 'Hello! How can I help?', timestamp: '2026-11-20T08:00:01Z' },
      ],
      previousToolsOutputs: [],
      ...over.planner,
    },
    toolDefinition: {
      id: 'cra65_otpdemo.action.SendEmail-SendEmail',
      type: 'ToolDefinition',
      name: 'Send an email (V2)',
      description: 'This operation sends an email message.',
      inputParameters: [
        { name: 'To', description: 'Specify email addresses separated by semicolons', type: { $kind: 'String' } },
        { name: 'Subject', description: 'Specify the subject of the mail', type: { $kind: 'String' } },
        { name: 'Body', description: 'Specify the body of the mail', type: { $kind: 'String' } },
      ],
      outputParameters: [],
      ...over.tool,
    },
    inputValues: over.inputs ?? { To: 'megan@contoso.com', Subject: 'Q3 summary', Body: 'Revenue grew 4%.' },
    conversationMetadata: {
      agent: {
        id: 'a1b2c3d4-0000-4000-8000-000000000001',
        tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47',
        environmentId: 'Default-72f988bf-86f1-41af-91ab-2d7cd011db47',
        name: 'OTP demo',
        version: '1.0',
        isPublished: true,
      },
      user: { id: 'user-1', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47' },
      trigger: { id: 't1', schemaName: 'cra65_otpdemo.topic.ConversationStart' },
      conversationId: 'conv-1',
      messageId: 'msg-1',
      channelId: 'msteams',
      planId: 'plan-1',
      planStepId: 'step-1',
      parentAgentComponentId: '',
      incomingClientIp: '203.0.113.7',
      ...over.meta,
    },
  };
}

/** {@link body}, parsed. */
export const exec = (over: Parameters<typeof body>[0] = {}): ToolExecution => parseToolExecution(body(over));

/** One previous tool output whose single value is `value`. */
export const output = (value: string, toolName = 'Get emails') => ({
  toolId: 'cra65_otpdemo.action.GetEmails-GetEmails',
  toolName,
  outputs: [{ name: 'body', value }],
  timestamp: '2026-11-20T08:00:02Z',
});

/** A component of the agent. */
export function tool(over: Partial<AgentToolSnapshot> = {}): AgentToolSnapshot {
  return {
    schemaName: 'cra65_otpdemo.action.SendEmail-SendEmail',
    kind: 'action',
    actionKind: 'connector',
    connectorId: 'shared_office365',
    customConnector: false,
    operationId: 'SendEmailV2',
    serverHost: null,
    httpHosts: [],
    ...over,
  };
}

/** The fixture agent with `tools`. */
export function agent(tools: AgentToolSnapshot[] = [tool()], over: Partial<AgentSnapshot> = {}): AgentSnapshot {
  return {
    id: 'a1b2c3d4-0000-4000-8000-000000000001',
    environmentId: 'Default-72f988bf-86f1-41af-91ab-2d7cd011db47',
    name: 'OTP demo',
    schemaName: 'cra65_otpdemo',
    tools,
    knowledgeHosts: [],
    ...over,
  };
}

/** A snapshot collected with `agents` and the tenant domain contoso.com. */
export function snapshot(agents: AgentSnapshot[] = [agent()], over: Partial<ProtectionSnapshot> = {}): ProtectionSnapshot {
  return {
    collectedAt: '2026-11-20T06:00:00Z',
    agents: new Map(agents.map((a) => [a.id, a])),
    tenantDomains: new Set(['contoso.com']),
    businessConnectors: new Map(),
    ...over,
  };
}

/** Detector context: `snapshot` and allow-lists. */
export function ctx(snap: ProtectionSnapshot = snapshot(), allow: Partial<AllowLists> = {}): DetectorContext {
  return { snapshot: snap, allow: { mcpServers: [], connectors: [], hosts: [], internalDomains: [], ...allow } };
}

/** A snapshot of a tenant never collected. */
export const empty = (): ProtectionSnapshot => ({ collectedAt: null, agents: new Map(), tenantDomains: new Set(), businessConnectors: new Map() });
