import { describe, expect, it } from 'vitest';
import type { AgentComponentAttrs } from '../../src/sources/dataverse/streams/agentComponents.ts';
import type { AgentSettingsAttrs } from '../../src/sources/dataverse/streams/agentSettings.ts';
import { agentRow, checkContext, estateRow, resultFor, runCheck, sliceError, streamError } from '../support/checks.ts';

function component(id: string, botId: string, over: Partial<AgentComponentAttrs>) {
  return estateRow(
    'agentComponents',
    id,
    {
      botId,
      parentComponentId: null,
      schemaName: id,
      componentType: 9,
      yamlKind: null,
      kind: 'other',
      stateCode: 0,
      modifiedOn: null,
      dataUnparsed: false,
      ...over,
    },
    { sliceKey: 'env1' },
  );
}
const tool = (over: Partial<NonNullable<AgentComponentAttrs['tool']>> = {}): AgentComponentAttrs['tool'] => ({
  actionKind: 'InvokeConnectorTaskAction',
  connectionReference: 'cr_x.shared_office365.abc',
  connectorId: 'shared_office365',
  customConnector: false,
  connectionMode: 'user',
  operationId: 'SendEmailV2',
  serverHost: null,
  httpHosts: [],
  httpOrigins: [],
  ...over,
});
function settings(botId: string, over: Partial<AgentSettingsAttrs> = {}) {
  return estateRow(
    'agentSettings',
    botId,
    {
      botId,
      configurationParsed: true,
      generativeActionsEnabled: true,
      useModelKnowledge: false,
      fileAnalysisEnabled: false,
      contentModeration: 'High',
      agentConnectable: false,
      recognizer: null,
      channels: null,
      ...over,
    },
    { sliceKey: 'env1' },
  );
}
const agents = [agentRow({ id: 'a' }), agentRow({ id: 'b' })];
const componentsGap = [sliceError('agentComponents', 'env1', '0x80072560')];

describe('agent_mcp_tools', () => {
  it('passes agents without MCP tools', async () => {
    const r = await runCheck(
      'agent_mcp_tools',
      checkContext({ agents, estate: { agentComponents: [component('c1', 'a', { kind: 'action', tool: tool() })] } }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails the agent with an active MCP tool, naming its server', async () => {
    const r = await runCheck(
      'agent_mcp_tools',
      checkContext({
        agents,
        estate: {
          agentComponents: [
            component('c1', 'a', { kind: 'mcp', tool: tool({ serverHost: 'mcp.example.net' }) }),
            component('c2', 'b', { kind: 'mcp', stateCode: 1, tool: tool() }),
          ],
        },
      }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringContaining('mcp.example.net') });
    expect(resultFor(r, 'b')?.status).toBe('pass');
  });
  it('is not evaluated where components could not be read', async () => {
    const r = await runCheck('agent_mcp_tools', checkContext({ agents, checkpoints: componentsGap }));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'environment', status: 'not_evaluated' })]);
    const none = await runCheck('agent_mcp_tools', checkContext({ agents, checkpoints: [streamError('agentComponents', 'PARENT_STREAM_FAILED')] }));
    expect(none).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' })]);
  });
});

describe('agent_maker_credentials', () => {
  it("passes agents whose tools use the end user's credentials", async () => {
    const r = await runCheck(
      'agent_maker_credentials',
      checkContext({ agents, estate: { agentComponents: [component('c1', 'a', { kind: 'action', tool: tool() })] } }),
    );
    expect(resultFor(r, 'a')?.status).toBe('pass');
  });
  it("fails an agent with a tool on the maker's connection", async () => {
    const r = await runCheck(
      'agent_maker_credentials',
      checkContext({ agents, estate: { agentComponents: [component('c1', 'a', { kind: 'action', tool: tool({ connectionMode: 'maker' }) })] } }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringContaining('shared_office365') });
    expect(resultFor(r, 'b')?.status).toBe('pass');
  });
  it('is not evaluated where components could not be read', async () => {
    expect((await runCheck('agent_maker_credentials', checkContext({ agents, checkpoints: componentsGap })))[0]?.status).toBe('not_evaluated');
  });
});

describe('agent_hardcoded_credentials', () => {
  const instr = (containsSecret: boolean) => ({ kind: 'instructions' as const, instructions: { length: 400, containsSecret, webBrowsing: null } });
  it('passes agents whose inspected instructions hold no credential', async () => {
    const r = await runCheck('agent_hardcoded_credentials', checkContext({ agents, estate: { agentComponents: [component('c1', 'a', instr(false))] } }));
    expect(resultFor(r, 'a')?.status).toBe('pass');
  });
  it('fails an agent whose instructions hold a credential', async () => {
    const r = await runCheck('agent_hardcoded_credentials', checkContext({ agents, estate: { agentComponents: [component('c1', 'a', instr(true))] } }));
    expect(resultFor(r, 'a')?.status).toBe('fail');
  });
  it('is not evaluated when the instructions could not be parsed (not inspected)', async () => {
    const r = await runCheck(
      'agent_hardcoded_credentials',
      checkContext({ agents, estate: { agentComponents: [component('c1', 'a', { kind: 'instructions', dataUnparsed: true })] } }),
    );
    expect(resultFor(r, 'a')?.status).toBe('not_evaluated');
  });
});

