import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails agents with a connector or MCP tool whose connection runs with the maker's credentials (`mode: Maker`). */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components) => {
    const maker = components.filter((c) => (c.attrs.kind === 'action' || c.attrs.kind === 'mcp') && c.attrs.tool?.connectionMode === 'maker');
    if (maker.length === 0) return { status: 'pass', reason: null };
    const connectors = [...new Set(maker.map((c) => c.attrs.tool?.connectorId).filter((x): x is string => !!x))];
    return {
      status: 'fail',
      reason: `${maker.length} tool(s) run on the maker's connection${connectors.length ? ` (${connectors.join(', ')})` : ''}: every user acts with the maker's access.`,
      detail: { components: maker.map((c) => c.id), connectors },
    };
  });
