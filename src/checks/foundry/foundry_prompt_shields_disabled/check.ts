import { evaluateDeploymentPolicies, filterOf } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails deployments whose content filter does not block jailbreak attacks in prompts (Prompt Shields, filter
 * `Jailbreak`, source `Prompt`): off, annotate-only, or not configured (the older built-in `Microsoft.Default` has no
 * Prompt Shields; `Microsoft.DefaultV2` has them). Indirect (document) attacks are reported in the detail. Not
 * evaluated per {@link evaluateDeploymentPolicies}.
 * Sources: azure-rest-api-specs `ListRaiPolicies.json` (`Jailbreak`, `Indirect Attack` filters); Microsoft Learn
 * "Prompt Shields" (azure/ai-services/content-safety/concepts/jailbreak-detection).
 */
export const check: CheckFunction = (ctx) =>
  evaluateDeploymentPolicies(ctx, (policy) => {
    const f = filterOf(policy, 'Jailbreak', 'Prompt');
    const indirect = filterOf(policy, 'Indirect Attack', 'Prompt');
    const detail = { jailbreak: f, indirectAttackBlocked: indirect ? indirect.enabled === true && indirect.blocking === true : null };
    if (!f) return { status: 'fail', reason: `Content filter '${policy.name}' does not configure Prompt Shields for jailbreak attacks.`, detail };
    if (f.enabled !== true) return { status: 'fail', reason: `Content filter '${policy.name}' has Prompt Shields for jailbreak attacks off.`, detail };
    if (f.blocking !== true)
      return { status: 'fail', reason: `Content filter '${policy.name}' only annotates jailbreak attempts: they reach the model.`, detail };
    return { status: 'pass', reason: `Content filter '${policy.name}' blocks jailbreak attempts (Prompt Shields).`, detail };
  });