describe('agent_generative_without_instructions', () => {
  it('passes a generative agent with instructions, and a classic one', async () => {
    const r = await runCheck(
      'agent_generative_without_instructions',
      checkContext({
        agents,
        estate: {
          agentSettings: [settings('a'), settings('b', { generativeActionsEnabled: false })],
          agentComponents: [component('c1', 'a', { kind: 'instructions', instructions: { length: 120, containsSecret: false, webBrowsing: null } })],
        },
      }),
    );
    expect(r.map((x) => x.status)).toEqual(['pass', 'pass']);
  });
  it('fails a generative agent without instructions (or with empty ones)', async () => {
    const r = await runCheck(
      'agent_generative_without_instructions',
      checkContext({
        agents,
        estate: {
          agentSettings: [settings('a'), settings('b')],
          agentComponents: [component('c1', 'b', { kind: 'instructions', instructions: { length: 0, containsSecret: false, webBrowsing: null } })],
        },
      }),
    );
    expect(r.map((x) => x.status)).toEqual(['fail', 'fail']);
  });
  it('is not evaluated when the configuration does not state the orchestration', async () => {
    const r = await runCheck(
      'agent_generative_without_instructions',
      checkContext({ agents, estate: { agentSettings: [settings('a', { generativeActionsEnabled: null })] } }),
    );
    expect(r.map((x) => x.status)).toEqual(['not_evaluated', 'not_evaluated']);
  });
});

describe('agent_public_website_knowledge', () => {
  const knowledge = (sourceType: 'publicWebsite' | 'sharePoint', host: string) => ({
    kind: 'knowledge' as const,
    knowledge: { sourceType, sourceKind: null, url: `https://${host}/`, host, connectionName: null },
  });
  it('passes agents grounded on SharePoint only', async () => {
    const r = await runCheck(
      'agent_public_website_knowledge',
      checkContext({ agents, estate: { agentComponents: [component('k1', 'a', knowledge('sharePoint', 'contoso.sharepoint.com'))] } }),
    );
    expect(resultFor(r, 'a')?.status).toBe('pass');
  });
  it('fails an agent grounded on a public website, naming the host', async () => {
    const r = await runCheck(
      'agent_public_website_knowledge',
      checkContext({ agents, estate: { agentComponents: [component('k1', 'a', knowledge('publicWebsite', 'www.example.org'))] } }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringContaining('www.example.org') });
  });
  it('is not evaluated where components could not be read', async () => {
    expect((await runCheck('agent_public_website_knowledge', checkContext({ agents, checkpoints: componentsGap })))[0]?.status).toBe('not_evaluated');
  });
});

describe('agent_insecure_http', () => {
  const topic = (origins: string[], dynamic = 0) => ({
    kind: 'topic' as const,
    topic: { triggerKind: 'OnRecognizedIntent', callsHttp: origins.length + dynamic > 0, httpHosts: [], httpOrigins: origins, dynamicHttpUrls: dynamic },
  });
  it('passes agents calling HTTPS on the standard port (and says what it could not judge)', async () => {
    const r = await runCheck(
      'agent_insecure_http',
      checkContext({ agents, estate: { agentComponents: [component('t1', 'a', topic(['https://api.contoso.com'], 1))] } }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'pass', reason: expect.stringContaining('1 HTTP request(s) use URLs built at run time') });
  });
  it('fails plain HTTP and non-standard ports, in topics and tools', async () => {
    const r = await runCheck(
      'agent_insecure_http',
      checkContext({
        agents,
        estate: {
          agentComponents: [
            component('t1', 'a', topic(['http://webhook.site'])),
            component('c1', 'b', { kind: 'action', tool: tool({ httpOrigins: ['https://erp.fabrikam.com:8443'] }) }),
          ],
        },
      }),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringContaining('http://webhook.site') });
    expect(resultFor(r, 'b')).toMatchObject({ status: 'fail', reason: expect.stringContaining(':8443') });
  });
  it('is not evaluated where components could not be read', async () => {
    expect((await runCheck('agent_insecure_http', checkContext({ agents, checkpoints: componentsGap })))[0]?.status).toBe('not_evaluated');
  });
});

describe('agent_sends_email', () => {
  const ctxWith = (...cs: ReturnType<typeof component>[]) =>
    checkContext({ agents, estate: { agentComponents: cs, agentSettings: [settings('a'), settings('b')] } });
  it('fails an agent with an Outlook send tool and passes one whose Outlook tool only reads', async () => {
    const r = await runCheck(
      'agent_sends_email',
      ctxWith(component('c1', 'a', { kind: 'action', tool: tool() }), component('c2', 'b', { kind: 'action', tool: tool({ operationId: 'GetEmailsV3' }) })),
    );
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', reason: expect.stringContaining('shared_office365/SendEmailV2') });
    expect(resultFor(r, 'b')?.status).toBe('pass');
  });
  it('fails an MCP sendMail tool and passes a SharePoint tool', async () => {
    const r = await runCheck(
      'agent_sends_email',
      ctxWith(
        component('c1', 'a', { kind: 'mcp', tool: tool({ connectorId: null, operationId: 'sendMail' }) }),
        component('c2', 'b', { kind: 'action', tool: tool({ connectorId: 'shared_sharepointonline', operationId: 'GetItems' }) }),
      ),
    );
    expect(resultFor(r, 'a')?.status).toBe('fail');
    expect(resultFor(r, 'b')?.status).toBe('pass');
  });
  it('is not evaluated when the components were not collected', async () => {
    const r = await runCheck('agent_sends_email', checkContext({ agents, checkpoints: [streamError('agentComponents')] }));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' })]);
  });
});
