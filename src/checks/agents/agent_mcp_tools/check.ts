import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails agents with at least one active MCP tool component (kind `mcp`), naming the servers' hosts where known. */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components) => {
    const mcp = components.filter((c) => c.attrs.kind === 'mcp' && c.attrs.stateCode !== 1);
    if (mcp.length === 0) return { status: 'pass', reason: null };
    const hosts = [...new Set(mcp.map((c) => c.attrs.tool?.serverHost).filter((h): h is string => !!h))];
    return {
      status: 'fail',
      reason: `${mcp.length} MCP tool(s): ${mcp.map((c) => c.name ?? c.id).join(', ')}${hosts.length ? ` (servers: ${hosts.join(', ')})` : ''}.`,
      detail: { components: mcp.map((c) => c.id), hosts },
    };
  });
