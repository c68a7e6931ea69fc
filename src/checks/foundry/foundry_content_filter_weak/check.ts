import { evaluateDeploymentPolicies, filterOf, HARM_CATEGORIES } from '../shared.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails deployments whose content filter does not block the harm categories (hate, sexual, violence, self-harm) at
 * Medium severity or stricter for both prompts and completions: a category filter that is disabled, only annotates
 * (`blocking` false), or filters High only (`severityThreshold` `High`). A filter a custom policy does not list takes
 * its built-in base policy's setting (Medium, blocking); with no known base it counts as not configured. Built-in
 * `Microsoft.Default` / `Microsoft.DefaultV2` pass. Not evaluated per {@link evaluateDeploymentPolicies}.
 * Sources: azure-rest-api-specs `ListRaiPolicies.json`; Microsoft Learn "Configure content filters" (thresholds).
 */
export const check: CheckFunction = (ctx) =>
  evaluateDeploymentPolicies(ctx, (policy) => {
    const weak: string[] = [];
    for (const source of ['Prompt', 'Completion'] as const) {
      for (const category of HARM_CATEGORIES) {
        const f = filterOf(policy, category, source);
        const where = `${category} (${source.toLowerCase()})`;
        if (!f) weak.push(`${where} not configured`);
        else if (f.enabled === false) weak.push(`${where} off`);
        else if (f.blocking === false) weak.push(`${where} annotate only`);
        else if ((f.severityThreshold ?? '').toLowerCase() === 'high') weak.push(`${where} high severity only`);
      }
    }
    const detail = { weak, mode: policy.listed?.mode ?? null };
    return weak.length === 0
      ? { status: 'pass', reason: `Content filter '${policy.name}' blocks the harm categories at medium severity or stricter.`, detail }
      : { status: 'fail', reason: `Content filter '${policy.name}' lets harmful content through: ${weak.join(', ')}.`, detail };
  });
