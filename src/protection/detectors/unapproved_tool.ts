import type { Evidence, ProtectionDetector, Verdict } from '../types.ts';
import { classifyTool, inDomains, nothing, urlHostsIn } from './helpers.ts';

/**
 * Unapproved tool:
 * - an MCP tool (component `kind: 'mcp'`, or a type/name naming MCP) whose server host is not in `allow.mcpServers`
 *   (a listed domain covers its subdomains): 0.95 when the host is known and not allowed; when the host is unknown
 *   (the agent or tool is not in the inventory and the description names no URL) it counts too, at 0.7 — below the
 *   default block threshold 0.9, so an uncollected agent is alerted on rather than stopped;
 * - a connector tool whose `connectorId` (from the inventory) is not in `allow.connectors`, when that list is not
 *   empty: 0.95.
 * Connector ids compare case-insensitively. Sources: the agent's collected components (AgentToolSnapshot).
 */
export const detector: ProtectionDetector = {
  id: 'unapproved_tool',
  title: 'Unapproved tool',
  description:
    "Reports MCP tools whose server is not in the organization's allowed MCP servers, and connector tools whose connector is not in its allowed connectors (when it keeps such a list).",
  mappings: ['LLM03:2025 Supply Chain', 'LLM06:2025 Excessive Agency', 'AML.T0053 AI Agent Tool Invocation'],
  run(exec, ctx): Verdict {
    const cls = classifyTool(exec, ctx);
    const c = cls.component;
    const evidence: Evidence[] = [];
    const reasons: string[] = [];
    let confidence = 0;
    if (cls.channels.has('mcp')) {
      const host = c?.serverHost?.toLowerCase() || urlHostsIn(exec.tool.description.slice(0, 2048))[0] || null;
      if (!host) {
        confidence = 0.7;
        reasons.push('an MCP tool whose server is unknown');
        evidence.push({ field: 'toolDefinition.id', match: 'mcp-server-unknown', excerpt: exec.tool.id.slice(0, 160) });
      } else if (!inDomains(host, ctx.allow.mcpServers)) {
        confidence = 0.95;
        reasons.push(`MCP server ${host} is not allowed`);
        evidence.push({ field: 'toolDefinition.id', match: 'mcp-server-not-allowed', excerpt: host });
      }
    }
    const connector = c?.connectorId?.toLowerCase() ?? null;
    if (connector && ctx.allow.connectors.length > 0 && !ctx.allow.connectors.includes(connector)) {
      confidence = Math.max(confidence, 0.95);
      reasons.push(`connector ${connector} is not allowed`);
      evidence.push({ field: 'toolDefinition.id', match: 'connector-not-allowed', excerpt: connector });
    }
    if (confidence === 0) return nothing('unapproved_tool', 'The tool is approved (or no allow-list applies to it).');
    return { detector: 'unapproved_tool', detected: true, confidence, summary: `Unapproved tool: ${reasons.join('; ')}.`, evidence };
  },
};
