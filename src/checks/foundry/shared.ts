import type { FoundryDeploymentAttrs } from '../../sources/arm/streams/foundryDeployments.ts';
import type { FoundryRaiPolicyAttrs, RaiContentFilter } from '../../sources/arm/streams/foundryRaiPolicies.ts';
import { streamsNotEvaluated, type Verdict } from '../helpers.ts';
import type { CheckContext, CheckResult, EstateRow } from '../types.ts';

/**
 * Helpers shared by the Azure AI Foundry content filter checks (`checks/foundry/*`). This file is not a check (the
 * loader only loads folders).
 */

/** The four harm categories of a content filter, as the API names them (compared lower-case, letters only). */
export const HARM_CATEGORIES = ['hate', 'sexual', 'violence', 'selfharm'] as const;

/**
 * What the built-in policies do, per Microsoft Learn "Content filtering" / "Default safety policies"
 * (azure/ai-foundry/openai/concepts/default-safety-policies): both filter the four harm categories at Medium and
 * block, for prompts and completions; `Microsoft.DefaultV2` adds Prompt Shields for jailbreak attacks and protected
 * material detection, `Microsoft.Default` (the older default) has no Prompt Shields.
 */
const BUILT_IN: Record<string, { promptShields: boolean }> = {
  'microsoft.defaultv2': { promptShields: true },
  'microsoft.default': { promptShields: false },
};

/**
 * Models that take no text prompt (embeddings, speech, images), where harm and jailbreak filtering of prompts does not
 * apply; Prowler's Prompt Shields check skips them the same way (by deployment capabilities).
 */
const NON_TEXT_MODEL = /embedding|whisper|tts|dall-e|gpt-image|sora/i;

/** A filter name reduced to lower-case letters (`Self-harm`, `Selfharm` → `selfharm`). */
const key = (name: string): string => name.toLowerCase().replace(/[^a-z]/g, '');

/** The policy a deployment names: a built-in one, a listed one of its account, or unknown. */
export interface ResolvedPolicy {
  name: string;
  /** The built-in policy's known behaviour when the name is `Microsoft.Default` / `Microsoft.DefaultV2`. */
  builtIn: { promptShields: boolean } | null;
  /** The account's listed policy of that name, when listed. */
  listed: FoundryRaiPolicyAttrs | null;
}

/**
 * The filter of `name` for `source` (`Prompt` / `Completion`) in a resolved policy: the listed policy's own entry, or —
 * when it has none — the entry its base policy implies (built-in base: harm categories Medium, blocking; Jailbreak as
 * the base has it). Null when nothing says how the filter is set.
 */
export function filterOf(policy: ResolvedPolicy, name: string, source: 'Prompt' | 'Completion'): RaiContentFilter | null {
  const own = policy.listed?.contentFilters.find((f) => key(f.name) === key(name) && (f.source ?? '').toLowerCase() === source.toLowerCase());
  if (own) return own;
  const base = policy.listed ? BUILT_IN[(policy.listed.basePolicyName ?? '').toLowerCase()] : policy.builtIn;
  if (!base) return null;
  if ((HARM_CATEGORIES as readonly string[]).includes(key(name))) return { name, source, enabled: true, blocking: true, severityThreshold: 'Medium' };
  if (key(name) === 'jailbreak' && source === 'Prompt')
    return { name, source, enabled: base.promptShields, blocking: base.promptShields, severityThreshold: null };
  return null;
}

/**
 * Evaluates every deployment that names a content filter (`raiPolicyName`; deployments naming none are
 * `foundry_deployment_without_content_filter`'s; embedding, speech and image models are left out) against the policy it names: the account's listed policy of that name
 * (stream `foundryRaiPolicies`, same account), else a built-in one. Not evaluated — never a pass — for the tenant when
 * the accounts, deployments or policies stream did not run; for a deployment whose account's policies could not be
 * read (errored slice), or whose custom policy is not among the listed ones.
 */
export function evaluateDeploymentPolicies(
  ctx: CheckContext,
  verdict: (policy: ResolvedPolicy, deployment: EstateRow<FoundryDeploymentAttrs>) => Verdict,
): CheckResult[] {
  const notEvaluated = streamsNotEvaluated(ctx, ['foundryAccounts', 'foundryDeployments', 'foundryRaiPolicies']);
  if (notEvaluated) return notEvaluated;
  const policies = ctx.inventory.estate('foundryRaiPolicies');
  const results: CheckResult[] = [];
  for (const d of ctx.inventory.estate('foundryDeployments')) {
    const name = d.attrs.raiPolicyName;
    if (!name || NON_TEXT_MODEL.test(d.attrs.modelName ?? '')) continue;
    const base = { resourceType: 'foundryDeployment' as const, resourceId: d.id, resourceName: d.name };
    const gap = ctx.coverage.sliceGap('foundryDeployments', d.attrs.accountId) ?? ctx.coverage.sliceGap('foundryRaiPolicies', d.attrs.accountId);
    const listed = policies.find((p) => p.sliceKey.toLowerCase() === d.attrs.accountId.toLowerCase() && (p.name ?? '').toLowerCase() === name.toLowerCase());
    const builtIn = BUILT_IN[name.toLowerCase()] ?? null;
    if (!listed && !builtIn) {
      results.push({
        ...base,
        status: 'not_evaluated',
        reason: gap
          ? `The account's content filters could not be read: ${gap.message}`
          : `The content filter '${name}' is not among the account's listed content filters.`,
        detail: { raiPolicyName: name, ...(gap ? { code: gap.code } : {}) },
      });
      continue;
    }
    const v = verdict({ name, builtIn, listed: listed?.attrs ?? null }, d);
    results.push({ ...base, ...v, detail: { ...(v.detail ?? {}), raiPolicyName: name, accountId: d.attrs.accountId } });
  }
  return results;
}
