import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { VigilError } from '../core/errors.ts';
import type { Executor } from '../store/db.ts';
import { findIntegration } from '../store/repositories/integrations.ts';
import { listProtectionPolicies, upsertProtectionPolicy } from '../store/repositories/protection.ts';
import { protectionPolicyInputSchema, resolvePolicy } from './policy.ts';
import type { EffectivePolicy, ProtectionPolicy } from './types.ts';

/**
 * Reading and changing an organization's protection policies (issue 19: "policies as data per organization,
 * integration, environment and agent"). The CLI calls these; an API route calls the same ones.
 */

/** The editable fields of a policy, as validated by {@link protectionPolicyInputSchema}. */
type PolicyFields = z.infer<typeof protectionPolicyInputSchema>;

/** Where a policy applies: the integration's organization, optionally one environment and one agent of it. */
export interface PolicyTarget {
  integrationId: string;
  /** Power Platform environment id; null or absent = every environment. */
  environmentId?: string | null | undefined;
  /** Copilot Studio agent (bot) id; null or absent = every agent. */
  agentId?: string | null | undefined;
}

/** A policy as people see it: where it applies and the fields it sets. */
export interface ProtectionPolicyView {
  id: string;
  integrationId: string | null;
  environmentId: string | null;
  agentId: string | null;
  fields: PolicyFields;
  updatedBy: string | null;
  updatedAt: string;
}

async function organizationOf(db: Executor, integrationId: string): Promise<string> {
  const integration = await findIntegration(db, integrationId);
  if (!integration?.organization_id) throw new VigilError('INTEGRATION_NOT_FOUND', `No integration '${integrationId}'.`, { field: 'integration' });
  return integration.organization_id;
}

const norm = (s: string | null | undefined): string | null => (s ? s.trim().toLowerCase() : null);

/**
 * The detector settings after a change: per detector, the fields the change names replace the stored ones and the
 * others are kept (a new threshold keeps the stored action, and the other way round).
 */
function mergeDetectors(before: PolicyFields['detectors'], change: PolicyFields['detectors']): PolicyFields['detectors'] {
  const merged: NonNullable<PolicyFields['detectors']> = { ...before };
  for (const [id, setting] of Object.entries(change ?? {}) as [keyof NonNullable<PolicyFields['detectors']>, object][])
    merged[id] = { ...before?.[id], ...setting };
  return merged;
}

/**
 * Sets fields of the policy at `target` (creating it), keeping the fields it does not name; the result is validated
 * whole. `changes` is untrusted input (CLI flags or an API body).
 * @throws VigilError `invalid-input` naming the field (e.g. `detectors.jailbreak.threshold`) with the fix; `not-found`.
 */
export async function setProtectionPolicy(db: Executor, target: PolicyTarget, changes: unknown, updatedBy: string): Promise<ProtectionPolicyView> {
  const organizationId = await organizationOf(db, target.integrationId);
  const scope = { integration_id: target.integrationId, environment_id: norm(target.environmentId), agent_id: norm(target.agentId) };
  const parsed = protectionPolicyInputSchema.safeParse(changes);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'policy';
    throw new VigilError('INVALID_INPUT', `${field}: ${issue.message}.`, {
      field,
      remediation:
        'Modes are monitor or block; detector actions block, alert, record or off with a threshold from 0 to 1; deadlineMs 10–900; onTimeout allow or block; allow-lists hold host names or connector ids.',
    });
  }
  const existing = (await listProtectionPolicies(db, organizationId)).find(
    (r) => r.integration_id === scope.integration_id && r.environment_id === scope.environment_id && r.agent_id === scope.agent_id,
  );
  const before = existing ? (JSON.parse(existing.policy) as PolicyFields) : {};
  const merged: PolicyFields = {
    ...before,
    ...parsed.data,
    ...(before.detectors || parsed.data.detectors ? { detectors: mergeDetectors(before.detectors, parsed.data.detectors) } : {}),
    ...(before.allow || parsed.data.allow ? { allow: { ...before.allow, ...parsed.data.allow } } : {}),
  };
  const fields = protectionPolicyInputSchema.parse(merged);
  const at = new Date().toISOString();
  const id = await upsertProtectionPolicy(db, {
    id: `pp_${randomUUID().replaceAll('-', '')}`,
    organization_id: organizationId,
    ...scope,
    policy: JSON.stringify(fields),
    updated_by: updatedBy,
    updated_at: at,
  });
  return { id, integrationId: scope.integration_id, environmentId: scope.environment_id, agentId: scope.agent_id, fields, updatedBy, updatedAt: at };
}

/**
 * The policies of the integration's organization that apply to the integration (organization-wide ones included), and
 * the effective policy at `target` with the ids it came from.
 * @throws VigilError `not-found`.
 */
export async function protectionPolicies(db: Executor, target: PolicyTarget): Promise<{ policies: ProtectionPolicyView[]; effective: EffectivePolicy }> {
  const organizationId = await organizationOf(db, target.integrationId);
  const rows = (await listProtectionPolicies(db, organizationId)).filter((r) => r.integration_id === null || r.integration_id === target.integrationId);
  const views: ProtectionPolicyView[] = [];
  const policies: ProtectionPolicy[] = [];
  for (const r of rows) {
    const parsed = protectionPolicyInputSchema.safeParse(JSON.parse(r.policy));
    if (!parsed.success) continue;
    views.push({
      id: r.id,
      integrationId: r.integration_id,
      environmentId: r.environment_id,
      agentId: r.agent_id,
      fields: parsed.data,
      updatedBy: r.updated_by,
      updatedAt: r.updated_at,
    });
    policies.push({
      ...(parsed.data as Partial<ProtectionPolicy>),
      id: r.id,
      organizationId,
      integrationId: r.integration_id,
      environmentId: r.environment_id,
      agentId: r.agent_id,
    });
  }
  const effective = resolvePolicy(policies, {
    organizationId,
    integrationId: target.integrationId,
    environmentId: norm(target.environmentId),
    agentId: norm(target.agentId),
  });
  return { policies: views, effective };
}
