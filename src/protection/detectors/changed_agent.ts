import type { ProtectionDetector, Verdict } from '../types.ts';
import { nothing } from './helpers.ts';

/**
 * Changed agent: the tool about to run is not one the agent had when Vigil last collected it — a component added
 * since (an agent changed outside review), or a tool injected by other means.
 * - Never collected (`snapshot.collectedAt` null) or no agent id in the request → not evaluated (no inventory).
 * - Agent collected: a tool id that is not among its tools' schema names (case-insensitive) → 0.95; for a
 *   `PrebuiltToolDefinition` (built-in tools are not agent components) 0.5.
 * - Agent unknown to a collected inventory: 0.6 when other agents of its environment were collected (a new agent),
 *   0.4 when none were (its environment may not be collected).
 */
export const detector: ProtectionDetector = {
  id: 'changed_agent',
  title: 'Agent changed since last collection',
  description:
    'Reports a tool the agent did not have when Vigil last collected its inventory, or an agent the collected inventory does not know: the agent changed outside review since.',
  mappings: ['LLM06:2025 Excessive Agency', 'LLM03:2025 Supply Chain', 'AML.T0053 AI Agent Tool Invocation'],
  run(exec, ctx): Verdict {
    const { snapshot } = ctx;
    if (!snapshot.collectedAt) return nothing('changed_agent', 'Not evaluated: no inventory has been collected.');
    const agentId = exec.meta.agentId.toLowerCase();
    if (!agentId) return nothing('changed_agent', 'Not evaluated: the request names no agent.');
    const agent = snapshot.agents.get(agentId);
    if (!agent) {
      const env = exec.meta.environmentId.toLowerCase();
      let envCollected = false;
      for (const a of snapshot.agents.values()) {
        if (a.environmentId.toLowerCase() === env) {
          envCollected = true;
          break;
        }
      }
      return {
        detector: 'changed_agent',
        detected: true,
        confidence: envCollected ? 0.6 : 0.4,
        summary: `The agent was not in the inventory collected at ${snapshot.collectedAt}${envCollected ? '' : ' (nor any agent of its environment)'}.`,
        evidence: [{ field: 'conversationMetadata.agent.id', match: 'agent-not-collected', excerpt: agentId.slice(0, 160) }],
      };
    }
    const toolId = exec.tool.id.toLowerCase();
    if (!toolId) return nothing('changed_agent', 'Not evaluated: the request names no tool id.');
    if (agent.tools.some((t) => t.schemaName.toLowerCase() === toolId))
      return nothing('changed_agent', 'The tool was among the agent’s tools at the last collection.');
    const prebuilt = /prebuilt/i.test(exec.tool.type);
    return {
      detector: 'changed_agent',
      detected: true,
      confidence: prebuilt ? 0.5 : 0.95,
      summary: `The agent did not have this tool when collected at ${snapshot.collectedAt}.`,
      evidence: [{ field: 'toolDefinition.id', match: 'tool-not-collected', excerpt: exec.tool.id.slice(0, 160) }],
    };
  },
};
