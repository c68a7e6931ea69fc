import { describe, expect, it } from 'vitest';
import { detector } from '../../../../src/protection/detectors/unapproved_tool.ts';
import { parseToolExecution } from '../../../../src/protection/request.ts';
import { agent, ctx, exec, snapshot, tool } from '../fixtures.ts';

const mcpTool = tool({ schemaName: 'cra65_otpdemo.mcp.Tickets', kind: 'mcp', connectorId: null, serverHost: 'mcp.tickets.example' });
const mcpExec = () =>
  exec({ tool: { id: 'cra65_otpdemo.mcp.Tickets', type: 'ToolDefinition', name: 'create_ticket', description: 'Creates a ticket' }, inputs: {} });

describe('unapproved_tool', () => {
  it('detects an MCP tool whose server is not allowed, and passes an allowed one (subdomains included)', () => {
    const snap = snapshot([agent([mcpTool])]);
    const v = detector.run(mcpExec(), ctx(snap));
    expect(v).toMatchObject({ detector: 'unapproved_tool', detected: true, confidence: 0.95 });
    expect(v.evidence[0]).toMatchObject({ match: 'mcp-server-not-allowed', excerpt: 'mcp.tickets.example' });
    expect(detector.run(mcpExec(), ctx(snap, { mcpServers: ['tickets.example'] })).detected).toBe(false);
  });

  it('counts an MCP tool whose server is unknown, below the default block threshold', () => {
    const e = exec({ tool: { id: 'x.mcp.Thing', type: 'MCPToolDefinition', name: 'thing', description: '' }, inputs: {} });
    const v = detector.run(e, ctx(snapshot([])));
    expect(v).toMatchObject({ detected: true, confidence: 0.7 });
    expect(v.evidence[0]!.match).toBe('mcp-server-unknown');
  });

  it('detects a connector outside a non-empty connector allow-list only', () => {
    expect(detector.run(exec(), ctx(snapshot(), { connectors: ['shared_teams'] }))).toMatchObject({ detected: true, confidence: 0.95 });
    expect(detector.run(exec(), ctx(snapshot(), { connectors: ['shared_office365'] })).detected).toBe(false);
    expect(detector.run(exec(), ctx(snapshot())).detected).toBe(false); // no allow-list kept
  });

  it('empty and odd payloads: nothing detected, nothing thrown', () => {
    expect(detector.run(parseToolExecution({ toolDefinition: {} }), ctx()).detected).toBe(false);
    expect(detector.run(parseToolExecution({ toolDefinition: { id: null, type: {} }, conversationMetadata: { agent: 'x' } }), ctx()).detected).toBe(false);
  });
});
