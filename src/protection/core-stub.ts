import { z } from 'zod';
import type { DetectorId, Decision, EffectivePolicy, ProtectionPolicy, ProtectionSnapshot, ToolExecution, Verdict } from './types.ts';

/**
 * TEMPORARY stand-ins (issue 19) for protection/request.ts, protection/policy.ts and protection/engine.ts, which another
 * helper writes in parallel: the same signatures, the least behaviour the wire's tests need. Imported only through
 * ./core.ts; the merge deletes this file and points core.ts at the real modules.
 */

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** Stand-in of request.ts `parseToolExecution`: throws Error on a body that is not an object with `toolDefinition`. */
export function parseToolExecution(body: unknown): ToolExecution {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('The body is not a JSON object.');
  const b = obj(body);
  if (!b.toolDefinition || typeof b.toolDefinition !== 'object') throw new Error('toolDefinition is missing.');
  const pc = obj(b.plannerContext);
  const td = obj(b.toolDefinition);
  const cm = obj(b.conversationMetadata);
  const agent = obj(cm.agent);
  const user = obj(cm.user);
  return {
    userMessage: str(pc.userMessage),
    thought: str(pc.thought),
    chatHistory: [],
    previousOutputs: [],
    tool: { id: str(td.id), type: str(td.type), name: str(td.name), description: str(td.description), inputParameters: [], outputParameters: [] },
    inputs: obj(b.inputValues),
    meta: {
      agentId: str(agent.id),
      agentName: str(agent.name),
      agentVersion: str(agent.version),
      agentPublished: typeof agent.isPublished === 'boolean' ? agent.isPublished : null,
      tenantId: str(agent.tenantId),
      environmentId: str(agent.environmentId),
      userId: str(user.id),
      userTenantId: str(user.tenantId),
      triggerId: '',
      triggerSchemaName: '',
      conversationId: str(cm.conversationId),
      messageId: str(cm.messageId),
      channelId: str(cm.channelId),
      planId: str(cm.planId),
      planStepId: str(cm.planStepId),
      parentAgentComponentId: str(cm.parentAgentComponentId),
      incomingClientIp: str(cm.incomingClientIp),
    },
    truncated: false,
  };
}

const DETECTORS: DetectorId[] = ['prompt_injection', 'jailbreak', 'sensitive_data_egress', 'external_recipient', 'unapproved_tool', 'changed_agent'];

/** Stand-in of policy.ts `protectionPolicyInputSchema`: the editable fields of a policy. */
export const protectionPolicyInputSchema = z.object({
  mode: z.enum(['monitor', 'block']).optional(),
  detectors: z
    .record(z.string(), z.object({ action: z.enum(['block', 'alert', 'record', 'off']).optional(), threshold: z.number().min(0).max(1).optional() }))
    .optional(),
  allow: z.record(z.string(), z.array(z.string())).optional(),
  deadlineMs: z.number().int().positive().optional(),
  onTimeout: z.enum(['allow', 'block']).optional(),
});

/** Stand-in of policy.ts `resolvePolicy`: most specific matching policy first, fields filled from less specific ones. */
export function resolvePolicy(
  policies: readonly ProtectionPolicy[],
  scope: { integrationId: string; environmentId: string; agentId: string },
): EffectivePolicy {
  const rank = (p: ProtectionPolicy) => (p.agentId ? 3 : p.environmentId ? 2 : p.integrationId ? 1 : 0);
  const matching = policies
    .filter(
      (p) =>
        (!p.integrationId || p.integrationId === scope.integrationId) &&
        (!p.environmentId || p.environmentId === scope.environmentId) &&
        (!p.agentId || p.agentId.toLowerCase() === scope.agentId.toLowerCase()),
    )
    .sort((a, b) => rank(b) - rank(a));
  const pick = <K extends 'mode' | 'deadlineMs' | 'onTimeout'>(k: K) => matching.find((p) => p[k] !== undefined)?.[k];
  const detectors = Object.fromEntries(
    DETECTORS.map((d) => {
      const set = matching.map((p) => p.detectors?.[d]).filter((x) => x !== undefined);
      return [d, { action: set.find((s) => s.action)?.action ?? 'block', threshold: set.find((s) => s.threshold !== undefined)?.threshold ?? 0.7 }];
    }),
  ) as EffectivePolicy['detectors'];
  return {
    mode: pick('mode') ?? 'monitor',
    detectors,
    allow: { mcpServers: [], connectors: [], hosts: [], internalDomains: [] },
    deadlineMs: pick('deadlineMs') ?? 400,
    onTimeout: pick('onTimeout') ?? 'allow',
    policyIds: matching.map((p) => p.id),
  };
}

/** Stand-in of engine.ts `decide`: one prompt-injection pattern over the user message, thought and inputs. */
export function decide(exec: ToolExecution, ctx: { snapshot: ProtectionSnapshot; policy: EffectivePolicy }): Decision {
  const started = performance.now();
  const text = [exec.userMessage, exec.thought, JSON.stringify(exec.inputs)].join('\n');
  const hit = /ignore (all )?previous instructions/i.test(text);
  const verdict: Verdict = {
    detector: 'prompt_injection',
    detected: hit,
    confidence: hit ? 0.9 : 0,
    summary: hit ? 'An instruction to ignore previous instructions.' : 'Nothing seen.',
    evidence: hit ? [{ field: 'plannerContext.userMessage', match: 'ignore-previous-instructions', excerpt: 'ignore previous instructions' }] : [],
  };
  const setting = ctx.policy.detectors.prompt_injection;
  const blocks = hit && setting.action === 'block' && verdict.confidence >= setting.threshold;
  const blockAction = blocks && ctx.policy.mode === 'block';
  return {
    blockAction,
    wouldBlock: blocks && ctx.policy.mode === 'monitor',
    reasonCode: blocks ? 101 : 0,
    reason: blocks ? `prompt_injection (policy ${ctx.policy.policyIds[0] ?? 'default'})` : 'allowed',
    decidedBy: blocks ? 'prompt_injection' : null,
    verdicts: [verdict],
    policyIds: ctx.policy.policyIds,
    mode: ctx.policy.mode,
    timedOut: false,
    skipped: [],
    elapsedMs: performance.now() - started,
  };
}
