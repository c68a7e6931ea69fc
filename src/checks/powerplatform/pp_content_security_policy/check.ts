import { streamsNotEvaluated } from '../../helpers.ts';
import type { CheckFunction, CheckResult } from '../../types.ts';

/**
 * ScubaGear MS.POWERPLATFORM.4.1: the content security policy is enforced for model-driven and canvas apps, per
 * environment with Dataverse (CSP applies only there). Reads the `environmentSettings` object of each such
 * environment (Dataverse `organization` columns `iscontentsecuritypolicyenabled` and
 * `iscontentsecuritypolicyenabledforcanvas`). Passes when both are true; fails when either is false (the reason names
 * which; reporting-only does not count as enforcement). Not evaluated: the tenant when the `environments` or
 * `environmentSettings` stream did not run; an environment whose Dataverse could not be read (errored slice), whose
 * settings object is missing, or whose columns came back null. Environments without Dataverse are left out.
 * Source: Microsoft Learn "Content security policy" (power-platform/admin/content-security-policy).
 */
export const check: CheckFunction = (ctx) => {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments', 'environmentSettings']);
  if (notEvaluated) return notEvaluated;
  const settings = new Map(ctx.inventory.estate('environmentSettings').map((r) => [r.id, r.attrs]));
  const results: CheckResult[] = [];
  for (const env of ctx.inventory.environments) {
    if (!env.dataverse_url) continue;
    const base = { resourceType: 'environment' as const, resourceId: env.id, resourceName: env.display_name };
    const sliceGap = ctx.coverage.sliceGap('environmentSettings', env.id);
    const s = settings.get(env.id);
    if (sliceGap) {
      results.push({
        ...base,
        status: 'not_evaluated',
        reason: `The environment's Dataverse settings could not be read: ${sliceGap.message}`,
        detail: { code: sliceGap.code },
      });
      continue;
    }
    if (!s || s.cspEnforcedModelDriven === null || s.cspEnforcedCanvas === null) {
      results.push({ ...base, status: 'not_evaluated', reason: "The environment's content security policy settings were not returned." });
      continue;
    }
    const missing = [s.cspEnforcedModelDriven ? null : 'model-driven', s.cspEnforcedCanvas ? null : 'canvas'].filter((x): x is string => x !== null);
    const detail = { modelDriven: s.cspEnforcedModelDriven, canvas: s.cspEnforcedCanvas, reporting: !!s.cspReportUri };
    results.push(
      missing.length === 0
        ? { ...base, status: 'pass', reason: 'The content security policy is enforced for model-driven and canvas apps.', detail }
        : {
            ...base,
            status: 'fail',
            reason: `The content security policy is not enforced for ${missing.join(' and ')} apps${s.cspReportUri ? ' (violations are only reported)' : ''}.`,
            detail,
          },
    );
  }
  return results;
};
