import { RECORD_TYPES } from '../../core/audit.ts';
import { agentOf } from '../helpers.ts';
import type { Detection, DetectionHit, OpenFinding } from '../types.ts';

/** A finding opened up to this long after the event still joins it (posture is evaluated after collection). */
const WINDOW_MS = 7 * 24 * 3_600_000;
/** Finding severities that make an issue. */
const SEVERE = new Set(['critical', 'high', 'medium']);
/** Most events an issue links (the oldest of the page). */
const MAX_EVENTS = 50;

/**
 * The dedupe key of an issue, shared by both sides (audited activity here, runtime protection in
 * protection/service.ts): the agent's id as its findings name it (`resource_id`, the botid) and the sorted ids of the
 * open findings joined. The same agent and findings are one alert whichever side saw them first.
 */
function issueDedupeKey(agentId: string, findingIds: string[]): string {
  return `${agentId}|${[...findingIds].sort().join(',')}`;
}

/** True when a finding makes an issue: on an agent, medium or worse (callers pass open, unsuppressed findings only). */
export function joinsIssue(f: Pick<OpenFinding, 'resourceType' | 'severity'>): boolean {
  return f.resourceType === 'agent' && SEVERE.has(f.severity);
}

/** One runtime-protection step that raised a detection on an agent (no content: ids, detector, decision only). */
export interface RuntimeIssueStep {
  stepId: string;
  /** The detector that fired, e.g. `prompt_injection`. */
  detector: string;
  /** `blocked`, `would have been blocked (monitor mode)` or `detected`. */
  decision: string;
  conversationId: string;
}

/**
 * The runtime side of the issue: an agent whose tool execution made runtime protection raise a detection, joined with
 * its open findings (already filtered with {@link joinsIssue}). Null when there is no finding to join. The alert has no
 * audit events; its detail names the findings and the protection steps.
 */
export function runtimeIssueHit(
  agent: { id: string; name: string | null; environmentId: string | null },
  findings: OpenFinding[],
  steps: RuntimeIssueStep[],
  at: string,
): DetectionHit | null {
  if (findings.length === 0) return null;
  const checks = [...new Set(findings.map((f) => f.checkId))].sort();
  const detectors = [...new Set(steps.map((s) => `${s.detector.replaceAll('_', ' ')} ${s.decision}`))].sort();
  return {
    dedupeKey: issueDedupeKey(
      agent.id,
      findings.map((f) => f.findingId),
    ),
    title: `Agent ${agent.name || agent.id} (${checks.join(', ')}) at run time: ${detectors.join(', ')}`,
    eventIds: [],
    detail: {
      agentId: agent.id,
      agent: agent.name,
      environmentId: agent.environmentId,
      operations: [],
      from: at,
      to: at,
      findings: findings.map((f) => ({ findingId: f.findingId, checkId: f.checkId, severity: f.severity, firstSeenAt: f.firstSeenAt })),
      protectionSteps: steps,
    },
  };
}

/**
 * Cross-signal "issue": an agent with an open posture finding (medium or worse, not suppressed) that also has runtime
 * or audited activity becomes one alert joining both. Two sides raise it under this one rule id:
 * - audit (this detection): Copilot Studio records on the agent — created, published, shared, re-authenticated, its
 *   components changed. The finding must have been open at the event's time or have opened within 7 days after it.
 * - runtime protection (protection/service.ts, with {@link runtimeIssueHit}): a detector fired (blocked, or recorded in
 *   monitor mode) on one of the agent's tool executions while the finding is open.
 * One issue per agent and set of open findings ({@link issueDedupeKey}), whichever side sees it first: more activity on
 * the same agent adds nothing; a new finding makes a new issue.
 */
export const detection: Detection = {
  metadata: {
    id: 'agent_posture_runtime_issue',
    title: 'Agent with an open posture finding is being changed or attacked',
    severity: 'high',
    description:
      'A Copilot Studio agent that fails a posture check (no authentication, shared with everyone, public website knowledge, MCP tools, hard-coded credentials…) was created, changed, shared or published while the finding was open (audit side), or runtime protection detected an attack on one of its tool executions — blocked, or recorded in monitor mode — while the finding was open (runtime side): the weakness is live and someone is working on or against the agent. The alert joins the findings with the agent events and the protection steps so they are triaged as one issue; the audit and runtime sides raise one alert per agent and set of open findings.',
    response:
      "Open the agent's findings, its recent events and its protection steps together; fix the finding (or suppress it with a reason) before the next publication, confirm with the maker that the changes were intended, and quarantine the agent if the runtime detection shows it is being exploited.",
    references: [
      'https://learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio',
      'https://learn.microsoft.com/microsoft-copilot-studio/security-and-governance',
      'https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider',
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
    const findings = (await ctx.openFindings([...byAgent.keys()])).filter(joinsIssue);
    const hits: DetectionHit[] = [];
    for (const [agentId, g] of byAgent) {
      const last = Math.max(...g.times);
      const first = Math.min(...g.times);
      const joined = findings.filter((f) => f.resourceId === agentId && Date.parse(f.firstSeenAt) <= last + WINDOW_MS);
      if (joined.length === 0) continue;
      const checks = [...new Set(joined.map((f) => f.checkId))].sort();
      hits.push({
        dedupeKey: issueDedupeKey(
          agentId,
          joined.map((f) => f.findingId),
        ),
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
