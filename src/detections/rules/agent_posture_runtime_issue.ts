import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf } from '../helpers.ts';
import type { Detection, DetectionHit } from '../types.ts';

/** A finding opened up to this long after the event still joins it (posture is evaluated after collection). */
const WINDOW_MS = 7 * 24 * 3_600_000;
/** Finding severities that make an issue. */
const SEVERE = new Set(['critical', 'high', 'medium']);
/** Most events an issue links (the oldest of the page). */
const MAX_EVENTS = 50;

/**
 * Cross-signal "issue": an agent with an open posture finding (medium or worse, not suppressed) that also has audited
 * activity — created, published, shared, re-authenticated, its components changed — becomes one alert joining both.
 * The finding must have been open at the event's time or have opened within 7 days after it. One issue per agent and
 * set of open findings: more activity on the same agent adds nothing; a new finding makes a new issue.
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_posture_runtime_issue',
    title: 'Agent with an open posture finding is being changed',
    severity: 'high',
    description:
      'A Copilot Studio agent that fails a posture check (no authentication, shared with everyone, public website knowledge, MCP tools, hard-coded credentials…) was created, changed, shared or published while the finding was open: the weakness is live and someone is working on the agent. The alert joins the findings and the agent events so they are triaged as one issue.',
    response:
      "Open the agent's findings and its recent events together; fix the finding (or suppress it with a reason) before the next publication, and confirm with the maker that the changes were intended.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/security-and-governance',
    ],
    frameworks: { 'owasp-llm-2025': ['LLM06: Excessive Agency'], 'mitre-atlas': ['AML.T0040: AI Model Inference API Access'] },
    peers: [],
    recordTypes: [RECORD_TYPES.PowerPlatformAdministratorActivity],
  },
  run: async (ctx) => {
    const byAgent = new Map<string, { ids: string[]; times: number[]; operations: Set<string>; label: string; detail: Record<string, unknown> }>();
    for (const e of ctx.events) {
      if (!/^Bot/i.test(e.operation ?? '')) continue;
      const agent = agentOf(e);
      const id = agent?.detail.agentId;
      if (!agent || !id) continue;
      const g = byAgent.get(id) ?? { ids: [], times: [], operations: new Set<string>(), label: agent.label, detail: agent.detail };
      byAgent.set(id, g);
      if (g.ids.length < MAX_EVENTS) g.ids.push(e.id);
      g.times.push(Date.parse(e.creationTime));
      g.operations.add(e.operation ?? '');
    }
    if (byAgent.size === 0) return [];
    const findings = (await ctx.openFindings([...byAgent.keys()])).filter((f) => f.resourceType === 'agent' && SEVERE.has(f.severity));
    const hits: DetectionHit[] = [];
    for (const [agentId, g] of byAgent) {
      const last = Math.max(...g.times);
      const first = Math.min(...g.times);
      const joined = findings.filter((f) => f.resourceId === agentId && Date.parse(f.firstSeenAt) <= last + WINDOW_MS);
      if (joined.length === 0) continue;
      const checks = [...new Set(joined.map((f) => f.checkId))].sort();
      hits.push({
        dedupeKey: `${agentId}|${joined
          .map((f) => f.findingId)
          .sort()
          .join(',')}`,
        title: `Agent ${g.label} (${checks.join(', ')}) was changed: ${[...g.operations].sort().join(', ')}`,
        eventIds: g.ids,
        detail: {
          agentId,
          agent: g.detail.agent,
          environmentId: g.detail.environmentId,
          user: g.detail.user,
          operations: [...g.operations].sort(),
          from: new Date(first).toISOString(),
          to: new Date(last).toISOString(),
          findings: joined.map((f) => ({ findingId: f.findingId, checkId: f.checkId, severity: f.severity, firstSeenAt: f.firstSeenAt })),
        },
      });
    }
    return hits;
  },
};
